import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorModel

/// A syncing item as a record carries it: its class, its attributes as stored (group, protection
/// class, dates) and its secret — never the row id, which is this keychain's own.
public struct SyncedItem: Codable, Equatable, Sendable {
    public var itemClass: ItemClass
    public var attributes: ItemAttributes
    public var secret: Data

    /// - Parameters:
    ///   - itemClass: the item's class.
    ///   - attributes: its attributes as stored.
    ///   - secret: its secret.
    public init(itemClass: ItemClass, attributes: ItemAttributes, secret: Data) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.secret = secret
    }

    /// The protection class (every stored item has one).
    public var protectionClass: ProtectionClass { attributes.accessible ?? .default }

    /// The item's bytes (JSON, sorted keys, dates in seconds since 1970): a record's payload.
    /// - Returns: the encoded item.
    /// - Throws: an encoding error.
    public func encoded() throws -> Data { try ItemAttributes.encoder.encode(self) }

    /// Reads an item's bytes.
    /// - Parameter encoded: what ``encoded()`` made.
    /// - Throws: ``KeychainError/decode(_:)`` for bytes that are not an item.
    public init(encoded: Data) throws {
        do {
            self = try ItemAttributes.decoder.decode(SyncedItem.self, from: encoded)
        } catch {
            throw KeychainError.decode("not a keychain item's encoded form")
        }
    }
}

/// What this keychain knows of one record id.
public struct SyncRecordState: Sendable, Equatable {
    public let recordID: String
    public let itemClass: ItemClass
    /// The item the record is, or nil once deleted here (or merged into another record's item).
    public let itemID: Int64?
    /// The server counter of the version held: what a change made here names as its base.
    public let versionCounter: UInt64
    /// Whether a change of it waits in the outbox: it will be ordered after anything arriving now.
    public let hasPendingChange: Bool
}

/// One change waiting to go out. Sealed once (its device sequence, base and body fixed), it is
/// sent as it is until the server answers, so a retried push is the same push.
public struct OutboxEntry: Sendable, Equatable {
    public let id: Int64
    public let recordID: String
    /// Set once sealed.
    public let deviceSequence: UInt64?
    public let baseCounter: UInt64?
    public let isTombstone: Bool?
    public let body: Data?
}

/// The outcome of writing an arriving item.
public enum SyncedItemWrite: Sendable, Equatable {
    case written
    /// Another item holds the same primary key: the item of `record` (nil: an item of no record).
    case collides(itemID: Int64, record: SyncRecordState?)
}

/// A losing version kept by a conflict (``KeychainStore/syncConflicts()``).
public struct KeptConflict: Sendable, Equatable {
    public let id: String
    public let recordID: String
    /// The server counter of the losing version (0 for a change of this device not yet sent).
    public let counter: UInt64
    public let protectionClass: ProtectionClass
    /// The item, or nil while its class is locked.
    public let item: SyncedItem?
}

/// A change that arrived and waits (a locked class, a held mass deletion), still sealed.
public struct HeldRecord: Sendable, Equatable {
    public let counter: UInt64
    public let recordID: String
    public let reason: String
    /// The record as the server served it (its sealed body).
    public let record: Data
}

/// The sync engine's access to this keychain's database, inside one write transaction
/// (``KeychainStore/syncTransaction(_:)``): items written or deleted here record nothing in the
/// outbox — they are what arrived — and everything commits together with the engine's state.
/// What runs once per arriving record is a cached statement (`cachedStatement(sql:)`): a new
/// device's first sync runs each of them thousands of times.
public struct KeychainSyncTransaction {
    let keychain: KeychainStore
    let db: Database

    // MARK: State

    /// A value the engine keeps (its progress, its device sequence, its deletion window).
    /// - Parameter name: the value's name.
    /// - Returns: the bytes stored, or nil.
    /// - Throws: storage errors.
    public func state(named name: String) throws -> Data? {
        try Data.fetchOne(db, sql: "SELECT value FROM sync_state WHERE name = ?", arguments: [name])
    }

