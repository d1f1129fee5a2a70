import Foundation
import GRDB

extension Keychain {
    /// The ids of the generic passwords of the caller's groups that match `custom` while their
    /// attributes cannot be opened (the keybag is locked): found from blind indexes alone, so
    /// a client can be told which items wait for an unlock without anything being decrypted.
    /// - Parameters:
    ///   - custom: the free-form attributes every match has (empty: every item of the groups).
    ///   - caller: whose groups to look in.
    /// - Returns: the ids, as ``KeychainItem/id`` spells them.
    /// - Throws: ``KeychainError/storage(_:)`` when the database cannot be read.
    public func lockedMatches(custom: [String: String], caller: Caller) throws -> [String] {
        guard custom.isEmpty, !caller.accessGroups.isEmpty else { return [] }
        let tags = caller.accessGroups.map { sealing.groupTag($0) }
        do {
            return try database.read { db in
                try Int64.fetchAll(
                    db, sql: "SELECT id FROM \(ItemClass.genericPassword.table) WHERE group_tag IN (\(databaseQuestionMarks(count: tags.count)))",
                    arguments: StatementArguments(tags))
            }.map(String.init)
        } catch let error as DatabaseError {
            throw KeychainError.storage("the keychain database cannot be read (SQLite error \(error.resultCode.rawValue))")
        }
    }
}
