import Foundation
import GRDB
import Synchronization

/// A registered executable (SPEC §3.5): its identity is the SHA-256 of its file, its rights an
/// application id, a team id and the access groups it may use.
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

    /// Checks names and the team-prefix rule: a group must start with `teamID.`, so items
    /// are shared only between applications of one team.
    public func validate() throws {
        let name = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
        guard applicationID.wholeMatch(of: name) != nil else {
            throw KeychainError.param("application id must be 1 to 128 letters, digits, '.', '_' or '-'")
        }
        guard teamID.wholeMatch(of: /^[A-Za-z0-9]{1,32}$/) != nil else {
            throw KeychainError.param("team id must be 1 to 32 letters or digits")
        }
        // The application id is a group too: it must be the team's, or an application could
        // name itself after another team's group (or the CLI's) and read its items.
        guard applicationID.hasPrefix(teamID + "."), applicationID.count > teamID.count + 1 else {
            throw KeychainError.param("application id \(applicationID) must start with the team id (\(teamID).…)")
        }
        for group in accessGroups {
            guard group.hasPrefix(teamID + "."), group.count > teamID.count + 1, group.wholeMatch(of: name) != nil else {
                throw KeychainError.param("access group \(group) must start with the team id (\(teamID).…)")
            }
        }
        guard executableSHA256.count == 32 else { throw KeychainError.param("executable hash must be 32 bytes") }
    }
}

/// The registry of applications of a home, kept in the login keychain's database.
public final class ApplicationRegistry: Sendable {
    private let database: DatabasePool
    private let cache = Mutex<[Data: Application]?>(nil)

    init(database: DatabasePool) {
        self.database = database
    }

    /// Registers an application. An executable or application id registered already is a
    /// ``KeychainError/duplicateItem``.
    public func register(_ application: Application) throws {
        try application.validate()
        do {
            try database.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO applications (executable_sha256, application_id, team_id, access_groups, executable_path, registered_at)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        application.executableSHA256, application.applicationID, application.teamID,
                        String(decoding: try JSONEncoder().encode(application.accessGroups), as: UTF8.self),
                        application.executablePath, application.registeredAt.timeIntervalSince1970,
                    ])
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw KeychainError.duplicateItem
        }
        cache.withLock { $0 = nil }
    }

    /// The application whose executable has this hash, if registered.
    public func application(executableSHA256 hash: Data) throws -> Application? {
        if let cached = cache.withLock({ $0 }) { return cached[hash] }
        let all = try list()
        let byHash = Dictionary(all.map { ($0.executableSHA256, $0) }, uniquingKeysWith: { first, _ in first })
        cache.withLock { $0 = byHash }
        return byHash[hash]
    }

    public func list() throws -> [Application] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM applications ORDER BY application_id").map { row in
                Application(
                    applicationID: row["application_id"], teamID: row["team_id"],
                    accessGroups: (try? JSONDecoder().decode([String].self, from: Data((row["access_groups"] as String).utf8))) ?? [],
                    executableSHA256: row["executable_sha256"], executablePath: row["executable_path"],
                    registeredAt: Date(timeIntervalSince1970: row["registered_at"]))
            }
        }
    }

    /// Removes an application. Its items stay; no executable can reach them until an
    /// application with their groups is registered again.
    public func remove(applicationID: String) throws {
        let removed = try database.write { db in
            try db.execute(sql: "DELETE FROM applications WHERE application_id = ?", arguments: [applicationID])
            return db.changesCount
        }
        cache.withLock { $0 = nil }
        guard removed > 0 else { throw KeychainError.itemNotFound }
    }
}