    /// Stores a value of the engine.
    /// - Parameters:
    ///   - value: the bytes.
    ///   - name: the value's name.
    /// - Throws: storage errors.
    public func setState(_ value: Data, named name: String) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO sync_state (name, value) VALUES (?, ?)", arguments: [name, value])
    }

    // MARK: Records

    /// What this keychain knows of a record.
    /// - Parameter recordID: the record id.
    /// - Returns: its state, or nil for a record never seen.
    /// - Throws: storage errors.
    public func record(_ recordID: String) throws -> SyncRecordState? {
        try fetchRecord("record_id = ?", [recordID])
    }

    private func fetchRecord(_ filter: String, _ arguments: StatementArguments) throws -> SyncRecordState? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT record_id, item_class, item_id, version_counter,
                            EXISTS (SELECT 1 FROM sync_outbox o WHERE o.record_id = r.record_id)
                        FROM sync_records r WHERE \(filter)
                        """), arguments: arguments)
        else { return nil }
        let itemClass = ItemClass(rawValue: row[1]) ?? .genericPassword
        let counter: Int64 = row[3]
        return SyncRecordState(recordID: row[0], itemClass: itemClass, itemID: row[2], versionCounter: UInt64(counter), hasPendingChange: row[4])
    }

    /// Records the version of a record held here (and which item it is).
    /// - Parameters:
    ///   - recordID: the record.
    ///   - itemClass: its item's class.
    ///   - itemID: its item, or nil when it has none here.
    ///   - counter: the server counter of the version held.
    /// - Throws: storage errors.
    public func setRecord(_ recordID: String, itemClass: ItemClass, itemID: Int64?, counter: UInt64) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO sync_records (record_id, item_class, item_id, version_counter) VALUES (?, ?, ?, ?)
                ON CONFLICT (record_id) DO UPDATE SET item_class = excluded.item_class, item_id = excluded.item_id,
                    version_counter = excluded.version_counter
                """
        ).execute(arguments: [recordID, itemClass.rawValue, itemID, Int64(counter)])
    }

    /// The item a record is, opened.
    /// - Parameter record: a record with an item.
    /// - Returns: the item, or nil when the record has none here.
    /// - Throws: ``KeychainError/interactionNotAllowed(_:)`` while its class is locked;
    ///   ``KeychainError/decode(_:)`` for a damaged row.
    public func item(of record: SyncRecordState) throws -> SyncedItem? {
        guard let id = record.itemID else { return nil }
        return try item(itemClass: record.itemClass, id: id)
    }

    func item(itemClass: ItemClass, id: Int64) throws -> SyncedItem? {
        guard let stored = try StoredItem.fetchOne(db, sql: "SELECT \(StoredItem.selection) FROM \(itemClass.table) WHERE id = ?", arguments: [id])
        else { return nil }
        guard let protectionClass = ProtectionClass(rawValue: stored.protectionClass) else {
            throw KeychainError.decode("item \(id) has an unknown protection class")
        }
        let classKey = try KeychainStore.mapKeybag { try keychain.keybag.classKey(for: protectionClass) }
        let key = try keychain.metadataKey(itemClass, protectionClass, classKey: classKey, db: db, create: false)
        let attributes = try keychain.sealing.decodeMetadata(
            try keychain.sealing.openMetadataJSON(stored, itemClass: itemClass, key: key), of: stored)
        let secret = try keychain.sealing.openSecret(stored, itemClass: itemClass, classKey: classKey)
        return SyncedItem(itemClass: itemClass, attributes: attributes, secret: secret)
    }

    /// Checks that a protection class's key is available now, before anything is written.
    /// - Parameter protectionClass: the class an arriving item is in.
    /// - Throws: ``KeychainError/interactionNotAllowed(_:)`` while it is locked.
    public func requireAvailable(_ protectionClass: ProtectionClass) throws {
        _ = try KeychainStore.mapKeybag { try keychain.keybag.classKey(for: protectionClass) }
    }

    /// How many items of this keychain sync (the base of a mass deletion's quarter).
    /// - Returns: the count of records that are an item here.
    /// - Throws: storage errors.
    public func syncingItemCount() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_records WHERE item_id IS NOT NULL") ?? 0
    }

    // MARK: Writing what arrived

    /// Makes `item` the content of `recordID` (a new row, or its row rewritten), unless another
    /// item holds its primary key. With `replacing`, that other item's row is rewritten instead
    /// and its record loses it (the arriving record won the primary key).
    /// - Parameters:
    ///   - item: the arriving item; it must be one that syncs.
    ///   - recordID: its record.
    ///   - counter: the server counter of this version.
    ///   - replacing: the row of another record to take over, after a collision it won.
    /// - Returns: ``SyncedItemWrite/written``, or the collision.
    /// - Throws: ``KeychainError/param(_:)`` for an item that does not sync or is invalid;
    ///   ``KeychainError/interactionNotAllowed(_:)`` while its class is locked.
    public func write(_ item: SyncedItem, recordID: String, counter: UInt64, replacing: Int64? = nil) throws -> SyncedItemWrite {
        let itemClass = item.itemClass
        let attributes = item.attributes
        try attributes.validate(for: itemClass, purpose: .query)
        guard keychain.mayArrive(attributes), let group = attributes.accessGroup, !group.isEmpty else {
            throw KeychainError.param("an arriving item that does not sync")
        }
        guard item.secret.count <= KeychainStore.maximumSecretBytes else { throw KeychainError.param("the secret is too large") }
        let protectionClass = item.protectionClass
        let classKey = try KeychainStore.mapKeybag { try keychain.keybag.classKey(for: protectionClass) }
        let sealing = keychain.sealing
        let values = AttributeValues(attributes)
        let table = itemClass.table
        let primaryKeyTag = sealing.primaryKeyTag(values, itemClass: itemClass)
        let existing = try record(recordID)
        var ownRow = existing?.itemClass == itemClass ? existing?.itemID : nil
        let holder = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(table) WHERE primary_key_tag = ?"), arguments: [primaryKeyTag])
        if let holder, holder != ownRow, holder != replacing {
            // Nothing written yet: the caller decides which of the two keeps the primary key.
            return .collides(itemID: holder, record: try fetchRecord("item_class = ? AND item_id = ?", [itemClass.rawValue, holder]))
        }
        if let old = existing?.itemID, existing?.itemClass != itemClass {
            try db.execute(sql: "DELETE FROM \(existing!.itemClass.table) WHERE id = ?", arguments: [old])
        }
        if let holder, holder != ownRow {
            // The arriving record wins the primary key: its own row (if any) goes, the holder's is rewritten.
            if let ownRow { try db.execute(sql: "DELETE FROM \(table) WHERE id = ?", arguments: [ownRow]) }
            try db.execute(sql: "UPDATE sync_records SET item_id = NULL WHERE item_class = ? AND item_id = ?", arguments: [table, holder])
            ownRow = holder
        }
        let id = try ownRow ?? newRowID(table)
        let key = try keychain.metadataKey(itemClass, protectionClass, classKey: classKey, db: db, create: true)
        let rowKey = SecureRandom.key(bitCount: 256)
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO \(table) (id, pdmn, primary_key_tag, lookup_tag, group_tag, metadata, row_key, secret, custom_indexed)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
                """
        ).execute(arguments: [
            id, protectionClass.rawValue, primaryKeyTag, sealing.lookupTag(values, itemClass: itemClass), sealing.groupTag(group),
            try sealing.sealMetadata(attributes, itemClass: itemClass, id: id, key: key), try KeyWrap.wrap(rowKey, using: classKey),
            try sealing.sealSecret(item.secret, itemClass: itemClass, id: id, rowKey: rowKey),
        ])
        try keychain.replaceAttributeTags(db, itemClass: itemClass, id: id, values: values)
        try setRecord(recordID, itemClass: itemClass, itemID: id, counter: counter)
        try forgetConflicts(becoming: item, recordID: recordID)
        return .written
    }

    /// A kept version that has become the item — restored on another device, arriving here — is
    /// no longer a losing version: it leaves the list on every device that kept it.
    private func forgetConflicts(becoming item: SyncedItem, recordID: String) throws {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, pdmn, sealed FROM sync_conflicts WHERE record_id = ?"), arguments: [recordID])
        for row in rows {
            let id: String = row[0]
            // One of a locked class cannot be compared: it stays.
            guard let kept = try? keychain.openConflict(id: id, sealed: row[2], protectionClass: ProtectionClass(rawValue: row[1]) ?? .default),
                kept == item
            else { continue }
            try db.execute(sql: "DELETE FROM sync_conflicts WHERE id = ?", arguments: [id])
        }
    }

    private func newRowID(_ table: String) throws -> Int64 {
        var id: Int64
        repeat {
            id = Int64.random(in: 1...Int64.max)
        } while try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(table) WHERE id = ?"), arguments: [id]) ?? false
        return id
    }

    /// Deletes the item of a record (a tombstone that won), keeping the record's version.
    /// - Parameters:
    ///   - recordID: the record.
    ///   - counter: the server counter of the tombstone.
    /// - Throws: storage errors.
    public func deleteItem(of recordID: String, counter: UInt64) throws {
        guard let record = try record(recordID) else { return }
        if let id = record.itemID { try db.execute(sql: "DELETE FROM \(record.itemClass.table) WHERE id = ?", arguments: [id]) }
        try setRecord(recordID, itemClass: record.itemClass, itemID: nil, counter: counter)
    }

    // MARK: Outbox

    /// The changes waiting to go out: the sealed ones in device-sequence order, then the others.
    /// - Returns: the outbox's entries.
    /// - Throws: storage errors.
    public func outbox() throws -> [OutboxEntry] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT id, record_id, device_sequence, base_counter, tombstone, body FROM sync_outbox
                ORDER BY device_sequence IS NULL, device_sequence, id
                """
        ).map(Self.outboxEntry)
    }

    /// The records with a change of this device waiting to go out, without reading the changes.
    /// - Returns: their record ids.
    /// - Throws: storage errors.
    public func outboxRecordIDs() throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT DISTINCT record_id FROM sync_outbox"))
    }

    /// How many changes wait to be sent (`tresor sync status`), without reading them.
    /// - Returns: the number of outbox entries.
    /// - Throws: storage errors.
    public func outboxCount() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_outbox") ?? 0
    }

    /// The sealed entries, the first `limit` in device-sequence order: what a push sends next.
    /// - Parameter limit: the most entries read.
    /// - Returns: sealed entries, oldest sequence first.
    /// - Throws: storage errors.
    public func sealedOutbox(limit: Int) throws -> [OutboxEntry] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT id, record_id, device_sequence, base_counter, tombstone, body FROM sync_outbox
                WHERE device_sequence IS NOT NULL ORDER BY device_sequence LIMIT ?
                """, arguments: [limit]
        ).map(Self.outboxEntry)
    }

    /// How many sealed entries wait for an answer, counted up to `limit`.
    /// - Parameter limit: where counting stops.
    /// - Returns: the count, at most `limit`.
    /// - Throws: storage errors.
    public func sealedOutboxCount(upTo limit: Int) throws -> Int {
        try Int.fetchOne(
            db, sql: "SELECT COUNT(*) FROM (SELECT 1 FROM sync_outbox WHERE device_sequence IS NOT NULL LIMIT ?)", arguments: [limit]) ?? 0
    }

    /// The entries not sealed yet after `id`, in the order they were recorded — a page of the
    /// outbox read by its id, so a push reads each entry once however many wait.
    /// - Parameters:
    ///   - id: the last entry read before (0 for the first page).
    ///   - limit: the most entries read.
    /// - Returns: each entry, and whether a sealed entry of the same record waits for its answer.
    /// - Throws: storage errors.
    public func unsealedOutbox(after id: Int64, limit: Int) throws -> [(entry: OutboxEntry, behindSealed: Bool)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT o.id, o.record_id, o.device_sequence, o.base_counter, o.tombstone, o.body,
                    EXISTS (SELECT 1 FROM sync_outbox s WHERE s.record_id = o.record_id AND s.device_sequence IS NOT NULL)
                FROM sync_outbox o WHERE o.device_sequence IS NULL AND o.id > ? ORDER BY o.id LIMIT ?
                """, arguments: [id, limit]
        ).map { row in (Self.outboxEntry(row), row[6]) }
    }

    private static func outboxEntry(_ row: Row) -> OutboxEntry {
        let sequence: Int64? = row[2], base: Int64? = row[3]
        return OutboxEntry(
            id: row[0], recordID: row[1], deviceSequence: sequence.map(UInt64.init), baseCounter: base.map(UInt64.init),
            isTombstone: row[4], body: row[5])
    }

    /// Fixes what an entry sends: sealed once, the same bytes go out until the server answers.
    /// - Parameters:
    ///   - entry: an entry not sealed yet.
    ///   - deviceSequence: this device's number for the change.
    ///   - baseCounter: the version it was made from.
    ///   - isTombstone: whether it says the item is gone.
    ///   - body: the sealed record.
    /// - Throws: storage errors.
    public func seal(_ entry: OutboxEntry, deviceSequence: UInt64, baseCounter: UInt64, isTombstone: Bool, body: Data) throws {
        try db.execute(
            sql: "UPDATE sync_outbox SET device_sequence = ?, base_counter = ?, tombstone = ?, body = ? WHERE id = ? AND device_sequence IS NULL",
            arguments: [Int64(deviceSequence), Int64(baseCounter), isTombstone, body, entry.id])
    }

    /// The server stored an entry under `counter`: the entry leaves the outbox and the counter
    /// becomes the record's version — unless what arrived meanwhile made the item something
    /// else than what was sent (a deletion sent while an edit brought the item back).
    /// - Parameters:
    ///   - entry: a sealed entry.
    ///   - counter: the server's counter for it.
    /// - Throws: storage errors.
    public func confirm(_ entry: OutboxEntry, counter: UInt64) throws {
        try db.execute(sql: "DELETE FROM sync_outbox WHERE id = ?", arguments: [entry.id])
        guard let record = try record(entry.recordID) else { return }
        if (record.itemID == nil) == (entry.isTombstone ?? false), counter > record.versionCounter {
            try setRecord(record.recordID, itemClass: record.itemClass, itemID: record.itemID, counter: counter)
        }
    }

    // MARK: Conflicts

    /// Keeps a losing version, sealed under a key of its own protection class.
    /// - Parameters:
    ///   - item: the losing version.
    ///   - recordID: the record it was a version of.
    ///   - counter: its server counter (0 for a change of this device not sent yet).
    /// - Returns: the conflict's id.
    /// - Throws: ``KeychainError/interactionNotAllowed(_:)`` while its class is locked.
    @discardableResult
    public func keepConflict(_ item: SyncedItem, recordID: String, counter: UInt64) throws -> String {
        let id = UUID().uuidString
        let sealed = try Envelope.seal(
            try item.encoded(), using: try keychain.conflictKey(item.protectionClass),
            authenticating: keychain.conflictAssociatedData(id))
        try db.execute(
            sql: "INSERT INTO sync_conflicts (id, record_id, pdmn, counter, sealed) VALUES (?, ?, ?, ?, ?)",
            arguments: [id, recordID, item.protectionClass.rawValue, Int64(counter), sealed])
        return id
    }

    // MARK: Held

    /// Keeps an arriving change for later, still sealed.
    /// - Parameters:
    ///   - record: the change as served (its encoded form).
    ///   - counter: its server counter.
    ///   - recordID: its record.
    ///   - reason: why it waits (`locked`, `deletion`).
    /// - Throws: storage errors.
    public func hold(_ record: Data, counter: UInt64, recordID: String, reason: String) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO sync_held (counter, record_id, reason, record) VALUES (?, ?, ?, ?)",
            arguments: [Int64(counter), recordID, reason, record])
    }

    /// The changes waiting, oldest first.
    /// - Returns: the held changes.
    /// - Throws: storage errors.
    public func held() throws -> [HeldRecord] {
        try Row.fetchAll(db, sql: "SELECT counter, record_id, reason, record FROM sync_held ORDER BY counter").map { row in
            let counter: Int64 = row[0]
            return HeldRecord(counter: UInt64(counter), recordID: row[1], reason: row[2], record: row[3])
        }
    }

    /// Records the padded size of the last version of `recordID` the server holds (one this
    /// device sealed, or one that arrived), which its tombstone takes.
    /// - Parameters:
    ///   - size: the padded plaintext's size.
    ///   - recordID: the record (nothing is written for one not recorded here).
    /// - Throws: storage errors.
    public func setPaddedSize(_ size: Int, of recordID: String) throws {
        try db.cachedStatement(sql: "UPDATE sync_records SET padded_size = ? WHERE record_id = ?").execute(arguments: [size, recordID])
    }

    /// The padded size of `recordID`'s last version (``setPaddedSize(_:of:)``); nil when none was recorded.
    /// - Parameter recordID: the record.
    /// - Returns: the size.
    /// - Throws: storage errors.
    public func paddedSize(of recordID: String) throws -> Int? {
        try Int.fetchOne(db, sql: "SELECT padded_size FROM sync_records WHERE record_id = ?", arguments: [recordID])
    }

    // MARK: Another device or account

    /// Makes every sealed change wait to be sealed again: they carry the sequence of a device
    /// identity this device no longer has (it left the account and joined again), which the
    /// server would refuse under the new one. A sealed change whose record has a later change
    /// waiting is dropped, as that one covers it.
    /// - Returns: how many changes were unsealed or dropped.
    /// - Throws: storage errors.
    @discardableResult
    public func unsealOutbox() throws -> Int {
        try db.execute(
            sql: """
                DELETE FROM sync_outbox WHERE device_sequence IS NOT NULL
                    AND record_id IN (SELECT record_id FROM sync_outbox WHERE device_sequence IS NULL);
                """)
        var changed = db.changesCount
        try db.execute(
            sql: "UPDATE sync_outbox SET device_sequence = NULL, base_counter = NULL, tombstone = NULL, body = NULL WHERE device_sequence IS NOT NULL"
        )
        changed += db.changesCount
        return changed
    }

    /// Forgets what this keychain knows of the sync account it synced with before — the
    /// records and their versions, the changes waiting to go out and those held, the engine's
    /// state — so that another account gets every item that syncs as new
    /// (``KeychainStore/recordSyncingItemsWithoutRecord()``). The conflicts kept stay: they are
    /// the user's versions, restorable as changes of this device.
    /// - Throws: storage errors.
    public func forgetSyncAccount() throws {
        try db.execute(sql: "DELETE FROM sync_outbox; DELETE FROM sync_held; DELETE FROM sync_records; DELETE FROM sync_state")
    }

    /// Forgets a held change (applied now).
    /// - Parameter counter: its server counter.
    /// - Throws: storage errors.
    public func release(_ counter: UInt64) throws {
        try db.execute(sql: "DELETE FROM sync_held WHERE counter = ?", arguments: [Int64(counter)])
    }
}

