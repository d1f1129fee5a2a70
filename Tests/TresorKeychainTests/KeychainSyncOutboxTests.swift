import Foundation
import GRDB
import Testing
import TresorKeybag

@testable import TresorKeychain

/// The outbox (docs/SYNC.md, "What syncs"): which changes are recorded for sending, in the
/// transaction of the change itself.
@Suite struct KeychainSyncOutboxTests {
    static func password(_ service: String, accessible: ProtectionClass = .whenUnlocked, synchronizable: Bool? = true) -> ItemAttributes {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = "ada"
        attributes.accessible = accessible
        attributes.synchronizable = synchronizable
        return attributes
    }

    static func query(_ service: String, synchronizable: Bool = true) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = "ada"
        attributes.synchronizable = synchronizable
        return ItemQuery(.genericPassword, attributes: attributes)
    }

    func outbox(_ keychain: KeychainStore) throws -> [OutboxEntry] {
        try keychain.syncTransaction { try $0.outbox() }
    }

    func records(_ keychain: KeychainStore) throws -> [Row] {
        try keychain.database.read { db in try Row.fetchAll(db, sql: "SELECT record_id, item_id FROM sync_records") }
    }

    /// Every class × synchronizable: only `whenUnlocked`, `afterFirstUnlock` and `always` items
    /// marked synchronizable leave the device — never one that does not say `synchronizable`
    /// (a *ThisDeviceOnly* class cannot: `aThisDeviceOnlyItemCannotBeSynchronizable`).
    @Test func onlySynchronizableItemsOfTheSharedClassesAreRecorded() throws {
        let home = try KeychainHome()
        var expected = 0
        for protectionClass in ProtectionClass.allCases {
            for synchronizable in [true, false, nil] as [Bool?] where synchronizable != true || !protectionClass.isThisDeviceOnly {
                let service = "\(protectionClass.rawValue)-\(String(describing: synchronizable))"
                try home.keychain.add(
                    .genericPassword, attributes: Self.password(service, accessible: protectionClass, synchronizable: synchronizable),
                    secret: Data("s".utf8), caller: Callers.appA)
                if synchronizable == true && !protectionClass.isThisDeviceOnly { expected += 1 }
            }
        }
        #expect(expected == 3)
        #expect(try home.keychain.pendingSyncChanges() == expected)
        #expect(try records(home.keychain).count == expected)
    }

    /// A created keychain (not the login one) never syncs: an item cannot be made synchronizable
    /// there — added so or changed to it, a `param` error, as a *ThisDeviceOnly* one — and its
    /// other items record nothing.
    @Test func aCreatedKeychainRefusesSynchronizableItemsAndRecordsNothing() throws {
        let home = try KeychainHome()
        let work = try KeychainStore(file: home.home.appendingPathComponent("work.keychain.db"), keybag: home.keybag, name: "work")
        expectKeychainError(.param, "added synchronizable") {
            try work.add(.genericPassword, attributes: Self.password("mail"), secret: Data("s".utf8), caller: Callers.appA)
        }
        try work.add(.genericPassword, attributes: Self.password("mail", synchronizable: nil), secret: Data("s".utf8), caller: Callers.appA)
        var toSynced = ItemAttributes()
        toSynced.synchronizable = true
        let query = Self.query("mail", synchronizable: false)
        expectKeychainError(.param, "changed to synchronizable") {
            try work.update(query, changes: toSynced, secret: nil, caller: Callers.appA)
        }
        #expect(try work.copyMatching(query, caller: Callers.appA).first?.attributes?.synchronizable == false)
        #expect(try work.pendingSyncChanges() == 0)
        // The login keychain takes the same item as it is.
        try home.keychain.add(.genericPassword, attributes: Self.password("mail"), secret: Data("s".utf8), caller: Callers.appA)
        #expect(try home.keychain.pendingSyncChanges() == 1)
    }

    /// Add, updates and a delete of one syncing item: one record id throughout, one entry not
    /// sealed yet covers every change until it is sealed, and the delete unlinks the record (a
    /// tombstone goes out).
    @Test func addUpdateDeleteRecordOneRecordWithAStableID() throws {
        let home = try KeychainHome()
        try home.keychain.add(.genericPassword, attributes: Self.password("mail"), secret: Data("one".utf8), caller: Callers.appA)
        let added = try records(home.keychain)
        #expect(added.count == 1)
        let recordID: String = added[0]["record_id"]
        try home.keychain.update(Self.query("mail"), changes: ItemAttributes(label: "Mail"), secret: Data("two".utf8), caller: Callers.appA)
        try home.keychain.update(Self.query("mail"), changes: ItemAttributes(comment: "again"), secret: nil, caller: Callers.appA)
        #expect(try outbox(home.keychain).map(\.recordID) == [recordID])

        // Once sealed, a further change is a new entry of the same record.
        try home.keychain.syncTransaction { transaction in
            let entry = try #require(try transaction.outbox().first)
            try transaction.seal(entry, deviceSequence: 1, baseCounter: 0, isTombstone: false, body: Data("sealed".utf8))
        }
        try home.keychain.delete(Self.query("mail"), caller: Callers.appA)
        let entries = try outbox(home.keychain)
        #expect(entries.map(\.recordID) == [recordID, recordID])
        #expect(entries.map(\.deviceSequence) == [1, nil])
        let after = try records(home.keychain)
        #expect(after.count == 1)
        #expect((after[0]["item_id"] as Int64?) == nil)
    }

    /// An item that stops being synchronizable leaves the others (Apple: it disappears from the
    /// other devices): its record is unlinked and a change goes out; it stays here.
    @Test func anItemThatStopsSyncingLeavesATombstone() throws {
        let home = try KeychainHome()
        try home.keychain.add(.genericPassword, attributes: Self.password("mail"), secret: Data("one".utf8), caller: Callers.appA)
        try home.keychain.syncTransaction { transaction in
            let entry = try #require(try transaction.outbox().first)
            try transaction.seal(entry, deviceSequence: 1, baseCounter: 0, isTombstone: false, body: Data())
            try transaction.confirm(entry, counter: 1)
        }
        #expect(try home.keychain.pendingSyncChanges() == 0)
        var changes = ItemAttributes()
        changes.synchronizable = false
        try home.keychain.update(Self.query("mail"), changes: changes, secret: nil, caller: Callers.appA)
        #expect(try home.keychain.pendingSyncChanges() == 1)
        #expect((try records(home.keychain)[0]["item_id"] as Int64?) == nil)
        #expect(try home.keychain.copyMatching(Self.query("mail", synchronizable: false), caller: Callers.appA).count == 1)
        // Moving to a ThisDeviceOnly class is leaving too; a non-syncing item's changes record nothing.
        try home.keychain.update(Self.query("mail", synchronizable: false), changes: ItemAttributes(label: "x"), secret: nil, caller: Callers.appA)
        #expect(try home.keychain.pendingSyncChanges() == 1)
    }

    /// Items made before the keychain recorded changes get a record and a pending change once,
    /// when sync is turned on; those that do not sync never do.
    @Test func itemsWithoutARecordAreRecordedOnce() throws {
        let home = try KeychainHome()
        try home.keychain.add(.genericPassword, attributes: Self.password("mail"), secret: Data("one".utf8), caller: Callers.appA)
        try home.keychain.add(
            .genericPassword, attributes: Self.password("local", synchronizable: false), secret: Data("x".utf8), caller: Callers.appA)
        // As a keychain written before schema v5 leaves them: no record, nothing pending.
        try home.keychain.database.write { db in try db.execute(sql: "DELETE FROM sync_records; DELETE FROM sync_outbox") }
        #expect(try home.keychain.recordSyncingItemsWithoutRecord() == 1)
        #expect(try home.keychain.pendingSyncChanges() == 1)
        #expect(try home.keychain.recordSyncingItemsWithoutRecord() == 0)
        #expect(try records(home.keychain).count == 1)
    }

    /// The outbox is written in the change's transaction: a change refused (a duplicate) records nothing.
    @Test func aRefusedChangeRecordsNothing() throws {
        let home = try KeychainHome()
        try home.keychain.add(.genericPassword, attributes: Self.password("mail"), secret: Data("one".utf8), caller: Callers.appA)
        #expect(throws: KeychainError.self) {
            try home.keychain.add(.genericPassword, attributes: Self.password("mail"), secret: Data("two".utf8), caller: Callers.appA)
        }
        #expect(try home.keychain.pendingSyncChanges() == 1)
        #expect(try records(home.keychain).count == 1)
    }

    /// Each arriving item looks for a kept conflict of its record: through the index, so a home
    /// that kept many conflicts does not walk them all for each item a sync brings.
    @Test func anArrivingItemFindsItsRecordsKeptConflictsThroughAnIndex() throws {
        let home = try KeychainHome()
        let plan = try home.keychain.database.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT id, pdmn, sealed FROM sync_conflicts WHERE record_id = ?", arguments: ["r"])
                .map { row -> String in row["detail"] }
        }
        #expect(plan.contains { $0.contains("USING INDEX sync_conflicts_record (record_id=?)") }, "\(plan)")
    }
}

extension ItemAttributes {
    fileprivate init(label: String? = nil, comment: String? = nil) {
        self.init()
        self.label = label
        self.comment = comment
    }
}
