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
/// let keychain = try Keychain(file: home.appendingPathComponent("login.keychain"), keybag: keybag)
/// var attributes = ItemAttributes()
/// attributes.service = "github.com"
/// attributes.account = "ada"
/// try keychain.add(.genericPassword, attributes: attributes, secret: Data("token".utf8), caller: caller)
/// ```
public final class Keychain: Sendable {
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
    private let metadataKeys = Mutex<[String: SymmetricKey]>([:])
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

    /// Whether this keychain was opened on a read-only file system that is writable again: it
    /// refuses every write until a new `Keychain` is opened on the same file (the daemon opens
    /// one at the next request, so writing resumes without a restart).
    public var needsReopeningToWrite: Bool { SealedDatabase.isReadOnlyOnAWritableFileSystem(database, at: file) }

    /// Closes the database's connections, before a new `Keychain` is opened on the same file
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

    // MARK: Finding

    struct Match {
        var stored: StoredItem
        var attributes: ItemAttributes
        var classKey: SymmetricKey
    }

    /// The items matching `query` that the caller may see, decrypting only metadata.
    /// - Parameter changing: for an update or a delete, which is all or nothing: an item that
    ///   might match but cannot be opened now fails it, whoever asks.
    func find(_ query: ItemQuery, caller: Caller, changing: Bool = false) throws -> [Match] {
        var caller = caller
        if changing { caller.lockedCandidates = .failTheSearch }
        return try find(query, caller: caller, indexOnly: false)!
    }