extension KeychainStore {
    /// Runs `body` in one write transaction of this keychain's database: what the sync engine
    /// applies and the state it keeps commit together, or not at all.
    /// - Parameter body: the engine's work.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (nothing is kept then); storage errors.
    public func syncTransaction<T>(_ body: (KeychainSyncTransaction) throws -> T) throws -> T {
        let result = try write { db in try body(KeychainSyncTransaction(keychain: self, db: db)) }
        // What an arriving change replaced or deleted must not linger in the WAL (as after `delete`).
        checkpoint.request()
        return result
    }

    /// The key a conflict's losing version is sealed under: derived from its class key, so it
    /// opens exactly when an item of that class would.
    func conflictKey(_ protectionClass: ProtectionClass) throws -> SymmetricKey {
        let classKey = try Self.mapKeybag { try keybag.classKey(for: protectionClass) }
        return KeyDerivation.hkdfSHA256(inputKeyMaterial: classKey, salt: Data(), info: "tresor.keychain.v1.sync-conflict." + name)
    }

    func conflictAssociatedData(_ id: String) -> Data {
        Data("tresor.keychain.\(ItemSealing.formatVersion)/\(name)/sync_conflicts/\(id)".utf8)
    }

    /// The losing versions kept by conflicts, oldest first; an item is nil while its class is locked.
    /// - Returns: the conflicts.
    /// - Throws: storage errors (a damaged one is listed without its item).
    public func syncConflicts() throws -> [KeptConflict] {
        let rows = try read { db in try Row.fetchAll(db, sql: "SELECT id, record_id, pdmn, counter, sealed FROM sync_conflicts ORDER BY rowid") }
        return rows.map { row in
            let id: String = row[0], counter: Int64 = row[3]
            let protectionClass = ProtectionClass(rawValue: row[2]) ?? .default
            return KeptConflict(
                id: id, recordID: row[1], counter: UInt64(counter), protectionClass: protectionClass,
                item: try? openConflict(id: id, sealed: row[4], protectionClass: protectionClass))
        }
    }

