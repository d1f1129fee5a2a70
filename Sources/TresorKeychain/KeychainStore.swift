import Crypto
import Foundation
import GRDB
import Synchronization
import TresorCrypto
import TresorKeybag
import TresorStorage
import TresorSystem

/// One keychain: items of the four classes, sealed at rest with two keys per item and found
/// through blind indexes (docs/FORMAT.md, "Keychains"). Every operation checks the caller's access
/// groups and the keybag's lock state for the item's protection class.
///
/// ```swift
/// let keychain = try KeychainStore(file: home.appendingPathComponent("login.keychain"), keybag: keybag)
/// var attributes = ItemAttributes()
/// attributes.service = "github.com"
/// attributes.account = "ada"
/// try keychain.add(.genericPassword, attributes: attributes, secret: Data("token".utf8), caller: caller)
/// ```
public final class KeychainStore: Sendable {
    /// The largest secret an item holds (``TresorModel/ItemLimits/secretBytes``).
    public static let maximumSecretBytes = ItemLimits.secretBytes

    public let name: String
    /// Whether this keychain's items may sync at all: only the login keychain's (the default
    /// name) do (docs/SYNC.md).
    var canSync: Bool { name == "login" }
    /// The database file.
    let file: URL
    let database: DatabasePool
    /// A read-only connection of the keychain's own for the reads an index or an id answers —
    /// one short statement each, without the pool's semaphore and dispatch hops. Scans keep the
    /// pool, so a long one never holds a lookup up.
    let lookupReader: DatabaseQueue
    /// The keybag whose class keys protect this keychain's items.
    public let keybag: Keybag
    let sealing: ItemSealing
    /// The applications registered with this keychain's home.
    public let applications: ApplicationRegistry
    let metadataKeys = Mutex<[String: SymmetricKey]>([:])
    /// The truncating checkpoint after an update, a delete or a purge, off the request's path:
    /// the old rows' ciphertext leaves the WAL within ``DeferredCheckpoint/bound``, or before a
    /// lock is answered (``completePendingCheckpoint()``). The sync ledger's writes request it too.
    let checkpoint: DeferredCheckpoint
    /// The protection classes available at the last ``indexRowsOfUnlockedClasses()``.
    let classesIndexed = Mutex<Set<ProtectionClass>>([])
    /// How many rows' attributes searches have opened: what the tests read to prove that a
    /// search through an index opens its matches, not every row.
    let metadataOpenCount = Atomic<Int>(0)

    public init(file: URL, keybag: Keybag, name: String = "login") throws {
        self.name = name
        self.file = file
        self.keybag = keybag
        do {
            database = try KeychainDatabase.open(at: file)
            lookupReader = try SealedDatabase.openReader(at: file)
        } catch {
            if let refusal = StorageRefusal(error) { throw refusal }
            throw KeychainError.storage("cannot open \(file.lastPathComponent): \(error)")
        }
        checkpoint = DeferredCheckpoint(pool: database)
        applications = ApplicationRegistry(database: database, keybag: keybag)
        let always = try Self.mapKeybag { try keybag.classKey(for: .alwaysThisDeviceOnly) }
        sealing = ItemSealing(
            keychainName: name,
            indexKey: PreparedHMACKey(KeyDerivation.hkdfSHA256(inputKeyMaterial: always, salt: Data(), info: "tresor.keychain.v1.index." + name)))
    }

    /// When this keychain's database file was made: its file system's birth time, nil where
    /// none is kept.
    public var created: Date? { FileBirth.time(of: file.path) }

    /// Whether this keychain was opened on a read-only file system that is writable again: it
    /// refuses every write until a new `KeychainStore` is opened on the same file (the daemon opens
    /// one at the next request, so writing resumes without a restart).
    public var needsReopeningToWrite: Bool { SealedDatabase.isReadOnlyOnAWritableFileSystem(database, at: file) }

    /// Closes the database's connections, before a new `KeychainStore` is opened on the same file
    /// (``needsReopeningToWrite``): SQLite shares a file's WAL index between the connections of
    /// one process, and a read-only connection still open would keep the new one read-only.
    /// Waits for the reads and writes in progress; any later one through this instance fails.
    public func close() {
        checkpoint.finish()
        try? lookupReader.close()
        try? database.close()
    }

    // MARK: Add