    /// `find`, or nil before reading anything when `indexOnly` and no blind index answers.
    private func find(_ query: ItemQuery, caller: Caller, indexOnly: Bool) throws -> [Match]? {
        var wanted = query.attributes
        // Apple's rule: a query that does not say matches non-synchronizable items only.
        // An id names one item exactly, whatever it is.
        if query.id == nil { wanted.synchronizable = wanted.synchronizable ?? false }
        let itemClass = query.itemClass
        let wantedValues = AttributeValues(wanted)
        // `synchronizable` applies to every class: validating `wanted` is validating the query.
        try wanted.validate(for: itemClass, purpose: .query, values: wantedValues)
        if let group = wanted.accessGroup { try Self.requireGroup(group, caller: caller) }
        let table = itemClass.table
        // A scan (no index answers the query) reads its rows page by page, so a search over a
        // million items never holds them all in memory at once.
        var scan: (filter: String, arguments: StatementArguments)?
        // A search through the attribute index: its tags (the rarest first) and groups. Its rows
        // come a page at a time too, the first with the statement that finds them.
        var attributeSearch: (tags: [Data], groupTags: [Data]?)?
        // The first page's size: past the limit of an index-only search, nothing is decrypted.
        let firstPageSize = indexOnly ? Self.indexOnlyCandidateLimit + 1 : Self.scanPageSize
        let index = query.id == nil ? indexLookup(wantedValues, itemClass: itemClass, caller: caller) : nil
        if indexOnly && query.id == nil && index == nil { return nil }
        let indexed: [StoredItem] = try read(onLookupConnection: query.id != nil || index != nil) { db in
            if let id = query.id {
                guard let id = Int64(id) else { throw KeychainError.param("item id must be a number") }
                return try Self.fetch(db, "SELECT \(StoredItem.selection) FROM \(table) WHERE id = ?", [id])
            }
            switch index {
            case .primaryKey(let tags):
                // Every primary-key attribute is known: O(log n) lookups through the blind index,
                // one statement (one snapshot) for every group the caller may use.
                if tags.count == 1 { return try Self.fetch(db, itemClass.primaryKeyLookup, [tags[0]]) }
                let placeholders = databaseQuestionMarks(count: tags.count)
                return try Self.fetch(
                    db, "SELECT \(StoredItem.selection) FROM \(table) WHERE primary_key_tag IN (\(placeholders))", StatementArguments(tags))
            case .anyGroup(let tag):
                // All but the group is known, and the caller sees every group: the lookup index,
                // plus the rows written before it existed (tagged below once opened) — in one
                // statement, so a row tagged meanwhile is seen in exactly one of the two.
                return try Self.fetch(
                    db,
                    """
                    SELECT \(StoredItem.selection) FROM \(table) WHERE lookup_tag = ?
                    UNION ALL SELECT \(StoredItem.selection) FROM \(table) WHERE lookup_tag IS NULL
                    """, [tag])
            case .attributes(let tags):
                let search = (
                    tags: try Self.rarestFirst(db, tags: Array(Set(tags)), itemClass: itemClass),
                    groupTags: searchedGroupTags(named: wanted.accessGroup, caller: caller)
                )
                attributeSearch = search
                return try Self.customAttributeRows(
                    db, tags: search.tags, itemClass: itemClass, groupTags: search.groupTags, after: .min, limit: firstPageSize)
            case nil:
                break
            }
            guard let groupTags = searchedGroupTags(named: wanted.accessGroup, caller: caller) else {
                scan = ("1", [])
                return []
            }
            guard !groupTags.isEmpty else { return [] }
            let placeholders = databaseQuestionMarks(count: groupTags.count)
            scan = ("group_tag IN (\(placeholders))", StatementArguments(groupTags))
            return []
        }
        // Many candidates (a value most items share: a service, a schema) are many decryptions:
        // not for a request's own thread.
        if indexOnly, attributeSearch != nil, indexed.count > Self.indexOnlyCandidateLimit { return nil }
        var rowsRead = indexed.count
        var exhausted = false
        var lastID = Int64.min
        var indexedReturned = false
        /// The next rows to look at: the indexed ones (the attribute index's first page), the
        /// attribute index's next page, or the next page of the scan (empty only at the end).
        func nextRows() throws -> [StoredItem] {
            guard !exhausted else { return [] }
            guard let scan else {
                if !indexedReturned {
                    indexedReturned = true
                    exhausted = attributeSearch == nil || indexed.count < firstPageSize
                    lastID = indexed.last?.id ?? lastID
                    return indexed
                }
                guard let search = attributeSearch else { return [] }
                let page = try read(onLookupConnection: true) { db in
                    try Self.customAttributeRows(
                        db, tags: search.tags, itemClass: itemClass, groupTags: search.groupTags, after: lastID, limit: Self.scanPageSize)
                }
                exhausted = page.count < Self.scanPageSize
                lastID = page.last?.id ?? lastID
                rowsRead += page.count
                return page
            }
            let page = try read { db in
                try Self.fetch(
                    db, "SELECT \(StoredItem.selection) FROM \(table) WHERE \(scan.filter) AND id > ? ORDER BY id LIMIT \(Self.scanPageSize)",
                    scan.arguments + [lastID])
            }
            exhausted = page.count < Self.scanPageSize
            lastID = page.last?.id ?? lastID
            rowsRead += page.count
            return page
        }

        var matches: [Match] = []
        var unavailable = false
        var damaged: KeychainError?
        var unindexed: [UnindexedRow] = []
        defer { indexOpenedRows(unindexed, itemClass: itemClass) }
        pages: while case let rows = try nextRows(), !rows.isEmpty {
            for stored in rows {
                guard let protectionClass = ProtectionClass(rawValue: stored.protectionClass) else { continue }
                let classKey: SymmetricKey
                do {
                    classKey = try keybag.classKey(for: protectionClass)
                } catch {
                    // Of the caller's groups (or every group, for a caller that sees them all),
                    // and maybe a match: its attributes are sealed under the locked class.
                    if caller.lockedCandidates == .failTheSearch {
                        throw KeychainError.interactionNotAllowed("items that may match are of a protection class locked now: unlock first")
                    }
                    unavailable = true
                    continue
                }
                // A scan matches each row on its opened JSON as it is and decodes only a match
                // into ItemAttributes (half of a scan's time per row was that decoding). A row
                // an index pointed at is expected to match: decoded once, its values read off it.
                let json: Data, values: AttributeValues
                var decoded: ItemAttributes?
                do {
                    let key =
                        try cachedMetadataKey(itemClass, protectionClass)
                        ?? read { db in
                            try self.metadataKey(itemClass, protectionClass, classKey: classKey, db: db, create: false)
                        }
                    metadataOpenCount.add(1, ordering: .relaxed)
                    json = try sealing.openMetadataJSON(stored, itemClass: itemClass, key: key)
                    if scan == nil {
                        decoded = try sealing.decodeMetadata(json, of: stored)
                        values = AttributeValues(decoded!)
                    } else {
                        values = try AttributeValues(json: json, ofItem: stored.id)
                    }
                } catch let error as KeychainError {
                    damaged = error
                    continue
                }
                let opened = json
                if let missing = missingTags(
                    of: stored, values: values, itemClass: itemClass,
                    attributes: { try decoded ?? sealing.decodeMetadata(opened, of: stored) })
                {
                    unindexed.append(missing)
                }
                guard let group = values.values["accessGroup"] as? String, caller.mayUse(group: group) else { continue }
                guard values.matches(wantedValues) else { continue }
                let attributes: ItemAttributes
                do {
                    attributes = try decoded ?? sealing.decodeMetadata(json, of: stored)
                } catch let error as KeychainError {
                    damaged = error
                    continue
                }
                matches.append(Match(stored: stored, attributes: attributes, classKey: classKey))
                if query.limit == .one { break pages }
            }
        }
        if matches.isEmpty {
            // A damaged row that the query pointed at directly is reported, not hidden.
            if let damaged, query.id != nil || rowsRead == 1 { throw damaged }
            if unavailable { throw KeychainError.interactionNotAllowed("the matching items' protection class is locked") }
            throw KeychainError.itemNotFound
        }
        return matches
    }

