import Foundation
internal import GRDB

/// Reads the rows of an opened NoteStore into an ``AppleNotesLibrary``.
///
/// ZICCLOUDSYNCINGOBJECT holds accounts, folders and notes alike (Core Data's single table):
/// a row is an account when `ZNAME` is text, a folder when `ZTITLE2` is text, and a note when
/// a ZICNOTEDATA row points at it (`ZNOTE`) or `ZTITLE1` is set.
struct NoteStoreReader {
    /// `ZFOLDERTYPE` of an account's Recently Deleted.
    static let recentlyDeletedFolderType: Int64 = 1

    let db: Database
    let schema: NoteStoreSchema
    let limits: AppleNotesLimits

    func read() throws(AppleNotesError) -> AppleNotesLibrary {
        let objects = try fetchObjects()
        let noteData = try fetchNoteDataIndex()
        let accountColumns = schema.accountColumns

        let accounts = objects.compactMap { row -> AppleAccount? in
            guard let id = try? row.integer("Z_PK"), let name = try? row.text("ZNAME") else { return nil }
            return AppleAccount(id: id, name: name)
        }
        let accountIDs = Set(accounts.map(\.id))
        let folders = objects.compactMap { row -> AppleFolder? in
            guard let id = try? row.integer("Z_PK"), let title = try? row.text("ZTITLE2") else { return nil }
            let owner = (["ZOWNER"] + accountColumns).lazy
                .compactMap { (try? row.integer($0)) ?? nil }
                .first { accountIDs.contains($0) }
            let parent = try? row.integer("ZPARENT")
            let type = try? row.integer("ZFOLDERTYPE")
            return AppleFolder(id: id, title: title, accountID: owner, parentID: parent, isRecentlyDeleted: type == Self.recentlyDeletedFolderType)
        }
        let folderIDs = Set(folders.map(\.id))
        let nestedFolders = folders.map { folder in
            var folder = folder
            if let parent = folder.parentID, !folderIDs.contains(parent) || parent == folder.id { folder.parentID = nil }
            return folder
        }
        let folderAccounts = Dictionary(folders.map { ($0.id, $0.accountID) }, uniquingKeysWith: { first, _ in first })

        // A note marked for deletion is one Notes deleted for good: a tombstone kept until every
        // device has heard of it, shown nowhere (the notes in Recently Deleted are not marked).
        let candidates = objects.filter { row in
            guard let id = try? row.integer("Z_PK"), ((try? row.integer("ZMARKEDFORDELETION")) ?? 0) == 0 else { return false }
            return noteData[id] != nil || row.isSet("ZTITLE1")
        }
        guard candidates.count <= limits.maxNotes else {
            throw .tooLarge("the database holds \(candidates.count) notes, more than \(limits.maxNotes)")
        }
        var notes: [AppleNote] = []
        var skipped: [AppleSkippedNote] = []
        for row in candidates {
            guard let id = try? row.integer("Z_PK") else { continue }
            let builder = AppleNoteBuilder(
                id: id, row: row, noteData: noteData[id], accountColumns: accountColumns,
                accountIDs: accountIDs, folderAccounts: folderAccounts, limits: limits, fetchNoteData: fetchNoteData)
            do {
                notes.append(try builder.build())
            } catch {
                skipped.append(AppleSkippedNote(id: id, error: error))
            }
        }
        return AppleNotesLibrary(accounts: accounts, folders: nestedFolders, notes: notes, skipped: skipped)
    }

