import Foundation
import GRDB
import Testing
import TresorKeybag
import TresorStorage

@testable import TresorKeychain

/// A restore feeds the outbox (docs/SYNC.md, "What syncs"): the items it restores that sync are
/// recorded for sending by the statements that restore them, in their transaction.
@Suite struct KeychainRestoreOutboxTests {
    static func item(
        _ id: String, _ service: String, synchronizable: Bool, accessible: ProtectionClass = .whenUnlocked
    ) -> BackedUpItem {
        var attributes = KeychainSyncOutboxTests.password(service, accessible: accessible, synchronizable: synchronizable)
        attributes.accessGroup = "A.app"
        return BackedUpItem(itemClass: .genericPassword, id: id, attributes: attributes, secret: Data("s-\(service)".utf8))
    }

    /// Commits staged statements as a restore's journal does — here twice, as a journal replayed
    /// after a crash may: each has the effect of once.
    static func commit(_ staged: [(BackupOutcome, [StagedStatement])], _ keychain: KeychainStore) throws {
        for _ in 0..<2 {
            try keychain.database.write { db in
                for statement in staged.flatMap(\.1) { try db.execute(sql: statement.sql, arguments: StatementArguments(statement.arguments)) }
            }
        }
    }

    func recordedItems(_ keychain: KeychainStore) throws -> [Int64?] {
        try keychain.database.read { db in
            try Row.fetchAll(db, sql: "SELECT item_id FROM sync_records ORDER BY item_id").map { $0["item_id"] as Int64? }
        }
    }

    @Test func restoredItemsThatSyncAreRecordedWithTheirRows() throws {
        let home = try KeychainHome()
        let staged = try KeychainRestore(keychain: home.keychain, onConflict: .replace).stage([
            Self.item("7", "synced", synchronizable: true), Self.item("8", "local", synchronizable: false),
        ]).map { try $0.get() }
        #expect(staged.map(\.0) == [.restored, .restored])
        try Self.commit(staged, home.keychain)
        #expect(try recordedItems(home.keychain) == [7])
        #expect(try home.keychain.pendingSyncChanges() == 1)
        // Nothing is left for turning sync on to find.
        #expect(try home.keychain.recordSyncingItemsWithoutRecord() == 0)
    }

    @Test func aRestoreThatReplacesASyncingItemSendsTheRestoredVersionOrATombstone() throws {
        let home = try KeychainHome()
        try home.keychain.add(
            .genericPassword, attributes: KeychainSyncOutboxTests.password("kept"), secret: Data("now".utf8), caller: Callers.appA)
        try home.keychain.add(
            .genericPassword, attributes: KeychainSyncOutboxTests.password("stops"), secret: Data("now".utf8), caller: Callers.appA)
        // As if sent: the outbox empty, each item with its record.
        try home.keychain.database.write { db in try db.execute(sql: "DELETE FROM sync_outbox") }
        let before = try recordedItems(home.keychain)
        #expect(before.count == 2)

        let staged = try KeychainRestore(keychain: home.keychain, onConflict: .replace).stage([
            // `synchronizable` is part of the primary key: "stops" stops syncing by its class.
            Self.item("9001", "kept", synchronizable: true),
            Self.item("9002", "stops", synchronizable: true, accessible: .whenUnlockedThisDeviceOnly),
        ]).map { try $0.get() }
        #expect(staged.map(\.0) == [.replaced, .replaced])
        try Self.commit(staged, home.keychain)
        // The record of "kept" follows its restored row; "stops" keeps a record without an item: a tombstone.
        let after = try recordedItems(home.keychain)
        #expect(after.count == 2 && after.contains(nil) && after.contains { $0 != nil && !before.contains($0) }, "\(after)")
        #expect(try home.keychain.pendingSyncChanges() == 2)
    }
}
