import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorKeybag
import TresorStorage

/// One keychain item as a backup carries it: its attributes as stored (dates, group and
/// protection class included) and its secret, opened from every layer of the keychain.
public struct BackedUpItem: Codable, Equatable, Sendable {
    public var itemClass: ItemClass
    /// The row id, in decimal: kept, so a restored item is the same item (docs/FORMAT.md).
    public var id: String
    public var attributes: ItemAttributes
    public var secret: Data

    /// - Parameters:
    ///   - itemClass: the item's class.
    ///   - id: its row id, in decimal.
    ///   - attributes: its attributes as stored.
    ///   - secret: its secret.
    public init(itemClass: ItemClass, id: String, attributes: ItemAttributes, secret: Data) {
        self.itemClass = itemClass
        self.id = id
        self.attributes = attributes
        self.secret = secret
    }

    /// The protection class (every stored item has one).
    public var protectionClass: ProtectionClass { attributes.accessible ?? .default }
}

/// What a backup reads of one row: the item, or why it could not be read.
public enum ItemReading: Sendable {
    case item(BackedUpItem)
    /// The item's class key is not available now, or its row is damaged: reported, not fatal.
    case unreadable(itemClass: ItemClass, id: String, protectionClass: String, reason: String)
}

// Backups (docs/FORMAT.md, "Backups"): every item read in one read transaction, and restored
// items prepared as the rows this keychain would write — staged, then committed by a journal.
extension KeychainStore {
    /// Reads every item of every class, opened, in one read transaction (a consistent snapshot
    /// while writes go on), and hands each to `body` in order. An item whose class is locked or
    /// whose row does not open is handed over as ``ItemReading/unreadable(itemClass:id:protectionClass:reason:)``.
    /// - Parameters:
    ///   - applications: given first, in the same transaction, the applications registered in this
    ///     keychain's database (the login keychain holds the home's registry).
    ///   - body: called once per row, inside the read transaction.
    /// - Throws: ``KeychainError/storage(_:)`` when the database cannot be read; what `body` throws.
    public func readAllItems(applications: (([Application]) throws -> Void)? = nil, _ body: (ItemReading) throws -> Void) throws {
        try readItems(applications: applications, body)
    }

    /// ``readAllItems(applications:_:)`` of the rows `condition` keeps.
    /// - Parameters:
    ///   - condition: an SQL condition on a class's table; `arguments` gives its arguments per class.
    func readItems(
        where condition: String = "1", arguments: (ItemClass) -> StatementArguments = { _ in [] },
        applications: (([Application]) throws -> Void)? = nil, _ body: (ItemReading) throws -> Void
    ) throws {
        do {
            // `read`, not the lookups' `unsafeRead`: one transaction, so every table is read
            // as of one moment.
            try database.read { db in
                if let applications { try applications(try self.applications.list(db)) }
                for itemClass in ItemClass.allCases {
                    let rows = try StoredItem.fetchCursor(
                        db, sql: "SELECT \(StoredItem.selection) FROM \(itemClass.table) WHERE \(condition) ORDER BY id",
                        arguments: arguments(itemClass))
                    while let stored = try rows.next() {
                        try body(reading(stored, itemClass: itemClass, db))
                    }
                }
            }
        } catch let error as DatabaseError {
            throw KeychainError.storage(DatabaseFailure(error, database: "keychain", access: .read).description)
        }
    }