    /// Every row of ZICCLOUDSYNCINGOBJECT with an integer `Z_PK`, once each, by `Z_PK`, with
    /// the columns the reader uses that this schema has.
    private func fetchObjects() throws(AppleNotesError) -> [StoredRow] {
        let wanted =
            ["Z_PK"] + NoteStoreSchema.optionalObjectColumns.filter(schema.objectColumns.contains)
            + schema.accountColumns
        let list = wanted.map { "\"\($0)\"" }.joined(separator: ", ")
        let rows = try db.storedRows(
            table: NoteStoreSchema.objectTable,
            sql: "SELECT \(list) FROM \(NoteStoreSchema.objectTable) WHERE typeof(Z_PK) = 'integer' ORDER BY Z_PK")
        // Sorted here, not only by SQL: a damaged b-tree can hand rows back out of order
        // (found by fuzzing, Fuzz/Regressions/apple-notestore/rows-out-of-order).
        var seen: Set<Int64> = []
        return rows.compactMap { row in (try? row.integer("Z_PK")).map { ($0, row) } }
            .sorted { $0.0 < $1.0 }
            .filter { seen.insert($0.0).inserted }
            .map(\.1)
    }

    /// The ZICNOTEDATA row of each note, by the note's `Z_PK`: its rowid and the type and
    /// length of `ZDATA`, which SQLite knows without loading the data. The data itself (and the
    /// IV and tag, which may lie after it in the row) is fetched note by note, so a damaged page
    /// costs one note. Of several rows for one note the one with the greatest rowid wins.
    private func fetchNoteDataIndex() throws(AppleNotesError) -> [Int64: StoredRow] {
        let rows = try db.storedRows(
            table: NoteStoreSchema.noteDataTable,
            sql: """
                SELECT rowid AS TRESOR_ROWID, ZNOTE, typeof(ZDATA) AS TRESOR_DATA_TYPE, length(ZDATA) AS TRESOR_DATA_LENGTH
                FROM \(NoteStoreSchema.noteDataTable) WHERE typeof(ZNOTE) = 'integer' ORDER BY rowid
                """)
        var index: [Int64: StoredRow] = [:]
        for row in rows {
            guard let note = try? row.integer("ZNOTE"), let rowid = try? row.integer("TRESOR_ROWID") else { continue }
            if let other = index[note], let otherRowid = try? other.integer("TRESOR_ROWID"), otherRowid > rowid { continue }
            index[note] = row
        }
        return index
    }

    /// The note data row an index entry points at: `ZDATA` (a blob within
    /// ``AppleNotesLimits/maxNoteDataBytes``, checked before it is loaded) and, when the table
    /// has them, `ZCRYPTOINITIALIZATIONVECTOR` and `ZCRYPTOTAG`.
    func fetchNoteData(_ entry: StoredRow) throws(AppleNotesError) -> NoteData {
        let column = "\(NoteStoreSchema.noteDataTable).ZDATA"
        switch try entry.text("TRESOR_DATA_TYPE") {
        case "blob": break
        case "null", nil: throw .invalidValue("the note has no data (\(column) is NULL)")
        case let other?: throw .invalidValue("\(column) holds \(other == "text" ? "text" : "a number"), expected a blob")
        }
        let length = try entry.integer("TRESOR_DATA_LENGTH") ?? 0
        guard length <= limits.maxNoteDataBytes else {
            throw .tooLarge("\(column) is \(length) bytes, more than \(limits.maxNoteDataBytes)")
        }
        guard let rowid = try entry.integer("TRESOR_ROWID") else { throw .invalidValue("\(column) has no rowid") }
        var columns = ["ZDATA"]
        for crypto in ["ZCRYPTOINITIALIZATIONVECTOR", "ZCRYPTOTAG"] where schema.noteDataColumns.contains(crypto) {
            columns.append("\"\(crypto)\"")
        }
        let rows = try db.storedRows(
            table: NoteStoreSchema.noteDataTable,
            sql: "SELECT \(columns.joined(separator: ", ")) FROM \(NoteStoreSchema.noteDataTable) WHERE rowid = ?",
            arguments: [rowid])
        guard let row = rows.first, let data = try row.blob("ZDATA") else {
            throw .invalidValue("the note has no data (\(column))")
        }
        guard data.count <= limits.maxNoteDataBytes else {
            throw .tooLarge("\(column) is \(data.count) bytes, more than \(limits.maxNoteDataBytes)")
        }
        return NoteData(data: data, row: row)
    }
}

/// A note's ZICNOTEDATA row, loaded: the data, and the row for its other columns.
struct NoteData {
    let data: Data
    let row: StoredRow
}
