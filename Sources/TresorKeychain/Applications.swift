import Crypto
import Foundation
import GRDB
import Synchronization
import TresorCrypto
import TresorKeybag
import TresorStorage

extension Application {
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
        if isDevelopmentBuild && usesSecretService {
            throw KeychainError.param(
                "a development build is identified by its path, which D-Bus cannot vouch for: it is never served on the Secret Service")
        }
    }
}

/// The registry of applications of a home, kept in the login keychain's database.
///
/// Each row is sealed (AES-256-GCM) under a registry key derived from the
/// `afterFirstUnlockThisDeviceOnly` class key, and found through HMAC blind indexes of the
/// application id and the executable hash. So a process of the same user that writes the
/// database cannot register itself without the passcode, and a copy of the home does not
/// say which applications exist. The price: applications are recognised only after the first
/// unlock following a daemon start.
public final class ApplicationRegistry: Sendable {
    private let database: DatabasePool
    private let keybag: Keybag
    private let cache = Mutex<[Data: Application]?>(nil)

    init(database: DatabasePool, keybag: Keybag) {
        self.database = database
        self.keybag = keybag
    }

    private func registryKey() throws -> SymmetricKey {
        let classKey = try KeychainStore.mapKeybag { try keybag.classKey(for: .afterFirstUnlockThisDeviceOnly) }
        return KeyDerivation.hkdfSHA256(inputKeyMaterial: classKey, salt: Data(), info: "tresor.applications.v1")
    }

    private func tag(_ label: String, _ value: Data, key: SymmetricKey) -> Data {
        MessageAuthentication.hmacSHA256(Data((label + "\0").utf8) + value, key: key)
    }

    private func associatedData(idTag: Data) -> Data {
        Data("tresor.applications.v1/".utf8) + idTag
    }

    /// Registers an application. An executable or application id registered already is a
    /// ``KeychainError/duplicateItem`` — unless `replacing` is true, when the registration of the
    /// same application id is replaced (a rebuilt executable), in one transaction. An executable
    /// registered as *another* application stays a duplicate.
    /// - Returns: whether a registration was replaced.
    @discardableResult
    public func register(_ application: Application, replacing: Bool = false) throws -> Bool {
        try application.validate()
        let key = try registryKey()
        let idTag = tag("id", Data(application.applicationID.utf8), key: key)
        let sealed = try Envelope.seal(try ItemAttributes.encoder.encode(application), using: key, authenticating: associatedData(idTag: idTag))
        var replaced = false
        do {
            try database.write { db in
                if replacing {
                    try db.execute(sql: "DELETE FROM applications WHERE id_tag = ?", arguments: [idTag])
                    replaced = db.changesCount > 0
                }
                try db.execute(
                    sql: "INSERT INTO applications (id_tag, executable_tag, sealed) VALUES (?, ?, ?)",
                    arguments: [idTag, tag("executable", application.executableSHA256, key: key), sealed])
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw KeychainError.duplicateItem
        }
        cache.withLock { $0 = nil }
        return replaced
    }

    /// The application whose executable has this hash, if registered.
    public func application(executableSHA256 hash: Data) throws -> Application? {
        if let cached = cache.withLock({ $0 }) { return cached[hash] }
        let all = try list()
        let byHash = Dictionary(all.map { ($0.executableSHA256, $0) }, uniquingKeysWith: { first, _ in first })
        cache.withLock { $0 = byHash }
        return byHash[hash]
    }

    /// The development build registered at `path` (``Application/isDevelopmentBuild``), if any.
    /// - Parameter path: the executable's path, as the daemon sees it.
    /// - Returns: the application, or nil.
    /// - Throws: keybag and storage errors.
    public func application(developmentBuildAt path: String) throws -> Application? {
        try list().first { $0.isDevelopmentBuild && $0.executablePath == path }
    }

    /// Every registered application, by id. Rows that do not open under the registry key
    /// (forged or damaged) are left out.
    public func list() throws -> [Application] {
        try database.read { db in try list(db) }
    }

    /// ``list()`` in a read the caller holds (a backup reads the registry and the items in one).
    func list(_ db: Database) throws -> [Application] {
        let key = try registryKey()
        let rows = try Row.fetchAll(db, sql: "SELECT id_tag, executable_tag, sealed FROM applications")
        return rows.compactMap { row -> Application? in
            let idTag: Data = row["id_tag"]
            guard let json = try? Envelope.open(row["sealed"], using: key, authenticating: associatedData(idTag: idTag)),
                let application = try? ItemAttributes.decoder.decode(Application.self, from: json),
                tag("id", Data(application.applicationID.utf8), key: key) == idTag,
                tag("executable", application.executableSHA256, key: key) == row["executable_tag"] as Data
            else { return nil }
            return application
        }.sorted { $0.applicationID < $1.applicationID }
    }

    /// Removes an application. Its items stay; no executable can reach them until an
    /// application with their groups is registered again.
    public func remove(applicationID: String) throws {
        let idTag = tag("id", Data(applicationID.utf8), key: try registryKey())
        let removed = try database.write { db in
            try db.execute(sql: "DELETE FROM applications WHERE id_tag = ?", arguments: [idTag])
            return db.changesCount
        }
        cache.withLock { $0 = nil }
        guard removed > 0 else { throw KeychainError.itemNotFound }
    }
}

// Backups: the registry is restored as rows sealed under this home's registry key, staged and
// committed like items (docs/FORMAT.md, "Restoring").
extension ApplicationRegistry {
    /// Decides what restoring `application` means here and prepares its row.
    /// - Parameters:
    ///   - application: an application read from a backup.
    ///   - onConflict: what to do when its id or executable is registered as another application.
    /// - Returns: the outcome, and the statements to commit.
    /// - Throws: ``KeychainError/param(_:)`` for an invalid application; keybag and storage errors.
    public func stageRestore(_ application: Application, onConflict: ConflictPolicy) throws -> (BackupOutcome, [StagedStatement]) {
        try application.validate()
        let registered = try list()
        let sameID = registered.first { $0.applicationID == application.applicationID }
        let sameExecutable = registered.first { $0.executableSHA256 == application.executableSHA256 }
        if sameID == application { return (.alreadyPresent, []) }
        var statements: [StagedStatement] = []
        let key = try registryKey()
        let idTag = tag("id", Data(application.applicationID.utf8), key: key)
        let executableTag = tag("executable", application.executableSHA256, key: key)
        if sameID != nil || sameExecutable != nil {
            guard onConflict == .replace else { return (.conflict, []) }
            statements.append(
                StagedStatement(
                    "DELETE FROM applications WHERE id_tag = ? OR executable_tag = ?",
                    [idTag.databaseValue, executableTag.databaseValue]))
        }
        let sealed = try Envelope.seal(try ItemAttributes.encoder.encode(application), using: key, authenticating: associatedData(idTag: idTag))
        statements.append(
            StagedStatement(
                "INSERT OR IGNORE INTO applications (id_tag, executable_tag, sealed) VALUES (?, ?, ?)",
                [idTag.databaseValue, executableTag.databaseValue, sealed.databaseValue]))
        return (sameID == nil && sameExecutable == nil ? .restored : .replaced, statements)
    }

    /// Forgets the registry read into memory: after rows were written beside this object (a
    /// restore's commit), the next lookup reads them.
    public func forgetCache() {
        cache.withLock { $0 = nil }
    }
}