    /// Adds an item (`SecItemAdd`). Fails with ``KeychainError/duplicateItem`` when an item of
    /// the same class has the same primary key, whatever its protection class.
    /// - Parameters:
    ///   - dates: the creation and modification dates to keep instead of now — an item copied
    ///     from another keychain keeps its own (a modification before the creation becomes it).
    /// - Returns: the new item, its attributes as stored, without its secret.
    /// - Throws: ``KeychainError``.
    @discardableResult
    public func add(
        _ itemClass: ItemClass, attributes given: ItemAttributes, secret: Data, caller: Caller, dates: (created: Date, modified: Date)? = nil
    ) throws -> KeychainItem {
        try given.validate(for: itemClass, purpose: .add)
        try Self.checkSize(of: secret)
        var attributes = given
        if itemClass == .certificate { attributes = try CertificateAttributes.fill(attributes, der: secret) }
        attributes.accessGroup = attributes.accessGroup ?? caller.defaultAccessGroup
        attributes.accessible = attributes.accessible ?? .default
        attributes.synchronizable = attributes.synchronizable ?? false
        let group = attributes.accessGroup!
        try Self.requireGroup(group, caller: caller)
        let protectionClass = attributes.accessible!
        try checkPasscodeNeeds(of: attributes)
        try Self.checkReadableByScripts(attributes)
        try Self.checkSynchronizable(attributes)
        try checkSynchronizableHere(attributes.synchronizable)
        // Planting an item in another application's group is changing what it reads.
        var verified = false
        try requirePresence(presenceToChange(group: group, caller: caller), caller: caller, verified: &verified)
        let now = Date()
        attributes.creationDate = dates?.created ?? now
        attributes.modificationDate = dates.map { max($0.created, $0.modified) } ?? now

        let classKey = try Self.mapKeybag { try keybag.classKey(for: protectionClass) }
        let rowKey = SecureRandom.key(bitCount: 256)
        let id = Int64.random(in: 1...Int64.max)
        let values = AttributeValues(attributes)
        try write { db in
            let key = try self.metadataKey(itemClass, protectionClass, classKey: classKey, db: db, create: true)
            try db.execute(
                sql: """
                    INSERT INTO \(itemClass.table) (id, pdmn, primary_key_tag, lookup_tag, group_tag, metadata, row_key, secret, custom_indexed)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)
                    """,
                arguments: [
                    id, protectionClass.rawValue, sealing.primaryKeyTag(values, itemClass: itemClass),
                    sealing.lookupTag(values, itemClass: itemClass), sealing.groupTag(group),
                    try sealing.sealMetadata(attributes, itemClass: itemClass, id: id, key: key),
                    try KeyWrap.wrap(rowKey, using: classKey),
                    try sealing.sealSecret(secret, itemClass: itemClass, id: id, rowKey: rowKey),
                ])
            try replaceAttributeTags(db, itemClass: itemClass, id: id, values: values)
            if try syncs(attributes, db) { try recordSyncChange(db, itemClass: itemClass, id: id, syncsNow: true) }
        }
        return KeychainItem(id: String(id), itemClass: itemClass, attributes: attributes, secret: nil)
    }

    // MARK: Copy matching

    /// Finds items (`SecItemCopyMatching`). Throws ``KeychainError/itemNotFound`` when nothing
    /// matches, ``KeychainError/interactionNotAllowed(_:)`` when only items of a class
    /// unavailable in the current lock state could have matched.
    public func copyMatching(_ query: ItemQuery, caller: Caller) throws -> [KeychainItem] {
        try copyMatching(query, caller: caller, indexOnly: false)!
    }

    /// ``copyMatching(_:caller:)`` when a blind index answers the query — an id, the primary key,
    /// searchable attributes (a label, an account) or pairs of the custom attribute map: a few
    /// B-tree look-ups and one decryption per candidate, which a server may run on its request's
    /// own thread. Nil, with nothing decrypted, when answering would mean decrypting every row
    /// of the caller's groups one by one, or more than ``indexOnlyCandidateLimit`` of them.
    public func copyMatchingFromIndex(_ query: ItemQuery, caller: Caller) throws -> [KeychainItem]? {
        try copyMatching(query, caller: caller, indexOnly: true)
    }

