import Foundation
import GRDB
import TresorCrypto
import TresorNotesDomain

// Changing a web account's password (docs/WEB.md, "Accounts and sessions"), or setting a
// forgotten one ("A forgotten password"). The local account has no password here: it signs in
// with the keybag passcode (`tresor passcode change`).
extension NotesStore {
    /// Replaces web account `account`'s password when `current` is its password: a new
    /// random salt and hash, as at registration.
    /// - Parameters:
    ///   - account: a web account (not the local one).
    ///   - current: what the user typed as the current password.
    ///   - new: the new password.
    /// - Returns: false, changing nothing, when `current` is wrong — or was right but another
    ///   change replaced it meanwhile.
    /// - Throws: `NotesError.invalid` for the local account, `notFound` for an unknown account,
    ///   or a database error.
    public func changePassword(account: AccountID, current: AccountPassword, to new: AccountPassword) throws -> Bool {
        try refuseLocal(account)
        guard let stored = try passwordHash(of: account), try stored.matches(current) else { return false }
        // Only over the hash `current` was checked against: of two changes at once, the second
        // finds its `current` no longer the password (as a server's store does).
        return try replacePassword(of: account, with: new, over: stored)
    }

    /// Replaces web account `account`'s password without the current one (the owner's reset
    /// code was given): a new random salt and hash, as at registration.
    /// - Parameters:
    ///   - account: a web account (not the local one).
    ///   - new: the new password.
    /// - Throws: `NotesError.invalid` for the local account, `notFound` for an unknown account,
    ///   or a database error.
    public func setPassword(account: AccountID, to new: AccountPassword) throws {
        try refuseLocal(account)
        guard try replacePassword(of: account, with: new, over: nil) else {
            throw NotesError.notFound("account \(account.rawValue.prefix(64))")
        }
    }

    private func refuseLocal(_ account: AccountID) throws {
        guard account != .local else {
            throw NotesError.invalid("the local account signs in with the keybag passcode: change it with tresor passcode change")
        }
    }

    /// Writes a new salt and hash of `new` for `account` — only over `stored` when given.
    /// - Returns: whether a row changed.
    private func replacePassword(of account: AccountID, with new: AccountPassword, over stored: PasswordHash?) throws -> Bool {
        let hash = try PasswordHash.make(new, rounds: minimumIterations)
        return try pool.write { db in
            var sql = "UPDATE accounts SET password_salt = ?, password_iterations = ?, password_hash = ? WHERE id = ?"
            var arguments: StatementArguments = [hash.salt, hash.rounds, hash.hash, account.rawValue]
            if let stored {
                sql += " AND password_salt = ? AND password_hash = ?"
                arguments += [stored.salt, stored.hash]
            }
            try db.execute(sql: sql, arguments: arguments)
            return db.changesCount == 1
        }
    }
}