    /// Rows a scan reads at a time.
    static let scanPageSize = 512

    /// The most rows an attribute index may point a ``copyMatchingFromIndex(_:caller:)`` at;
    /// beyond, it answers nil and the caller runs ``copyMatching(_:caller:)`` off its thread.
    static let indexOnlyCandidateLimit = 64

    /// How a query is answered from a blind index instead of a scan.
    private enum IndexLookup {
        /// The whole primary key: one tag per group the caller may use (or the one it named).
        case primaryKey([Data])
        /// The primary key but the group, for a caller that sees every group.
        case anyGroup(Data)
        /// Searchable attributes and pairs of the custom attribute map: one tag per attribute
        /// or pair (`custom_attribute_tags`).
        case attributes([Data])
    }

    /// The blind-index lookup for a query that fixes the whole primary key (but perhaps the
    /// group), or names custom attribute pairs; nil when a scan is needed.
    private func indexLookup(_ wanted: AttributeValues, itemClass: ItemClass, caller: Caller) -> IndexLookup? {
        guard Self.fixesPrimaryKey(wanted, itemClass: itemClass) else {
            // Other attributes of the query are matched once the candidates are opened.
            let tags = sealing.attributeTags(wanted, itemClass: itemClass)
            return tags.isEmpty ? nil : .attributes(tags)
        }
        if wanted.values["accessGroup"] != nil {
            return .primaryKey([sealing.primaryKeyTag(wanted, itemClass: itemClass)])
        }
        if caller.seesEveryGroup { return .anyGroup(sealing.lookupTag(wanted, itemClass: itemClass)) }
        return .primaryKey(
            caller.accessGroups.map { group in
                sealing.primaryKeyTag(wanted.with(accessGroup: group), itemClass: itemClass)
            })
    }

