import Foundation
import PostgresNIO
import TresorNotesDomain
import TresorSystem

// Web accounts (docs/WEB.md, "Accounts and sessions"): a case-folded login name, unique in the
// database, and the password's salted PBKDF2 hash only. The hash runs off the database's
// transaction and off Swift concurrency's threads.
extension PostgresWebStore: AccountStore {
    func registerAccount(name: String, password: AccountPassword) async throws -> WebAccount {
        let login = try NoteRules.loginName(name)
        guard login != NoteRules.localLoginName else { throw NotesError.nameTaken(login) }
        let rounds = minimumIterations
        let hash = try await offloaded { try PasswordHash.make(password, rounds: rounds) }
        let id = UUID().uuidString.lowercased()
        let created = now
        do {
            try await db.transaction { [logger] connection in
                try await connection.run(
                    """
                    INSERT INTO accounts (id, login_name, password_salt, password_rounds, password_hash, created)
                    VALUES (\(id), \(login), \(hash.salt), \(hash.rounds), \(hash.hash), \(created))
                    """, logger)
            }
        } catch let error as ServerDatabaseError where error.isUniqueViolation {
            // Of concurrent registrations of one name, on any instance, the unique index lets one in.
            throw NotesError.nameTaken(login)
        }
        return WebAccount(id: AccountID(rawValue: id), name: login, isLocal: false)
    }

    func authenticate(name: String, password: AccountPassword) async throws -> WebAccount? {
        let rounds = minimumIterations
        guard let login = try? NoteRules.loginName(name), login != NoteRules.localLoginName,
            let (id, hash) = try await passwordHash(where: .login(login))
        else {
            // An unknown name costs the same KDF run as a known one.
            try await offloaded { PasswordHash.checkNobody(password, rounds: rounds) }
            return nil
        }
        guard try await offloaded({ try hash.matches(password) }) else { return nil }
        return WebAccount(id: AccountID(rawValue: id), name: login, isLocal: false)
    }

    func checkPassword(_ password: AccountPassword, account: AccountID) async throws -> Bool {
        guard let (_, hash) = try await passwordHash(where: .id(account)) else { throw NotesError.notFound("account \(account.rawValue.prefix(64))") }
        return try await offloaded { try hash.matches(password) }
    }

    func changePassword(account: AccountID, current: AccountPassword, to new: AccountPassword) async throws -> Bool {
        try refuseLocal(account)
        guard let (_, stored) = try await passwordHash(where: .id(account)) else {
            throw NotesError.notFound("account \(account.rawValue.prefix(64))")
        }
        guard try await offloaded({ try stored.matches(current) }) else { return false }
        // Only over the hash `current` was checked against: of two changes at once on two
        // instances, the second finds its `current` no longer the password.
        return try await replacePassword(of: account, with: new, over: stored)
    }

    func setPassword(account: AccountID, to new: AccountPassword) async throws {
        try refuseLocal(account)
        guard try await replacePassword(of: account, with: new, over: nil) else {
            throw NotesError.notFound("account \(account.rawValue.prefix(64))")
        }
    }

    private func refuseLocal(_ account: AccountID) throws {
        guard account != .local else { throw NotesError.invalid("the local account's password is the keybag passcode") }
    }

    /// Writes a new salt and hash of `new` for `account` — only over `stored` when given.
    /// - Returns: whether a row changed.
    private func replacePassword(of account: AccountID, with new: AccountPassword, over stored: PasswordHash?) async throws -> Bool {
        let rounds = minimumIterations
        let hash = try await offloaded { try PasswordHash.make(new, rounds: rounds) }
        let changed = try await db.transaction { [logger] connection in
            try await connection.count(
                """
                UPDATE accounts SET password_salt = \(hash.salt), password_rounds = \(hash.rounds), password_hash = \(hash.hash)
                WHERE id = \(account.rawValue)
                AND (\(stored?.hash)::bytea IS NULL OR (password_hash = \(stored?.hash) AND password_salt = \(stored?.salt)))
                RETURNING 1
                """, logger)
        }
        return changed == 1
    }

    func account(named name: String) async throws -> WebAccount? {
        // A server has no local account: `local` is nobody's name here.
        guard let login = try? NoteRules.loginName(name), login != NoteRules.localLoginName else { return nil }
        let id = try await db.read { [logger] connection in
            try await connection.value("SELECT id FROM accounts WHERE login_name = \(login)", logger, as: String.self)
        }
        return id.map { WebAccount(id: AccountID(rawValue: $0), name: login, isLocal: false) }
    }

    enum AccountKey: Sendable {
        case login(String)
        case id(AccountID)
    }

    /// An account's id and password hash.
    func passwordHash(where key: AccountKey) async throws -> (String, PasswordHash)? {
        let row = try await db.read { [logger] connection in
            switch key {
            case .login(let login):
                return try await connection.row(
                    "SELECT id, password_salt, password_rounds, password_hash FROM accounts WHERE login_name = \(login)", logger,
                    as: (String, Data, Int, Data).self)
            case .id(let id):
                return try await connection.row(
                    "SELECT id, password_salt, password_rounds, password_hash FROM accounts WHERE id = \(id.rawValue)", logger,
                    as: (String, Data, Int, Data).self)
            }
        }
        return row.map { ($0.0, PasswordHash(salt: $0.1, rounds: $0.2, hash: $0.3)) }
    }

    /// The login name of `account`, if it is a web account of this server.
    func loginName(of account: AccountID, _ connection: PostgresConnection) async throws -> String? {
        try await connection.value("SELECT login_name FROM accounts WHERE id = \(account.rawValue)", logger, as: String.self)
    }
}
