import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorNotesDomain

// Web accounts (docs/WEB.md, "Accounts and sessions"): registration and password checks. The local
// account signs in as `local` with the keybag passcode, which the server checks against the keybag,
// not here.
extension NotesStore {

    /// The fewest PBKDF2 rounds accepted for a passphrase made in the browser (what this store writes).
    public var minimumIterations: Int { max(settings.kdfRounds, 1) }

    /// Creates a web account. The password is kept only as PBKDF2-HMAC-SHA256 over a random
    /// 16-byte salt of its own, `settings.kdfRounds` rounds (600,000 in production).
    public func registerAccount(name: String, password: AccountPassword) throws -> WebAccount {
        let login = try NoteRules.loginName(name)
        guard login != NoteRules.localLoginName else { throw NotesError.nameTaken(login) }
        let hash = try PasswordHash.make(password, rounds: minimumIterations)
        let id = AccountID(rawValue: UUID().uuidString.lowercased())
        try pool.write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM accounts WHERE login_name = ?", arguments: [login]) == nil else {
                throw NotesError.nameTaken(login)
            }
            try db.execute(
                sql: """
                    INSERT INTO accounts (id, name, login_name, password_salt, password_iterations, password_hash, created)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [id.rawValue, login, login, hash.salt, hash.rounds, hash.hash, now.timeIntervalSince1970])
        }
        return WebAccount(id: id, name: login, isLocal: false)
    }

    /// The web account `name` if `password` is its password; nil otherwise. An unknown name
    /// costs the same PBKDF2 run as a known one, so timing does not tell which names exist.
    public func authenticate(name: String, password: AccountPassword) throws -> WebAccount? {
        guard let login = try? NoteRules.loginName(name), login != NoteRules.localLoginName else {
            PasswordHash.checkNobody(password, rounds: minimumIterations)
            return nil
        }
        let row = try pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT id, password_salt, password_iterations, password_hash FROM accounts WHERE login_name = ?", arguments: [login])
        }
        guard let row, let salt = row["password_salt"] as Data?, let rounds = row["password_iterations"] as Int?,
            let hash = row["password_hash"] as Data?
        else {
            PasswordHash.checkNobody(password, rounds: minimumIterations)
            return nil
        }
        guard try PasswordHash(salt: salt, rounds: rounds, hash: hash).matches(password) else { return nil }
        return WebAccount(id: AccountID(rawValue: row["id"]), name: login, isLocal: false)
    }

    /// Whether `password` is the web account's password (a passphrase reset needs it: docs/WEB.md,
    /// "Endpoints", `POST /passphrase/reset`).
    /// Always false for the local account: its password is the keybag passcode.
    public func checkPassword(_ password: AccountPassword, account: AccountID) throws -> Bool {
        guard let hash = try passwordHash(of: account) else { return false }
        return try hash.matches(password)
    }

    /// Account `account`'s stored password hash: nil for one without a password (the local
    /// account, an application's).
    /// - Throws: `notFound` for an unknown account.
    func passwordHash(of account: AccountID) throws -> PasswordHash? {
        let row = try pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT password_salt, password_iterations, password_hash FROM accounts WHERE id = ?", arguments: [account.rawValue])
        }
        guard let row else { throw NotesError.notFound("account \(account)") }
        guard let salt = row["password_salt"] as Data?, let rounds = row["password_iterations"] as Int?,
            let hash = row["password_hash"] as Data?
        else { return nil }
        return PasswordHash(salt: salt, rounds: rounds, hash: hash)
    }

    /// The account `id` as the web shows it.
    public func webAccount(_ id: AccountID) throws -> WebAccount {
        let login = try pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT login_name FROM accounts WHERE id = ?", arguments: [id.rawValue]) else {
                throw NotesError.notFound("account \(id)")
            }
            return row["login_name"] as String?
        }
        return WebAccount(id: id, name: login ?? NoteRules.localLoginName, isLocal: id == .local)
    }

    /// The account that signs in as `name` (`local`: the local account), if any.
    public func webAccount(named name: String) throws -> WebAccount? {
        guard let login = try? NoteRules.loginName(name) else { return nil }
        if login == NoteRules.localLoginName { return WebAccount(id: .local, name: login, isLocal: true) }
        let id = try pool.read { db in
            try String.fetchOne(db, sql: "SELECT id FROM accounts WHERE login_name = ?", arguments: [login])
        }
        return id.map { WebAccount(id: AccountID(rawValue: $0), name: login, isLocal: false) }
    }
}

// The notes accounts of applications (docs/API.md, "Notes for applications"): one per team,
// made on the team's first request, with no password — nobody signs in to it on the web.
extension NotesStore {
    /// Makes `account` (an ``AccountID/applications(ofTeam:)`` account) if it does not exist.
    /// - Parameter account: The team's account.
    /// - Throws: `NotesError` when the database cannot be written.
    public func ensureApplicationsAccount(_ account: AccountID) throws {
        let exists = try pool.read { db in
            try Int.fetchOne(db, sql: "SELECT 1 FROM accounts WHERE id = ?", arguments: [account.rawValue]) != nil
        }
        guard !exists else { return }
        try pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO accounts (id, name, created) VALUES (?, ?, ?)",
                arguments: [account.rawValue, account.rawValue, now.timeIntervalSince1970])
        }
    }
}
