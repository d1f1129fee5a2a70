import Crypto
import Foundation
import GRDB
import Synchronization
import TresorCrypto
import TresorKeybag
import TresorStorage
import TresorSystem

// How a query finds its items: blind indexes first, a bounded scan otherwise (docs/FORMAT.md, "Keychains").
extension KeychainStore {
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
    func find(_ query: ItemQuery, caller: Caller, indexOnly: Bool) throws -> [Match]? {
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
    enum IndexLookup {
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
    func indexLookup(_ wanted: AttributeValues, itemClass: ItemClass, caller: Caller) -> IndexLookup? {
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
    static func fixesPrimaryKey(_ wanted: AttributeValues, itemClass: ItemClass) -> Bool {
        let names = ItemAttribute.primaryKey[itemClass] ?? []
        let values = wanted.values
        guard names.allSatisfy({ $0 == "accessGroup" || values[$0] != nil }) else { return false }
        // Only a query that names exactly the primary key (or less) can be answered from it.
        return values.keys.allSatisfy { names.contains($0) || $0 == "accessible" }
    }

    /// The group tags a search reads the rows of: the group it names, else the caller's groups;
    /// nil for every group (a caller that sees them all and names none).
    func searchedGroupTags(named group: String?, caller: Caller) -> [Data]? {
        if caller.seesEveryGroup && group == nil { return nil }
        return (group.map { [$0] } ?? caller.accessGroups).map { sealing.groupTag($0) }
    }

    /// Rows of an item table, through a statement prepared once per connection.
    static func fetch(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> [StoredItem] {
        try StoredItem.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }
}
