internal import GRDB

/// The columns this NoteStore has, looked up with `PRAGMA table_xinfo`: Apple's schema
/// differs between OS versions, so nothing beyond the essentials is assumed.
///
/// Essential: the tables ZICCLOUDSYNCINGOBJECT (with `Z_PK`) and ZICNOTEDATA (with `ZNOTE`
/// and `ZDATA`). Both must be real tables, not views, and generated columns count as absent:
/// either would let the file run code of its choosing (a recursive view, an expensive
/// expression) while it is read.
struct NoteStoreSchema {
    static let objectTable = "ZICCLOUDSYNCINGOBJECT"
    static let noteDataTable = "ZICNOTEDATA"

    /// Columns of ZICCLOUDSYNCINGOBJECT the reader uses when present, besides `Z_PK` and the
    /// `ZACCOUNT…` family.
    static let optionalObjectColumns =
        [
            "ZTITLE1", "ZTITLE2", "ZNAME", "ZFOLDER", "ZOWNER", "ZPARENT", "ZFOLDERTYPE", "ZMARKEDFORDELETION",
            "ZISPASSWORDPROTECTED", "ZISPINNED",
            "ZCRYPTOSALT", "ZCRYPTOITERATIONCOUNT", "ZCRYPTOWRAPPEDKEY", "ZPASSWORDHINT",
            "ZCRYPTOINITIALIZATIONVECTOR", "ZCRYPTOTAG",
        ] + creationDateColumns + modificationDateColumns

    /// Newest first: where a later OS version added a numbered column, that one is current.
    static let creationDateColumns = ["ZCREATIONDATE3", "ZCREATIONDATE1", "ZCREATIONDATE"]
    static let modificationDateColumns = ["ZMODIFICATIONDATE1", "ZMODIFICATIONDATE"]

    /// Upper-cased ordinary columns of ZICCLOUDSYNCINGOBJECT.
    let objectColumns: Set<String>
    /// Upper-cased ordinary columns of ZICNOTEDATA.
    let noteDataColumns: Set<String>

    init(_ db: Database) throws(AppleNotesError) {
        let entries = try db.storedRows(table: "sqlite_master", sql: "SELECT type, name FROM sqlite_master")
        var kinds: [String: String] = [:]
        for entry in entries {
            if let name = try? entry.text("name"), let type = try? entry.text("type"), kinds[name.uppercased()] != "table" {
                kinds[name.uppercased()] = type
            }
        }
        for table in [Self.objectTable, Self.noteDataTable] {
            guard let kind = kinds[table] else { throw .missingTable(table) }
            guard kind == "table" else { throw .notANoteStore("\(table) is a \(AppleNotesError.sanitized(kind)), not a table") }
        }
        objectColumns = try Self.ordinaryColumns(of: Self.objectTable, db)
        noteDataColumns = try Self.ordinaryColumns(of: Self.noteDataTable, db)
        guard objectColumns.contains("Z_PK") else { throw .missingColumn("\(Self.objectTable).Z_PK") }
        for column in ["ZNOTE", "ZDATA"] where !noteDataColumns.contains(column) {
            throw .missingColumn("\(Self.noteDataTable).\(column)")
        }
    }

    /// The `ZACCOUNT`, `ZACCOUNT1`, `ZACCOUNT2`… columns present, by ascending number: which of
    /// them links a note to its account depends on the OS version that wrote the file.
    var accountColumns: [String] {
        objectColumns.filter { name in
            name.hasPrefix("ZACCOUNT") && name.dropFirst("ZACCOUNT".count).allSatisfy(\.isASCIIDigit)
        }.sorted { ($0.count, $0) < ($1.count, $1) }
    }

    private static func ordinaryColumns(of table: String, _ db: Database) throws(AppleNotesError) -> Set<String> {
        let rows = try db.storedRows(table: table, sql: "PRAGMA table_xinfo(\(table))")
        var names: Set<String> = []
        for row in rows {
            // hidden: 0 ordinary, 1 hidden (virtual tables), 2 and 3 generated.
            guard let name = try? row.text("name"), (try? row.integer("hidden")) == 0 else { continue }
            names.insert(name.uppercased())
        }
        return names
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