    private func copyMatching(_ query: ItemQuery, caller: Caller, indexOnly: Bool) throws -> [KeychainItem]? {
        guard let matches = try find(query, caller: caller, indexOnly: indexOnly) else { return nil }
        var results: [KeychainItem] = []
        var presenceVerified = false
        for match in matches {
            var item = KeychainItem(
                id: String(match.stored.id), itemClass: query.itemClass,
                attributes: query.returnAttributes ? match.attributes : nil, secret: nil)
            if query.returnData {
                try requirePresence(presenceToRead(match.attributes, caller: caller), caller: caller, verified: &presenceVerified)
                item.secret = try sealing.openSecret(match.stored, itemClass: query.itemClass, classKey: match.classKey)
            }
            results.append(item)
        }
        return results
    }

    // MARK: Update

    /// Changes the attributes (and, if given, the secret) of every matching item (`SecItemUpdate`).
    /// Returns how many changed. All or nothing: a duplicate primary key rolls every change back.
    @discardableResult
    public func update(_ query: ItemQuery, changes: ItemAttributes, secret: Data?, caller: Caller) throws -> Int {
        try changes.validate(for: query.itemClass, purpose: .update)
        if let secret { try Self.checkSize(of: secret) }
        if let group = changes.accessGroup { try Self.requireGroup(group, caller: caller) }
        try checkSynchronizableHere(changes.synchronizable)
        if query.itemClass == .certificate && (secret != nil || !Set(changes.setNames).isDisjoint(with: ItemAttributes.fromCertificate)) {
            throw KeychainError.param("a certificate's data and the attributes read from it cannot be changed; add a new item")
        }
        var everything = query
        everything.limit = .all
        let matches = try find(everything, caller: caller, changing: true)
        var presenceVerified = false
        let itemClass = query.itemClass
        try write { db in
            for match in matches {
                // Replacing a secret needs presence as reading it does; so does moving an item to
                // another group, or the keychain-access app could move another application's item
                // into its own group and read it freely.
                let regrouped = changes.accessGroup != nil && changes.accessGroup != match.attributes.accessGroup
                // A weaker protection class is a way round presence too (an `always` item opens
                // with the device key alone), so changing it counts as reading.
                let reclassified = changes.accessible != nil && changes.accessible != match.attributes.accessible
                if secret != nil || regrouped || reclassified {
                    try requirePresence(presenceToRead(match.attributes, caller: caller), caller: caller, verified: &presenceVerified)
                }
                // Renaming or otherwise changing another application's item, or moving one into
                // another application's group, needs the user at the keyboard.
                var presence = max(
                    presenceToChange(group: match.attributes.accessGroup, caller: caller),
                    presenceToChange(group: changes.accessGroup, caller: caller))
                if regrouped, let group = changes.accessGroup {
                    var destination = match.attributes
                    destination.accessGroup = group
                    presence = max(presence, presenceToRead(destination, caller: caller))
                }
                // Marking an item readable by scripts hands its secret to any process of the user.
                if changes.readableByScripts == true && match.attributes.readableByScripts != true { presence = max(presence, .atKeyboard) }
                try requirePresence(presence, caller: caller, verified: &presenceVerified)
                var attributes = try match.attributes.applying(changes)
                attributes.modificationDate = Date()
                let protectionClass = attributes.accessible ?? .default
                try checkPasscodeNeeds(of: attributes)
                try Self.checkReadableByScripts(attributes)
                // Checked when the change is about it: an item stored before the rule keeps working.
                if changes.synchronizable != nil || changes.accessible != nil { try Self.checkSynchronizable(attributes) }
                let classKey = try Self.mapKeybag { try keybag.classKey(for: protectionClass) }
                let id = match.stored.id
                // The row key stays; it is re-wrapped if the protection class changed.
                let rowKey = try KeyWrap.unwrap(match.stored.rowKey, using: match.classKey)
                let newSecret = try secret.map { try sealing.sealSecret($0, itemClass: itemClass, id: id, rowKey: rowKey) } ?? match.stored.secret
                let key = try self.metadataKey(itemClass, protectionClass, classKey: classKey, db: db, create: true)
                let metadata = try sealing.sealMetadata(attributes, itemClass: itemClass, id: id, key: key)
                if Self.keepsTags(of: match, changes: changes, protectionClass: protectionClass) {
                    // No tag, no index entry and no wrapped key would change: the write is the
                    // row's own page, not the pages of its indexes and of its attribute tags.
                    try db.cachedStatement(sql: "UPDATE \(itemClass.table) SET metadata = ?, secret = ? WHERE id = ?")
                        .execute(arguments: [metadata, newSecret, id])
                } else {
                    let values = AttributeValues(attributes)
                    try db.execute(
                        sql: """
                            UPDATE \(itemClass.table) SET pdmn = ?, primary_key_tag = ?, lookup_tag = ?, group_tag = ?, metadata = ?,
                                row_key = ?, secret = ?, custom_indexed = 1
                            WHERE id = ?
                            """,
                        arguments: [
                            protectionClass.rawValue, sealing.primaryKeyTag(values, itemClass: itemClass),
                            sealing.lookupTag(values, itemClass: itemClass), sealing.groupTag(attributes.accessGroup ?? ""), metadata,
                            try KeyWrap.wrap(rowKey, using: classKey), newSecret, id,
                        ])
                    try replaceAttributeTags(db, itemClass: itemClass, id: id, values: values)
                }
                let syncsNow = try syncs(attributes, db)
                if try syncsNow || syncs(match.attributes, db) {
                    try recordSyncChange(db, itemClass: itemClass, id: id, syncsNow: syncsNow)
                }
            }
        }
        // The old row's ciphertext (attributes too) must not linger in the WAL.
        checkpoint.request()
        return matches.count
    }