    /// How many items the keychain holds, of every class.
    /// - Returns: the count.
    /// - Throws: ``KeychainError/storage(_:)`` when the database cannot be read.
    public func itemCount() throws -> Int {
        try read { db in
            try ItemClass.allCases.reduce(0) { $0 + (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \($1.table)") ?? 0) }
        }
    }

    private func reading(_ stored: StoredItem, itemClass: ItemClass, _ db: Database) -> ItemReading {
        let id = String(stored.id)
        guard let protectionClass = ProtectionClass(rawValue: stored.protectionClass) else {
            return .unreadable(itemClass: itemClass, id: id, protectionClass: stored.protectionClass, reason: "unknown protection class")
        }
        let classKey: SymmetricKey
        do {
            classKey = try keybag.classKey(for: protectionClass)
        } catch {
            return .unreadable(
                itemClass: itemClass, id: id, protectionClass: protectionClass.rawValue,
                reason: "its protection class is locked (keychain \(name))")
        }
        do {
            let key = try metadataKey(itemClass, protectionClass, classKey: classKey, db: db, create: false)
            let attributes = try sealing.decodeMetadata(try sealing.openMetadataJSON(stored, itemClass: itemClass, key: key), of: stored)
            let secret = try sealing.openSecret(stored, itemClass: itemClass, classKey: classKey)
            return .item(BackedUpItem(itemClass: itemClass, id: id, attributes: attributes, secret: secret))
        } catch {
            return .unreadable(itemClass: itemClass, id: id, protectionClass: protectionClass.rawValue, reason: "its row is damaged or was altered")
        }
    }
}

/// Stages backed-up items for a restore into one keychain: decides, item by item, whether it
/// is new, already there, or in conflict with an item of the same primary key, and prepares
/// the rows — sealed under this keychain's keys, the backup's ids kept where free — as
/// ``StagedStatement``s that a journal commits later in one transaction.
///
/// Every statement can run twice with the effect of once (docs/FORMAT.md, "Restoring").
public final class KeychainRestore {
    let keychain: KeychainStore
    let onConflict: ConflictPolicy
    /// The metadata keys staged or found, by `class/protection class`: the rows staged here are
    /// sealed under them, so the commit checks that the database still holds them.
    private var metadataKeys: [String: SymmetricKey] = [:]
    /// Ids given to staged rows, per table.
    private var stagedIDs: [String: Set<Int64>] = [:]
    /// Primary keys of the items staged so far, per table: a second item of one is the backup's
    /// duplicate, which its `INSERT OR IGNORE` would drop unsaid.
    private var stagedPrimaryKeys: [String: Set<Data>] = [:]

    /// - Parameters:
    ///   - keychain: the keychain restored into.
    ///   - onConflict: what to do with an item whose primary key another item holds.
    public init(keychain: KeychainStore, onConflict: ConflictPolicy) {
        self.keychain = keychain
        self.onConflict = onConflict
    }

    /// Decides what restoring each of `items` means here and prepares its rows, in one read
    /// transaction of the keychain: its lookups take SQLite's locks once, not once per statement.
    /// - Parameter items: items read from a backup, in order.
    /// - Returns: for each item, in order, the outcome and the statements to commit (none unless
    ///   it is restored or replaces) — or what it threw: ``KeychainError/param(_:)`` for an item
    ///   this keychain would not accept; ``KeychainError/interactionNotAllowed(_:)`` when its class
    ///   is locked here; ``TresorModel/RestoreSkip/duplicate`` for a second item of one primary key.
    /// - Throws: storage errors of the transaction itself.
    public func stage(_ items: [BackedUpItem]) throws -> [Result<(BackupOutcome, [StagedStatement]), any Error>] {
        try keychain.read(inTransaction: true) { db in
            items.map { item in
                Result {
                    do {
                        return try stage(item, db)
                    } catch let error as DatabaseError {
                        throw KeychainStore.readError(error)
                    }
                }
            }
        }
    }

    private func stage(_ item: BackedUpItem, _ db: Database) throws -> (BackupOutcome, [StagedStatement]) {
        let itemClass = item.itemClass
        let attributes = item.attributes
        try attributes.validate(for: itemClass, purpose: .query)
        guard let group = attributes.accessGroup, !group.isEmpty, let protectionClass = attributes.accessible else {
            throw KeychainError.param("the item has no access group or protection class")
        }
        guard item.secret.count <= KeychainStore.maximumSecretBytes else { throw KeychainError.param("the secret is too large") }
        guard let backupID = Int64(item.id), backupID > 0 else { throw KeychainError.param("the item's id is not a row id") }
        let classKey = try KeychainStore.mapKeybag { try keychain.keybag.classKey(for: protectionClass) }
        let sealing = keychain.sealing
        let values = AttributeValues(attributes)
        let table = itemClass.table
        let primaryKeyTag = sealing.primaryKeyTag(values, itemClass: itemClass)
        guard stagedPrimaryKeys[table, default: []].insert(primaryKeyTag).inserted else { throw RestoreSkip.duplicate }

        var statements: [StagedStatement] = []
        var outcome = BackupOutcome.restored
        let existing = try StoredItem.fetchOne(db.cachedStatement(sql: itemClass.primaryKeyLookup), arguments: [primaryKeyTag])
        let idTaken = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(table) WHERE id = ?"), arguments: [backupID]) ?? false
        if let existing {
            if try isIdentical(existing, to: item, db) { return (.alreadyPresent, []) }
            guard onConflict == .replace else { return (.conflict, []) }
            outcome = .replaced
            statements.append(StagedStatement("DELETE FROM \(table) WHERE id = ?", [existing.id.databaseValue]))
        }
        var id = backupID
        let replacesItself = existing?.id == backupID
        if (idTaken && !replacesItself) || stagedIDs[table, default: []].contains(id) {
            repeat {
                id = Int64.random(in: 1...Int64.max)
            } while try Bool.fetchOne(db, sql: "SELECT 1 FROM \(table) WHERE id = ?", arguments: [id]) ?? false
                || stagedIDs[table, default: []].contains(id)
        }
        stagedIDs[table, default: []].insert(id)

        let (metadataKey, keyStatements) = try stagedMetadataKey(itemClass, protectionClass, classKey: classKey, db)
        statements += keyStatements
        let rowKey = SecureRandom.key(bitCount: 256)
        let row: [DatabaseValue] = [
            id.databaseValue, protectionClass.rawValue.databaseValue, primaryKeyTag.databaseValue,
            sealing.lookupTag(values, itemClass: itemClass).databaseValue, sealing.groupTag(group).databaseValue,
            try sealing.sealMetadata(attributes, itemClass: itemClass, id: id, key: metadataKey).databaseValue,
            try KeyWrap.wrap(rowKey, using: classKey).databaseValue,
            try sealing.sealSecret(item.secret, itemClass: itemClass, id: id, rowKey: rowKey).databaseValue,
        ]
        statements.append(
            StagedStatement(
                """
                INSERT OR IGNORE INTO \(table) (id, pdmn, primary_key_tag, lookup_tag, group_tag, metadata, row_key, secret, custom_indexed)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
                """, row))
        for tag in Set(sealing.attributeTags(values, itemClass: itemClass)) {
            // Only for the row staged here: if the insert was ignored, no tag may point at another row.
            statements.append(
                StagedStatement(
                    """
                    INSERT OR IGNORE INTO custom_attribute_tags (tag, item_class, item_id)
                    SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM \(table) WHERE id = ? AND primary_key_tag = ?)
                    """, [tag.databaseValue, table.databaseValue, id.databaseValue, id.databaseValue, primaryKeyTag.databaseValue]))
        }
        statements += syncStatements(
            itemClass, replacing: existing?.id, with: id, primaryKeyTag: primaryKeyTag, syncs: try keychain.syncs(attributes, db))
        return (outcome, statements)
    }

    /// The outbox's part of restoring an item (docs/SYNC.md, "What syncs"), committed with its
    /// row: the item it replaces leaves its record to the restored one — or, when the restored
    /// one does not sync, sends a tombstone — and a restored item that syncs gets a record and
    /// a pending change. Each statement has the effect of once when run twice.
    private func syncStatements(
        _ itemClass: ItemClass, replacing existing: Int64?, with id: Int64, primaryKeyTag: Data, syncs: Bool
    ) -> [StagedStatement] {
        let kind = itemClass.rawValue.databaseValue
        func enqueue(_ itemID: Int64) -> StagedStatement {
            StagedStatement(
                """
                INSERT INTO sync_outbox (record_id) SELECT r.record_id FROM sync_records r WHERE r.item_class = ? AND r.item_id = ?
                AND NOT EXISTS (SELECT 1 FROM sync_outbox o WHERE o.record_id = r.record_id AND o.device_sequence IS NULL)
                """, [kind, itemID.databaseValue])
        }
        var statements: [StagedStatement] = []
        if let existing, existing != id {
            statements.append(enqueue(existing))
            statements.append(
                StagedStatement(
                    "UPDATE sync_records SET item_id = ? WHERE item_class = ? AND item_id = ?",
                    [syncs ? id.databaseValue : DatabaseValue.null, kind, existing.databaseValue]))
        } else if let existing, !syncs {
            statements.append(enqueue(existing))
            statements.append(
                StagedStatement("UPDATE sync_records SET item_id = NULL WHERE item_class = ? AND item_id = ?", [kind, existing.databaseValue]))
        }
        guard syncs else { return statements }
        statements.append(
            StagedStatement(
                """
                INSERT INTO sync_records (record_id, item_class, item_id, version_counter) SELECT ?, ?, ?, 0
                WHERE EXISTS (SELECT 1 FROM \(itemClass.table) WHERE id = ? AND primary_key_tag = ?)
                AND NOT EXISTS (SELECT 1 FROM sync_records WHERE item_class = ? AND item_id = ?)
                """,
                [
                    UUID().uuidString.databaseValue, kind, id.databaseValue, id.databaseValue, primaryKeyTag.databaseValue, kind,
                    id.databaseValue,
                ]))
        statements.append(enqueue(id))
        return statements
    }

    /// Whether the stored item `existing` is `item`: the same attributes and the same secret.
    private func isIdentical(_ existing: StoredItem, to item: BackedUpItem, _ db: Database) throws -> Bool {
        guard existing.protectionClass == item.protectionClass.rawValue else { return false }
        let classKey = try KeychainStore.mapKeybag { try keychain.keybag.classKey(for: item.protectionClass) }
        let key = try keychain.metadataKey(item.itemClass, item.protectionClass, classKey: classKey, db: db, create: false)
        let sealing = keychain.sealing
        let attributes = try sealing.decodeMetadata(try sealing.openMetadataJSON(existing, itemClass: item.itemClass, key: key), of: existing)
        let secret = try sealing.openSecret(existing, itemClass: item.itemClass, classKey: classKey)
        return attributes == item.attributes && ConstantTime.equals(secret, item.secret)
    }

    /// The metadata key the staged rows of (`itemClass`, `protectionClass`) are sealed under:
    /// the one the database holds, or a new one staged with the first such row. Either way the
    /// commit checks that the database holds that key and no other.
    private func stagedMetadataKey(
        _ itemClass: ItemClass, _ protectionClass: ProtectionClass, classKey: SymmetricKey, _ db: Database
    ) throws -> (SymmetricKey, [StagedStatement]) {
        let name = "\(itemClass.rawValue)/\(protectionClass.rawValue)"
        if let key = metadataKeys[name] { return (key, []) }
        let stored = try Data.fetchOne(
            db, sql: "SELECT wrapped_key FROM metadata_keys WHERE item_class = ? AND pdmn = ?",
            arguments: [itemClass.rawValue, protectionClass.rawValue])
        let key: SymmetricKey
        let wrapped: Data
        if let stored {
            do {
                key = try KeyWrap.unwrap(stored, using: classKey)
            } catch {
                throw KeychainError.decode("the metadata key of \(itemClass.humanName) / \(protectionClass.rawValue) items is damaged")
            }
            wrapped = stored
        } else {
            key = SecureRandom.key(bitCount: 256)
            wrapped = try KeyWrap.wrap(key, using: classKey)
        }
        metadataKeys[name] = key
        let arguments = [itemClass.rawValue.databaseValue, protectionClass.rawValue.databaseValue, wrapped.databaseValue]
        return (
            key,
            [
                StagedStatement("INSERT OR IGNORE INTO metadata_keys (item_class, pdmn, wrapped_key) VALUES (?, ?, ?)", arguments),
                StagedStatement(
                    .expect,
                    """
                    SELECT NOT EXISTS (SELECT 1 FROM metadata_keys WHERE item_class = ? AND pdmn = ? AND wrapped_key != ?)
                    """, arguments),
            ]
        )
    }
}
