import FoundationEssentials

/// A registered executable (docs/API.md, "Applications"): its identity is the SHA-256 of its file,
/// its rights an application id, a team id and the access groups it may use.
public struct Application: Codable, Equatable, Sendable {
    public var applicationID: String
    public var teamID: String
    /// Shared groups, each prefixed with the team id (`TEAM.shared`).
    public var accessGroups: [String]
    public var executableSHA256: Data
    /// Where the executable was when it was registered (informational: identity is the hash).
    public var executablePath: String
    public var registeredAt: Date
    /// Whether the application's items are served to it on the Secret Service (D-Bus) too. Off
    /// unless asked for at registration: D-Bus carries no per-message credentials, so a process
    /// of the same user can borrow a bus identity in ways the socket API refuses
    /// (docs/SECURITY.md, "Borrowed bus connections").
    public var usesSecretService: Bool
    /// A build under development (`tresor app register --development`): identified by its
    /// path — whatever file is there when it connects — instead of its content, so a rebuild
    /// keeps its items. Weaker: any program that can write the file gets the application's
    /// items. For the socket API only, never the Secret Service (docs/API.md, "Applications").
    public var isDevelopmentBuild: Bool

    public init(
        applicationID: String, teamID: String, accessGroups: [String], executableSHA256: Data, executablePath: String,
        registeredAt: Date = Date(), usesSecretService: Bool = false, isDevelopmentBuild: Bool = false
    ) {
        self.applicationID = applicationID
        self.teamID = teamID
        self.accessGroups = accessGroups
        self.executableSHA256 = executableSHA256
        self.executablePath = executablePath
        self.registeredAt = registeredAt
        self.usesSecretService = usesSecretService
        self.isDevelopmentBuild = isDevelopmentBuild
    }

    private enum CodingKeys: String, CodingKey {
        case applicationID, teamID, accessGroups, executableSHA256, executablePath, registeredAt, usesSecretService, isDevelopmentBuild
    }

    /// Registrations kept before ``usesSecretService`` or ``isDevelopmentBuild`` existed read as
    /// neither.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        applicationID = try container.decode(String.self, forKey: .applicationID)
        teamID = try container.decode(String.self, forKey: .teamID)
        accessGroups = try container.decode([String].self, forKey: .accessGroups)
        executableSHA256 = try container.decode(Data.self, forKey: .executableSHA256)
        executablePath = try container.decode(String.self, forKey: .executablePath)
        registeredAt = try container.decode(Date.self, forKey: .registeredAt)
        usesSecretService = try container.decodeIfPresent(Bool.self, forKey: .usesSecretService) ?? false
        isDevelopmentBuild = try container.decodeIfPresent(Bool.self, forKey: .isDevelopmentBuild) ?? false
    }

    /// Every group the application may use: its own application id first (the default for
    /// new items), then its team's groups.
    public var allowedGroups: [String] { [applicationID] + accessGroups }
}
