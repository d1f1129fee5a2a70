import Foundation
import GRDB

/// The attribute index (schema v4 for the free-form map, v5 for every searchable attribute): a
/// search that names pairs of the free-form attribute map or searchable attributes (a label, an
/// account) opens the rows holding all of them — and the rows not indexed yet — instead of
/// every row of the caller's groups (1.2 s at 100,000 items). The index only narrows the rows:
/// each is still matched in full once opened, so a tag collision cannot return a wrong item.
extension KeychainStore {
    /// The ids of the rows a search for every one of `tags` may match: those holding them all,
    /// plus those written before the index, in the groups of `groupTags` (nil: every group).
    /// One statement, so a row indexed meanwhile is in exactly one of the two.
    ///
    /// The walk starts from the rarest tag and probes the others row by row: a pair most items
    /// share (libsecret's `xdg:schema`) then costs one lookup per candidate of the rare pair,
    /// not one row read per item holding the common one.
    static func customAttributeCandidates(_ db: Database, tags: [Data], itemClass: ItemClass, groupTags: [Data]?) throws -> [Int64] {
        if groupTags?.isEmpty == true { return [] }
        let tags = try rarestFirst(db, tags: Array(Set(tags)), itemClass: itemClass)
        let sql = customAttributeCandidatesSQL(itemClass, tagCount: tags.count, groupCount: groupTags?.count)
        return try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: candidatesArguments(tags, itemClass: itemClass, groupTags: groupTags))
    }

    /// The rows of ``customAttributeCandidates(_:tags:itemClass:groupTags:)`` themselves, a
    /// page at a time: those with an id above `lastID`, at most `limit`, in the order of their
    /// ids. One statement: the rows come with their ids, not from a second read.
    /// - Parameter tags: as ``rarestFirst(_:tags:itemClass:)`` ordered them.
    static func customAttributeRows(
        _ db: Database, tags: [Data], itemClass: ItemClass, groupTags: [Data]?, after lastID: Int64, limit: Int
    ) throws -> [StoredItem] {
        if groupTags?.isEmpty == true { return [] }
        let sql = customAttributeCandidatesSQL(itemClass, tagCount: tags.count, groupCount: groupTags?.count, columns: StoredItem.selection)
        let arguments = candidatesArguments(tags, itemClass: itemClass, groupTags: groupTags, after: lastID) + [limit]
        return try StoredItem.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// The arguments of ``customAttributeCandidatesSQL(_:tagCount:groupCount:columns:)``, in its order.
    private static func candidatesArguments(_ tags: [Data], itemClass: ItemClass, groupTags: [Data]?, after lastID: Int64? = nil)
        -> StatementArguments
    {
        let groupArguments = StatementArguments(groupTags ?? []) + (lastID.map { [$0] } ?? [])
        var arguments = StatementArguments()
        for tag in tags { arguments += [tag, itemClass.table] }
        return arguments + groupArguments + groupArguments
    }

    /// `tags` with the one fewest rows hold first. Every tag is counted up to a bound that grows
    /// eightfold until one tag stays under it, so ordering reads about as many rows per tag as
    /// the rarest has — never every row of a pair all items share.
    static func rarestFirst(_ db: Database, tags: [Data], itemClass: ItemClass) throws -> [Data] {
        guard tags.count > 1 else { return tags }
        let count = try db.cachedStatement(
            sql: """
                SELECT COUNT(*) FROM (SELECT 1 FROM custom_attribute_tags WHERE tag = ? AND item_class = ? LIMIT ?)
                """)
        var bound = 32
        while true {
            let counts = try tags.map { try Int.fetchOne(count, arguments: [$0, itemClass.table, bound]) ?? 0 }
            if let fewest = counts.min(), fewest < bound, let rarest = counts.firstIndex(of: fewest) {
                var ordered = tags
                ordered.swapAt(0, rarest)
                return ordered
            }
            bound *= 8
        }
    }

    /// The statement of ``customAttributeCandidates(_:tags:itemClass:groupTags:)`` (`columns`
    /// `id`) and of ``customAttributeRows(_:tags:itemClass:groupTags:after:limit:)`` (any other
    /// `columns`: paged by id). Its arguments: each tag followed by the table (the rarest tag
    /// first), then the group tags — followed, when paged, by the id to start after — twice,
    /// then, when paged, the page's size.
    static func customAttributeCandidatesSQL(_ itemClass: ItemClass, tagCount: Int, groupCount: Int?, columns: String = "id") -> String {
        let table = itemClass.table
        let paged = columns != "id"
        // The first tag drives; every other one is a lookup on the primary key of its own.
        // The `+` keeps SQLite from the group's index (no statistics), which would walk every
        // row of the groups instead of the few candidates — and, on the page's start, from
        // walking the ids above it instead of the candidates'.
        let others = (1..<max(tagCount, 1)).map { index in
            """
             AND EXISTS (SELECT 1 FROM custom_attribute_tags t\(index) \
            WHERE t\(index).tag = ? AND t\(index).item_class = ? AND t\(index).item_id = t0.item_id)
            """
        }.joined()
        let groups = groupCount.map { "group_tag IN (\(databaseQuestionMarks(count: $0)))" }
        return """
            SELECT \(columns) FROM \(table) WHERE id IN (
                SELECT t0.item_id FROM custom_attribute_tags t0
                WHERE t0.tag = ? AND t0.item_class = ?\(others)
            ) AND \(groups.map { "+" + $0 } ?? "1")\(paged ? " AND +id > ?" : "")
            UNION ALL
            SELECT \(columns) FROM \(table) WHERE custom_indexed IS NULL AND \(groups ?? "1")\(paged ? " AND id > ?" : "")
            ORDER BY id\(paged ? " LIMIT ?" : "")
            """
    }

    /// Writes the tags of row `id` (its free-form pairs and searchable attributes, from
    /// `values`) in place of any it had. The caller marks the row indexed (`custom_indexed`) in
    /// the same transaction.
    func replaceAttributeTags(_ db: Database, itemClass: ItemClass, id: Int64, values: AttributeValues) throws {
        try replaceAttributeTags(db, itemClass: itemClass, id: id, tags: sealing.attributeTags(values, itemClass: itemClass))
    }

    private func replaceAttributeTags(_ db: Database, itemClass: ItemClass, id: Int64, tags: [Data]) throws {
        let table = itemClass.table
        try db.cachedStatement(sql: "DELETE FROM custom_attribute_tags WHERE item_class = ? AND item_id = ?").execute(arguments: [table, id])
        // OR IGNORE: two pairs whose tags collide are one row; a collision is no duplicate item.
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO custom_attribute_tags (tag, item_class, item_id) VALUES (?, ?, ?)")
        for tag in tags { try insert.execute(arguments: [tag, table, id]) }
    }

    /// What a read learned about a row written before the lookup index (v3) or the attribute
    /// index (v4, v6): the tags it lacks, nil for those it has.
    struct UnindexedRow {
        var id: Int64
        var lookupTag: Data?
        var customTags: [Data]?
    }

    /// The tags `stored` lacks, from its opened `values`; nil when it lacks none. `attributes`
    /// decodes the row: its attribute tags are computed from the decoded values, as a new
    /// item's are. They are left out when it cannot be decoded: the row then stays
    /// unindexed, and found, rather than indexed as having no attributes.
    func missingTags(
        of stored: StoredItem, values: AttributeValues, itemClass: ItemClass, attributes: () throws -> ItemAttributes
    ) -> UnindexedRow? {
        guard stored.lookupTag == nil || !stored.customIndexed else { return nil }
        var row = UnindexedRow(id: stored.id)
        if stored.lookupTag == nil { row.lookupTag = sealing.lookupTag(values, itemClass: itemClass) }
        if !stored.customIndexed, let decoded = try? attributes() {
            row.customTags = sealing.attributeTags(AttributeValues(decoded), itemClass: itemClass)
        }
        return row
    }

    /// Writes the tags of the rows written before the attribute index (schema v6) and not
    /// opened since, for the protection classes whose key is available now, a page at a time.
    /// Rows of a locked class wait — every search that could match them reads them meanwhile —
    /// for a later call (the daemon makes one when it opens a keychain and after each unlock)
    /// or for a search that opens them.
    /// - Returns: how many rows got their tags.
    @discardableResult
    public func indexUnindexedRows() -> Int {
        var count = 0
        for itemClass in ItemClass.allCases {
            var lastID = Int64.min
            while true {
                let page: [StoredItem]
                do {
                    page = try read { db in
                        try StoredItem.fetchAll(
                            db,
                            sql: """
                                SELECT \(StoredItem.selection) FROM \(itemClass.table)
                                WHERE custom_indexed IS NULL AND id > ? ORDER BY id LIMIT \(Self.scanPageSize)
                                """, arguments: [lastID])
                    }
                } catch {
                    break
                }
                guard let last = page.last else { break }
                lastID = last.id
                let rows = page.compactMap { stored in
                    try? unindexedRow(stored, itemClass: itemClass)
                }
                indexOpenedRows(rows, itemClass: itemClass)
                count += rows.count
            }
        }
        return count
    }

    /// ``indexUnindexedRows()`` when a protection class became available since the last call —
    /// after an unlock, whichever way it came; nothing read otherwise. The daemon calls it every
    /// second.
    public func indexRowsOfUnlockedClasses() {
        let available = Set(keybag.status.availableClasses)
        let unlocked = classesIndexed.withLock { indexed in
            defer { indexed = available }
            return !available.isSubset(of: indexed)
        }
        if unlocked { indexUnindexedRows() }
    }

    /// The tags `stored` lacks, when its class key is available; nil when it is not.
    private func unindexedRow(_ stored: StoredItem, itemClass: ItemClass) throws -> UnindexedRow? {
        guard let protectionClass = ProtectionClass(rawValue: stored.protectionClass),
            let classKey = try? keybag.classKey(for: protectionClass)
        else { return nil }
        let key = try read { db in try metadataKey(itemClass, protectionClass, classKey: classKey, db: db, create: false) }
        let json = try sealing.openMetadataJSON(stored, itemClass: itemClass, key: key)
        let attributes = try sealing.decodeMetadata(json, of: stored)
        return missingTags(of: stored, values: AttributeValues(attributes), itemClass: itemClass, attributes: { attributes })
    }

    /// Gives rows written before an index what they lack, once a read has opened them. Best
    /// effort: a row left as it was is still found (searches also read such rows). A row
    /// written since it was read has its tags already, and is left alone.
    func indexOpenedRows(_ rows: [UnindexedRow], itemClass: ItemClass) {
        guard !rows.isEmpty else { return }
        let table = itemClass.table
        try? write { db in
            let tagLookup = try db.makeStatement(sql: "UPDATE \(table) SET lookup_tag = ? WHERE id = ? AND lookup_tag IS NULL")
            let markIndexed = try db.makeStatement(sql: "UPDATE \(table) SET custom_indexed = 1 WHERE id = ? AND custom_indexed IS NULL")
            for row in rows {
                if let tag = row.lookupTag { try tagLookup.execute(arguments: [tag, row.id]) }
                guard let tags = row.customTags else { continue }
                try markIndexed.execute(arguments: [row.id])
                if db.changesCount == 1 { try replaceAttributeTags(db, itemClass: itemClass, id: row.id, tags: tags) }
            }
        }
    }
}