    func openConflict(id: String, sealed: Data, protectionClass: ProtectionClass) throws -> SyncedItem {
        let key = try conflictKey(protectionClass)
        guard let json = try? Envelope.open(sealed, using: key, authenticating: conflictAssociatedData(id)),
            let item = try? SyncedItem(encoded: json)
        else { throw KeychainError.decode("the kept conflict \(id) is damaged or was altered") }
        return item
    }

    /// A losing version's secret, shown to `caller` as reading the item's would be: the
    /// keychain-access tool needs the user present, a `userPresence` version asks every time.
    /// - Parameters:
    ///   - id: the conflict's id (``KeptConflict/id``).
    ///   - caller: who asks.
    /// - Returns: the kept secret.
    /// - Throws: ``KeychainError/itemNotFound`` for an unknown id; ``KeychainError/presenceRequired(_:)``;
    ///   ``KeychainError/interactionNotAllowed(_:)`` while its class is locked.
    public func syncConflictSecret(_ id: String, caller: Caller) throws -> Data {
        let item = try read { db in try keptConflict(id, db).item }
        try Self.requireGroup(item.attributes.accessGroup ?? "", caller: caller)
        var verified = false
        try requirePresence(presenceToRead(item.attributes, caller: caller), caller: caller, verified: &verified)
        return item.secret
    }