    /// Whether `wanted` names every attribute of the primary key (but perhaps the group) and
    /// nothing else, so a blind index answers it.
    private static func fixesPrimaryKey(_ wanted: AttributeValues, itemClass: ItemClass) -> Bool {
        let names = ItemAttribute.primaryKey[itemClass] ?? []
        let values = wanted.values
        guard names.allSatisfy({ $0 == "accessGroup" || values[$0] != nil }) else { return false }
        // Only a query that names exactly the primary key (or less) can be answered from it.
        return values.keys.allSatisfy { names.contains($0) || $0 == "accessible" }
    }

    /// The group tags a search reads the rows of: the group it names, else the caller's groups;
    /// nil for every group (a caller that sees them all and names none).
    private func searchedGroupTags(named group: String?, caller: Caller) -> [Data]? {
        if caller.seesEveryGroup && group == nil { return nil }
        return (group.map { [$0] } ?? caller.accessGroups).map { sealing.groupTag($0) }
    }

    /// Rows of an item table, through a statement prepared once per connection.
    private static func fetch(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> [StoredItem] {
        try StoredItem.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    // MARK: Checks shared by add, update and find

    private static func checkSize(of secret: Data) throws {
        guard secret.count <= maximumSecretBytes else {
            throw KeychainError.param("the secret is \(secret.count) bytes; the limit is \(maximumSecretBytes)")
        }
    }

    static func requireGroup(_ group: String, caller: Caller) throws {
        guard caller.mayUse(group: group) else {
            throw KeychainError.missingEntitlement("access group \(group) is not this application's")
        }
    }

    /// A *ThisDeviceOnly* item never leaves this device, so it cannot also be synchronizable —
    /// Apple's rule for `kSecAttrSynchronizable`, whose `SecItemAdd` answers `errSecParam`.
    static func checkSynchronizable(_ attributes: ItemAttributes) throws {
        if attributes.synchronizable == true && (attributes.accessible ?? .default).isThisDeviceOnly {
            throw KeychainError.param("a synchronizable item cannot have a ThisDeviceOnly protection class: such an item never leaves this device")
        }
    }

    /// Only the login keychain syncs (``canSync``): an item of a keychain the user created
    /// made synchronizable would never leave this device while saying it does. A restored item
    /// keeps what it had (and does not sync).
    /// - Parameter synchronizable: the `synchronizable` an add or an update asks for.
    /// - Throws: `KeychainError.param` when it is true here.
    func checkSynchronizableHere(_ synchronizable: Bool?) throws {
        guard synchronizable == true, !canSync else { return }
        throw KeychainError.param(
            "only the login keychain syncs: an item of the keychain \(name) cannot be synchronizable (leave it out, or keep the item in login)")
    }

    /// `whenPasscodeSetThisDeviceOnly` and `userPresence` items exist only while a passcode is
    /// set: it is what their protection rests on.
    private func checkPasscodeNeeds(of attributes: ItemAttributes) throws {
        let needsPasscode = attributes.accessible?.requiresPasscode == true || attributes.accessControl == .userPresence
        guard needsPasscode, !keybag.status.isPasscodeSet else { return }
        if attributes.accessible?.requiresPasscode == true {
            throw KeychainError.param("whenPasscodeSetThisDeviceOnly items need a passcode to be set")
        }
        throw KeychainError.param("userPresence items need a passcode to be set: it is what proves presence")
    }

    // MARK: Keys

    /// The metadata key of (`itemClass`, `protectionClass`) if it is in memory: a search over
    /// many rows then needs no database read per row.
    private func cachedMetadataKey(_ itemClass: ItemClass, _ protectionClass: ProtectionClass) -> SymmetricKey? {
        metadataKeys.withLock { $0[Self.metadataCacheKey(itemClass, protectionClass)] }
    }

    /// The in-memory cache's key: `class/protection class` (``purge(_:)`` and
    /// ``dropUnavailableKeys()`` read the protection class back from after the slash).
    private static func metadataCacheKey(_ itemClass: ItemClass, _ protectionClass: ProtectionClass) -> String {
        "\(itemClass.rawValue)/\(protectionClass.rawValue)"
    }

    func metadataKey(
        _ itemClass: ItemClass, _ protectionClass: ProtectionClass, classKey: SymmetricKey, db: Database, create: Bool
    ) throws -> SymmetricKey {
        if let cached = cachedMetadataKey(itemClass, protectionClass) { return cached }
        if let wrapped = try Data.fetchOne(
            db, sql: "SELECT wrapped_key FROM metadata_keys WHERE item_class = ? AND pdmn = ?",
            arguments: [itemClass.rawValue, protectionClass.rawValue])
        {
            let key: SymmetricKey
            do {
                key = try KeyWrap.unwrap(wrapped, using: classKey)
            } catch {
                throw KeychainError.decode("the metadata key of \(itemClass.humanName) / \(protectionClass.rawValue) items is damaged")
            }
            metadataKeys.withLock { $0[Self.metadataCacheKey(itemClass, protectionClass)] = key }
            return key
        }
        guard create else { throw KeychainError.decode("no metadata key for \(itemClass.humanName) / \(protectionClass.rawValue) items") }
        let key = SecureRandom.key(bitCount: 256)
        try db.execute(
            sql: "INSERT INTO metadata_keys (item_class, pdmn, wrapped_key) VALUES (?, ?, ?)",
            arguments: [itemClass.rawValue, protectionClass.rawValue, try KeyWrap.wrap(key, using: classKey)])
        // Not cached yet: should this transaction roll back, the key must not outlive its row.
        // The next read of the committed row caches it.
        return key
    }

    /// Reads, with SQLite's failures (a damaged page, a full disk) as a clear storage error.
    /// Every read here is one statement, atomic by itself: no transaction is opened around it
    /// (a BEGIN and a COMMIT would double a lookup's SQLite work).
    /// `onLookupConnection`: on ``lookupReader`` rather than one of the pool's readers.
    /// `inTransaction`: in one read transaction, for many reads in a row (a restore's batch).
    func read<T>(onLookupConnection: Bool = false, inTransaction: Bool = false, _ body: (Database) throws -> T) throws -> T {
        do {
            if inTransaction { return try database.read(body) }
            return try onLookupConnection ? lookupReader.inDatabase(body) : database.unsafeRead(body)
        } catch let error as DatabaseError {
            throw Self.readError(error)
        }
    }

    /// A failed read in keychain terms: a damaged file, or storage that cannot be read.
    static func readError(_ error: DatabaseError) -> KeychainError {
        if [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            return .decode("the keychain database is damaged (SQLite error \(error.resultCode.rawValue)); the file was left as it is")
        }
        return .storage(DatabaseFailure(error, database: "keychain", access: .read).description)
    }

    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try database.write(body)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw KeychainError.duplicateItem
        } catch let error as DatabaseError {
            // A full or read-only disk in the words every store uses; the transaction rolled back.
            if let refusal = error.storageRefusal { throw refusal }
            throw KeychainError.storage(DatabaseFailure(error, database: "keychain", access: .write).description)
        }
    }

    /// Keybag refusals in keychain terms.
    public static func mapKeybag<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as KeybagError {
            switch error {
            case .classUnavailable, .classKeyAbsent:
                throw KeychainError.interactionNotAllowed(error.description)
            case .throttled(_, let wait):
                throw KeychainError.throttled(error.description, retryAfterSeconds: wait)
            case .wrongPasscode(_, let wait):
                throw KeychainError.authFailed(error.description, retryAfterSeconds: wait)
            case .passcodeRequired, .noPasscodeSet, .invalidPasscode:
                throw KeychainError.authFailed(error.description)
            default:
                throw KeychainError.storage(error.description)
            }
        }
    }
}
