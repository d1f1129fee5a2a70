import FoundationEssentials
import TresorModel

/// `POST /v1/apps`: register an executable (only the `tresor` CLI may, with the keybag
/// unlocked and the passcode entered again — docs/API.md, "Applications").
public struct RegisterApplicationRequest: Codable, Sendable {
    public var applicationID: String
    public var teamID: String
    /// The daemon hashes this file itself.
    public var executablePath: String
    public var accessGroups: [String]
    public var passcode: String?

    public init(applicationID: String, teamID: String, executablePath: String, accessGroups: [String], passcode: String?) {
        self.applicationID = applicationID
        self.teamID = teamID
        self.executablePath = executablePath
        self.accessGroups = accessGroups
        self.passcode = passcode
    }
}

/// `GET /v1/apps`.
public struct ApplicationsResponse: Codable, Sendable {
    public var applications: [Application]
    public init(applications: [Application]) { self.applications = applications }
}
