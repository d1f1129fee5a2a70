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
    /// Whether the application's items are served to it on the Secret Service too
    /// (`Application.usesSecretService`); absent means no.
    public var usesSecretService: Bool?
    /// A development build, identified by its path (`Application.isDevelopmentBuild`); absent
    /// means no.
    public var isDevelopmentBuild: Bool?

    public init(
        applicationID: String, teamID: String, executablePath: String, accessGroups: [String], passcode: String?,
        usesSecretService: Bool? = nil, isDevelopmentBuild: Bool? = nil
    ) {
        self.applicationID = applicationID
        self.teamID = teamID
        self.executablePath = executablePath
        self.accessGroups = accessGroups
        self.passcode = passcode
        self.usesSecretService = usesSecretService
        self.isDevelopmentBuild = isDevelopmentBuild
    }
}

/// `POST /v1/apps/remove`: unregister an application (its items stay). The passcode again,
/// as registering needs: without it any process of the user could take an application's
/// identity away.
public struct RemoveApplicationRequest: Codable, Sendable {
    public var applicationID: String
    public var passcode: String?

    public init(applicationID: String, passcode: String?) {
        self.applicationID = applicationID
        self.passcode = passcode
    }
}

/// `GET /v1/apps`.
public struct ApplicationsResponse: Codable, Sendable {
    public var applications: [Application]
    public init(applications: [Application]) { self.applications = applications }
}