    /// Whether an update of `match` by `changes` leaves its row's tags, index entries and
    /// wrapped row key as they are: no attribute changes (the secret and the modification date
    /// alone — no tag covers a date), the row already has every tag (written since the lookup and
    /// attribute indexes), and its protection class, so its class key, stays.
    static func keepsTags(of match: Match, changes: ItemAttributes, protectionClass: ProtectionClass) -> Bool {
        changes == ItemAttributes() && match.stored.lookupTag != nil && match.stored.customIndexed
            && match.stored.protectionClass == protectionClass.rawValue
    }

    // MARK: Delete

    /// Deletes every matching item (`SecItemDelete`); a checkpoint soon after takes their
    /// ciphertext out of the WAL too (``completePendingCheckpoint()``). Returns how many were
    /// deleted.
    @discardableResult
    public func delete(_ query: ItemQuery, caller: Caller) throws -> Int {
        var everything = query
        everything.limit = .all
        everything.returnData = false
        let matches = try find(everything, caller: caller, changing: true)
        var verified = false
        for match in matches {
            try requirePresence(presenceToChange(group: match.attributes.accessGroup, caller: caller), caller: caller, verified: &verified)
        }
        try write { db in
            for match in matches {
                try db.execute(sql: "DELETE FROM \(query.itemClass.table) WHERE id = ?", arguments: [match.stored.id])
                if try syncs(match.attributes, db) {
                    try recordSyncChange(db, itemClass: query.itemClass, id: match.stored.id, syncsNow: false)
                }
            }
        }
        checkpoint.request()
        return matches.count
    }

    /// Takes the ciphertext of updated, deleted and purged rows out of the WAL now rather than
    /// within ``DeferredCheckpoint/bound``: the daemon calls it before it answers a lock.
    /// - Returns: false when a reader holding a snapshot kept the checkpoint from completing
    ///   (it is retried in the background until it does).
    @discardableResult
    public func completePendingCheckpoint() -> Bool {
        checkpoint.completeNow()
    }

    /// Whether an update, delete or purge still waits for its checkpoint.
    public var hasPendingCheckpoint: Bool { checkpoint.isPending }

    /// Deletes every item of `protectionClass` — after its class key was destroyed (passcode
    /// removal destroys `whenPasscodeSetThisDeviceOnly`), they can never be read again.
    @discardableResult
    public func purge(_ protectionClass: ProtectionClass) throws -> Int {
        var count = 0
        try write { db in
            for itemClass in ItemClass.allCases {
                try db.execute(sql: "DELETE FROM \(itemClass.table) WHERE pdmn = ?", arguments: [protectionClass.rawValue])
                count += db.changesCount
            }
            try db.execute(sql: "DELETE FROM metadata_keys WHERE pdmn = ?", arguments: [protectionClass.rawValue])
        }
        metadataKeys.withLock { keys in keys = keys.filter { !$0.key.hasSuffix("/" + protectionClass.rawValue) } }
        checkpoint.request()
        return count
    }

    /// Drops cached metadata keys of classes the keybag no longer makes available (after a lock).
    public func dropUnavailableKeys() {
        let available = Set(keybag.status.availableClasses.map(\.rawValue))
        metadataKeys.withLock { keys in
            keys = keys.filter { available.contains(String($0.key.split(separator: "/").last ?? "")) }
        }
    }

}
