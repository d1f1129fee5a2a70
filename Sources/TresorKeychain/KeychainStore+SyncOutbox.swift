import Foundation
import GRDB
import TresorModel

// The outbox (docs/SYNC.md, "What syncs"): every add, update and delete of an item that syncs
// records a pending change in `sync_outbox`, inside the write transaction of the change itself,
// so a change is never made without being sent, nor sent without being made.
extension KeychainStore {
    /// Whether an item with `attributes` leaves this device — Apple's rule for iCloud Keychain:
    /// an item of the login keychain, `synchronizable`, in `whenUnlocked`, `afterFirstUnlock` or
    /// `always`. Never a *ThisDeviceOnly* class, never a created keychain. An item a Secret
    /// Service client stored syncs only when the user included its owner
    /// (``setSecretServiceOwner(_:synced:)``), whatever it says.
    /// - Parameters:
    ///   - attributes: the item's attributes as stored.
    ///   - db: the transaction that reads the owners included.
    /// - Returns: whether its changes are recorded for sending.
    func syncs(_ attributes: ItemAttributes, _ db: Database) throws -> Bool {
        guard canSync, !(attributes.accessible ?? .default).isThisDeviceOnly else { return false }
        guard Self.isSecretServiceItem(attributes) else { return attributes.synchronizable == true }
        return try Self.syncedSecretServiceOwners(db).contains(attributes.accessGroup ?? "")
    }

    /// Records a change of the item `id` in the outbox when it syncs now or did before: an item
    /// that stops syncing (deleted, no longer `synchronizable`, moved to a *ThisDeviceOnly*
    /// class) leaves its record, which goes out as a tombstone — it leaves the other devices,
    /// as an item does on Apple's devices when it stops being synchronizable.
    /// - Parameters:
    ///   - syncsNow: whether the item, as the transaction leaves it, syncs.
    func recordSyncChange(_ db: Database, itemClass: ItemClass, id: Int64, syncsNow: Bool) throws {
        let existing = try String.fetchOne(
            db, sql: "SELECT record_id FROM sync_records WHERE item_class = ? AND item_id = ?", arguments: [itemClass.rawValue, id])
        let recordID: String
        if syncsNow {
            if let existing {
                recordID = existing
            } else {
                recordID = UUID().uuidString
                try db.execute(
                    sql: "INSERT INTO sync_records (record_id, item_class, item_id, version_counter) VALUES (?, ?, ?, 0)",
                    arguments: [recordID, itemClass.rawValue, id])
            }
        } else {
            guard let existing else { return }
            recordID = existing
            try db.execute(sql: "UPDATE sync_records SET item_id = NULL WHERE record_id = ?", arguments: [recordID])
        }
        try Self.enqueue(db, recordID: recordID)
    }

    /// Adds a pending change of `recordID` unless one not sealed yet waits already: what is
    /// sealed is the record as it is when sealed, so one entry covers every change until then.
    static func enqueue(_ db: Database, recordID: String) throws {
        try db.execute(
            sql: """
                INSERT INTO sync_outbox (record_id) SELECT ?
                WHERE NOT EXISTS (SELECT 1 FROM sync_outbox WHERE record_id = ? AND device_sequence IS NULL)
                """, arguments: [recordID, recordID])
    }

    /// Records a pending change for each item that syncs but has no record yet — an item made
    /// before this keychain recorded changes — so that turning sync on sends it. An item of a
    /// locked class is left for a later call.
    /// - Returns: how many items were recorded.
    /// - Throws: ``KeychainError/storage(_:)``.
    @discardableResult
    public func recordSyncingItemsWithoutRecord() throws -> Int {
        // Only the rows without a record are opened: the sync before recorded the rest, so a
        // sync with nothing to do costs a query, not a read of the whole keychain.
        var found: [(ItemClass, Int64, ItemAttributes)] = []
        try readItems(
            where: "id NOT IN (SELECT item_id FROM sync_records WHERE item_class = ? AND item_id IS NOT NULL)",
            arguments: { [$0.rawValue] }
        ) { reading in
            guard case .item(let item) = reading, let id = Int64(item.id) else { return }
            found.append((item.itemClass, id, item.attributes))
        }
        return try write { db in
            var count = 0
            for (itemClass, id, attributes) in found where try syncs(attributes, db) {
                let known = try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM sync_records WHERE item_class = ? AND item_id = ?", arguments: [itemClass.rawValue, id])
                // Deleted since it was read, or recorded meanwhile by a change of its own.
                guard known == nil, try Bool.fetchOne(db, sql: "SELECT 1 FROM \(itemClass.table) WHERE id = ?", arguments: [id]) != nil
                else { continue }
                try recordSyncChange(db, itemClass: itemClass, id: id, syncsNow: true)
                count += 1
            }
            return count
        }
    }

    /// How many changes wait to go out (sealed or not).
    /// - Returns: the count of the outbox's entries.
    /// - Throws: ``KeychainError/storage(_:)``.
    public func pendingSyncChanges() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_outbox") ?? 0 }
    }
}
