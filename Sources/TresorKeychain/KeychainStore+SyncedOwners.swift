import Foundation
import GRDB

// Secret Service items and sync (docs/SYNC.md, "What syncs"): an item a Secret Service client
// stored syncs only when the user included its owner — the group `tresor secret-service owners`
// names — with `tresor sync include`. Such items are often machine-specific (a browser's
// safe-storage key), and any process running that client may read them.
extension KeychainStore {
    /// The `service` of every item a Secret Service client stored (docs/SECRET-SERVICE.md,
    /// "How items are kept").
    public static let secretServiceItemService = "org.freedesktop.secrets"

    /// The sync ledger's state name for the owners included (a sorted JSON array).
    static let syncedOwnersState = "secret-service-owners"

    static func isSecretServiceItem(_ attributes: ItemAttributes) -> Bool {
        attributes.service == secretServiceItemService
    }

    static func syncedSecretServiceOwners(_ db: Database) throws -> Set<String> {
        guard let stored = try Data.fetchOne(db, sql: "SELECT value FROM sync_state WHERE name = ?", arguments: [syncedOwnersState]) else {
            return []
        }
        return Set((try? JSONDecoder().decode([String].self, from: stored)) ?? [])
    }

    /// Whether an item with `attributes` may arrive from another device: one that syncs by
    /// Apple's rule, or a Secret Service item another device's user included — included here
    /// or not, since what this device sends is its own choice.
    func mayArrive(_ attributes: ItemAttributes) -> Bool {
        guard canSync, !(attributes.accessible ?? .default).isThisDeviceOnly else { return false }
        return attributes.synchronizable == true || Self.isSecretServiceItem(attributes)
    }

    /// The owners whose Secret Service items sync.
    /// - Returns: the groups, sorted.
    /// - Throws: ``KeychainError/storage(_:)``.
    public func syncedSecretServiceOwners() throws -> [String] {
        try read { db in try Self.syncedSecretServiceOwners(db).sorted() }
    }

    /// Includes the Secret Service items of `owner` in sync, or excludes them: included, each
    /// of its items gets its record and a pending change; excluded, each one that had a record
    /// sends a tombstone — it leaves the other devices and stays here — in the transaction of
    /// the change. Items of a locked class are found by the next `tresor sync now`
    /// (``recordSyncingItemsWithoutRecord()``) when included; call this with the keybag unlocked.
    /// - Parameters:
    ///   - owner: the group, as `tresor secret-service owners` names it.
    ///   - synced: include (true) or exclude.
    /// - Returns: the owners included after the change, sorted.
    /// - Throws: ``KeychainError/param(_:)`` for an empty owner; ``KeychainError/storage(_:)``.
    @discardableResult
    public func setSecretServiceOwner(_ owner: String, synced: Bool) throws -> [String] {
        guard canSync else { throw KeychainError.param("only the login keychain syncs") }
        guard (1...1024).contains(owner.utf8.count) else {
            throw KeychainError.param("an owner is a group as `tresor secret-service owners` names it")
        }
        var found: [(ItemClass, Int64, ItemAttributes)] = []
        try readAllItems { reading in
            guard case .item(let item) = reading, Self.isSecretServiceItem(item.attributes), item.attributes.accessGroup == owner,
                let id = Int64(item.id)
            else { return }
            found.append((item.itemClass, id, item.attributes))
        }
        return try write { db in
            var owners = try Self.syncedSecretServiceOwners(db)
            if synced { owners.insert(owner) } else { owners.remove(owner) }
            try db.execute(
                sql: "INSERT OR REPLACE INTO sync_state (name, value) VALUES (?, ?)",
                arguments: [Self.syncedOwnersState, try JSONEncoder().encode(owners.sorted())])
            for (itemClass, id, attributes) in found {
                // Deleted since it was read: its deletion recorded what it had to.
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM \(itemClass.table) WHERE id = ?", arguments: [id]) != nil else { continue }
                let recorded =
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM sync_records WHERE item_class = ? AND item_id = ?", arguments: [itemClass.rawValue, id]) != nil
                let syncsNow = try syncs(attributes, db)
                // Included again, an item already recorded is not sent twice.
                if syncsNow != recorded { try recordSyncChange(db, itemClass: itemClass, id: id, syncsNow: syncsNow) }
            }
            return owners.sorted()
        }
    }
}
