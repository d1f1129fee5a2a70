import FoundationEssentials
import TresorModel

/// `POST /v1/apps`: register an executable (only the `tresor` CLI may, with the keybag
/// unlocked and the passcode entered again — docs/API.md, "Applications").
public struct RegisterApplicationRequest: Codable, Sendable {
    /// The application's id and own access group: 1 to 128 letters, digits, `.`, `_`, `-`,
    /// starting with a letter or digit; give it the team prefix (`TEAM1.py`). The same id again
    /// replaces its registration.
    public var applicationID: String
    /// The team: 1 to 32 letters or digits.
    public var teamID: String
    /// The executable file, which the daemon opens and hashes itself: the file the kernel runs
    /// (not a wrapper script).
    public var executablePath: String
    /// The shared groups it may use besides its id, each starting with `teamID` and a dot
    /// (`TEAM1.shared`); may be empty.
    public var accessGroups: [String]
    /// The passcode again: required when one is set (counted when wrong), ignored when none is.
    public var passcode: String?
    /// Whether the application's items are served to it on the Secret Service too
    /// (`Application.usesSecretService`); absent means no.
    public var usesSecretService: Bool?
    /// A development build, identified by its path (`Application.isDevelopmentBuild`); absent
    /// means no. Never together with `usesSecretService`.
    public var isDevelopmentBuild: Bool?

    /// Makes a register request; the parameters are the properties of the same names.
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
    /// The application to remove (`404 itemNotFound` when none has this id).
    public var applicationID: String
    /// The passcode again: required when one is set (counted when wrong), ignored when none is.
    public var passcode: String?

    /// Makes a remove request; the parameters are the properties of the same names.
    public init(applicationID: String, passcode: String?) {
        self.applicationID = applicationID
        self.passcode = passcode
    }
}

/// `GET /v1/apps`.
public struct ApplicationsResponse: Codable, Sendable {
    /// The registered applications, by application id.
    public var applications: [Application]
    /// Makes the answer; the parameter is the property of the same name.
    public init(applications: [Application]) { self.applications = applications }
}
