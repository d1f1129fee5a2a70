import Foundation
import GRDB

extension KeychainStore {
    /// The ids of the generic passwords of the caller's groups that may match `custom`, found
    /// from blind indexes alone — for when their attributes cannot be opened (the keybag is
    /// locked) and a client is to be told which items wait for an unlock. Rows written before
    /// the custom attribute index are included (nothing says they do not match).
    /// - Parameters:
    ///   - custom: the free-form attributes every match has (empty: every item of the groups).
    ///   - caller: whose groups to look in (its own only, even for the CLI).
    /// - Returns: the ids, as ``KeychainItem/id`` spells them.
    /// - Throws: ``KeychainError/storage(_:)`` when the database cannot be read.
    public func lockedMatches(custom: [String: String], caller: Caller) throws -> [String] {
        guard !caller.accessGroups.isEmpty else { return [] }
        let itemClass = ItemClass.genericPassword
        let groupTags = caller.accessGroups.map { sealing.groupTag($0) }
        return try read { db in
            if custom.isEmpty {
                return try Int64.fetchAll(
                    db, sql: "SELECT id FROM \(itemClass.table) WHERE group_tag IN (\(databaseQuestionMarks(count: groupTags.count))) ORDER BY id",
                    arguments: StatementArguments(groupTags))
            }
            return try Self.customAttributeCandidates(
                db, tags: sealing.customAttributeTags(custom, itemClass: itemClass), itemClass: itemClass, groupTags: groupTags)
        }.map(String.init)
    }
}