    /// Forgets a losing version: the item stays as it is, here and on the other devices.
    /// - Parameters:
    ///   - id: the conflict's id (``KeptConflict/id``).
    ///   - caller: who asks; discarding another application's version needs the user present,
    ///     as deleting its item does.
    /// - Throws: ``KeychainError/itemNotFound`` for an unknown id; ``KeychainError/presenceRequired(_:)``;
    ///   ``KeychainError/interactionNotAllowed(_:)`` while its class is locked.
    public func discardSyncConflict(_ id: String, caller: Caller) throws {
        try write { db in
            let item = try keptConflict(id, db).item
            var verified = false
            try requirePresence(presenceToChange(group: item.attributes.accessGroup, caller: caller), caller: caller, verified: &verified)
            try db.execute(sql: "DELETE FROM sync_conflicts WHERE id = ?", arguments: [id])
        }
    }

    /// The record of conflict `id`, and its losing version opened.
    private func keptConflict(_ id: String, _ db: Database) throws -> (recordID: String, item: SyncedItem) {
        guard let row = try Row.fetchOne(db, sql: "SELECT record_id, pdmn, sealed FROM sync_conflicts WHERE id = ?", arguments: [id]) else {
            throw KeychainError.itemNotFound
        }
        let protectionClass = ProtectionClass(rawValue: row[1]) ?? .default
        do {
            return (row[0], try openConflict(id: id, sealed: row[2], protectionClass: protectionClass))
        } catch KeychainError.interactionNotAllowed {
            throw KeychainError.interactionNotAllowed("the kept version's protection class is locked: tresor unlock")
        }
    }

