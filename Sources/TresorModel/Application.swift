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

    public init(applicationID: String, teamID: String, accessGroups: [String], executableSHA256: Data, executablePath: String, registeredAt: Date = Date()) {
        self.applicationID = applicationID
        self.teamID = teamID
        self.accessGroups = accessGroups
        self.executableSHA256 = executableSHA256
        self.executablePath = executablePath
        self.registeredAt = registeredAt
    }

    /// Every group the application may use: its own application id first (the default for
    /// new items), then its team's groups.
    public var allowedGroups: [String] { [applicationID] + accessGroups }
}