    /// Brings a losing version back: it replaces the item holding its primary key (or is added),
    /// as a change of this device that goes out to the others, and the conflict is forgotten.
    /// Replacing a secret needs `caller` present as reading it does (``syncConflictSecret(_:caller:)``).
    /// - Parameters:
    ///   - id: the conflict's id (``KeptConflict/id``).
    ///   - caller: who asks.
    /// - Throws: ``KeychainError/itemNotFound`` for an unknown id; ``KeychainError/presenceRequired(_:)``;
    ///   ``KeychainError/interactionNotAllowed(_:)`` while its class is locked.
    public func restoreSyncConflict(_ id: String, caller: Caller) throws {
        try write { db in
            let (recordID, item) = try keptConflict(id, db)
            var verified = false
            let presence = max(
                presenceToRead(item.attributes, caller: caller), presenceToChange(group: item.attributes.accessGroup, caller: caller))
            try requirePresence(presence, caller: caller, verified: &verified)
            let transaction = KeychainSyncTransaction(keychain: self, db: db)
            let current = try transaction.record(recordID)
            if case .collides(let holder, _) = try transaction.write(item, recordID: recordID, counter: current?.versionCounter ?? 0) {
                _ = try transaction.write(item, recordID: recordID, counter: current?.versionCounter ?? 0, replacing: holder)
            }
            try Self.enqueue(db, recordID: recordID)
            try db.execute(sql: "DELETE FROM sync_conflicts WHERE id = ?", arguments: [id])
        }
    }
}
