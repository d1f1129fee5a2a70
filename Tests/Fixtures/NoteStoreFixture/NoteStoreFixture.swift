import Foundation
@_exported import GRDB

/// Writes small NoteStore.sqlite files shaped like Apple's, for tests that read them.
///
/// Add accounts, folders and notes (unlocked with a text, locked with given crypto fields, or
/// with raw `ZDATA`), then ``write(to:)``. Every method returns the row's `Z_PK`. Any column of
/// any row can be overridden with an arbitrary value (wrong types, NULLs) through
/// ``Note/objectColumns`` and ``Note/noteDataColumns``, and ``sqlBeforeRows`` /
/// ``sqlAfterRows`` reshape the schema, so hostile variants stay one line each.
///
/// ```swift
/// var fixture = NoteStoreFixture(schema: .newer)
/// let account = fixture.addAccount(name: "iCloud")
/// let folder = fixture.addFolder(title: "Recipes", account: account)
/// let note = try fixture.addNote(NoteStoreFixture.Note(text: "Bread\n500 g flour", folder: folder, account: account))
/// try fixture.write(to: folder.appendingPathComponent("NoteStore.sqlite"))
/// ```
public struct NoteStoreFixture {
    /// Which Apple OS generation's columns the file has.
    public enum Schema: String, CaseIterable, CustomStringConvertible, Sendable {
        /// Like macOS 10.11–10.14 / iOS 9–12: one creation date `ZCREATIONDATE`, notes linked to
        /// their account by `ZACCOUNT2`, a locked note's IV and tag only on ZICNOTEDATA, rollback
        /// journal.
        case older
        /// Like macOS 12+ / iOS 15+: `ZCREATIONDATE`, `ZCREATIONDATE1` and `ZCREATIONDATE3`
        /// (notes use the last), accounts by `ZACCOUNT4` among `ZACCOUNT3`/`4`/`7`, IV and tag
        /// columns on both tables (the note row's hold other values, as Apple's encrypted
        /// metadata does), extra columns Tresor ignores, Core Data's Z_PRIMARYKEY and
        /// Z_METADATA tables, WAL journal mode.
        case newer

        public var description: String { rawValue }
    }

    /// What a note row holds. `nil` columns are written as NULL.
    public struct Note {
        /// The note's body.
        public enum Body {
            /// An unlocked note: `ZDATA` is the gzipped protobuf of this text.
            case text(String)
            /// An unlocked note with exactly these `ZDATA` bytes (damaged bodies, bombs…).
            case data(Data)
            /// A locked note with these crypto fields; `ZDATA` is the ciphertext.
            case locked(Locked)
            /// No ZICNOTEDATA row at all.
            case none
        }

        public struct Locked {
            public var salt: Data
            public var iterations: Int64
            public var wrappedKey: Data
            public var iv: Data
            public var tag: Data
            public var ciphertext: Data
            public var hint: String?

            public init(salt: Data, iterations: Int64, wrappedKey: Data, iv: Data, tag: Data, ciphertext: Data, hint: String?) {
                self.salt = salt
                self.iterations = iterations
                self.wrappedKey = wrappedKey
                self.iv = iv
                self.tag = tag
                self.ciphertext = ciphertext
                self.hint = hint
            }

            /// The full-note vector's fields (``AppleNotesVectors/FullNote``): it opens with its
            /// passphrase to ``AppleNotesVectors/FullNote/text``.
            /// - Parameter hint: the passphrase hint stored with it.
            /// - Returns: the locked body.
            public static func fullNoteVector(hint: String?) -> Locked {
                let full = AppleNotesVectors.FullNote.self
                return Locked(
                    salt: full.salt, iterations: Int64(full.iterations), wrappedKey: full.wrappedKey, iv: full.iv, tag: full.tag,
                    ciphertext: full.ciphertext, hint: hint)
            }
        }

        public var title: String?
        public var body: Body
        public var folder: Int64?
        public var account: Int64?
        /// Seconds since 2001-01-01, written to the schema's creation-date column.
        public var created: Double?
        /// Seconds since 2001-01-01, written to `ZMODIFICATIONDATE1`.
        public var modified: Double?
        /// Written last over the ZICCLOUDSYNCINGOBJECT row: any column, any value.
        public var objectColumns: [String: DatabaseValue] = [:]
        /// Written last over the ZICNOTEDATA row: any column, any value.
        public var noteDataColumns: [String: DatabaseValue] = [:]

        public init(
            title: String? = nil, text: String, folder: Int64? = nil, account: Int64? = nil,
            created: Double? = nil, modified: Double? = nil
        ) {
            self.init(title: title, body: .text(text), folder: folder, account: account, created: created, modified: modified)
        }

        public init(
            title: String? = nil, body: Body, folder: Int64? = nil, account: Int64? = nil,
            created: Double? = nil, modified: Double? = nil
        ) {
            self.title = title
            self.body = body
            self.folder = folder
            self.account = account
            self.created = created
            self.modified = modified
        }
    }

    public let schema: Schema
    /// Statements run after the tables are created and before any row is inserted.
    public var sqlBeforeRows: [String] = []
    /// Statements run after every row is inserted (drop a column, swap a table for a view…).
    public var sqlAfterRows: [String] = []
    private var objects: [[String: DatabaseValue]] = []
    private var noteData: [[String: DatabaseValue]] = []
    private var nextID: Int64 = 1

    public init(schema: Schema = .newer) {
        self.schema = schema
    }

    /// The column linking a note to its account in this schema.
    public var noteAccountColumn: String { schema == .older ? "ZACCOUNT2" : "ZACCOUNT4" }
    /// The column holding a note's creation date in this schema.
    public var creationDateColumn: String { schema == .older ? "ZCREATIONDATE" : "ZCREATIONDATE3" }

    @discardableResult
    public mutating func addAccount(name: String) -> Int64 {
        let id = takeID()
        objects.append(["Z_PK": id.databaseValue, "Z_ENT": entity("ICAccount"), "ZNAME": name.databaseValue])
        return id
    }

    /// Adds a folder: nested in `parent` when given; `type` is Apple's `ZFOLDERTYPE` (1 for an
    /// account's Recently Deleted), written only where the schema has the column.
    @discardableResult
    public mutating func addFolder(title: String, account: Int64?, parent: Int64? = nil, type: Int64? = nil) -> Int64 {
        let id = takeID()
        var folder: [String: DatabaseValue] = [
            "Z_PK": id.databaseValue, "Z_ENT": entity("ICFolder"), "ZTITLE2": title.databaseValue,
            "ZOWNER": account.databaseValue,
        ]
        if schema == .newer {
            folder["ZPARENT"] = parent.databaseValue
            folder["ZFOLDERTYPE"] = (type ?? 0).databaseValue
        }
        objects.append(folder)
        return id
    }

    @discardableResult
    public mutating func addNote(_ note: Note) throws -> Int64 {
        let id = takeID()
        var object: [String: DatabaseValue] = [
            "Z_PK": id.databaseValue, "Z_ENT": entity("ICNote"), "ZTITLE1": note.title.databaseValue,
            "ZFOLDER": note.folder.databaseValue, noteAccountColumn: note.account.databaseValue,
            creationDateColumn: note.created.databaseValue, "ZMODIFICATIONDATE1": note.modified.databaseValue,
            "ZISPASSWORDPROTECTED": 0.databaseValue,
        ]
        var data: [String: DatabaseValue]? = ["Z_PK": (1000 + id).databaseValue, "ZNOTE": id.databaseValue]
        switch note.body {
        case .text(let text):
            data?["ZDATA"] = try Gzip.noteBody(text).databaseValue
        case .data(let bytes):
            data?["ZDATA"] = bytes.databaseValue
        case .none:
            data = nil
        case .locked(let locked):
            object["ZISPASSWORDPROTECTED"] = 1.databaseValue
            object["ZCRYPTOSALT"] = locked.salt.databaseValue
            object["ZCRYPTOITERATIONCOUNT"] = locked.iterations.databaseValue
            object["ZCRYPTOWRAPPEDKEY"] = locked.wrappedKey.databaseValue
            object["ZPASSWORDHINT"] = locked.hint.databaseValue
            data?["ZDATA"] = locked.ciphertext.databaseValue
            data?["ZCRYPTOINITIALIZATIONVECTOR"] = locked.iv.databaseValue
            data?["ZCRYPTOTAG"] = locked.tag.databaseValue
            if schema == .newer {
                // Apple's note row has its own IV and tag (for its encrypted metadata).
                object["ZCRYPTOINITIALIZATIONVECTOR"] = Data(repeating: 0xEE, count: 16).databaseValue
                object["ZCRYPTOTAG"] = Data(repeating: 0xDD, count: 16).databaseValue
            }
        }
        object.merge(note.objectColumns) { _, override in override }
        objects.append(object)
        if var data {
            data.merge(note.noteDataColumns) { _, override in override }
            noteData.append(data)
        }
        return id
    }

    /// Writes the database to `url` (which must not exist yet) and closes it, leaving no
    /// `-journal`, `-wal` or `-shm` file behind.
    public func write(to url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.writeWithoutTransaction { db in
            if schema == .newer { try db.execute(sql: "PRAGMA journal_mode = WAL") }
            for statement in createStatements + sqlBeforeRows { try db.execute(sql: statement) }
            try db.inTransaction {
                for row in objects { try insert(row, into: "ZICCLOUDSYNCINGOBJECT", db) }
                for row in noteData { try insert(row, into: "ZICNOTEDATA", db) }
                return .commit
            }
            for statement in sqlAfterRows { try db.execute(sql: statement) }
        }
        try queue.close()
        for suffix in ["-journal", "-wal", "-shm"] {
            guard !FileManager.default.fileExists(atPath: url.path + suffix) else {
                throw FixtureError("the fixture left \(url.lastPathComponent)\(suffix) behind")
            }
        }
    }

    /// Writes the database into `folder` as NoteStore.sqlite and returns its URL.
    public func write(into folder: TemporaryFolder, name: String = "NoteStore.sqlite") throws -> URL {
        let url = folder.url.appendingPathComponent(name)
        try write(to: url)
        return url
    }

    private mutating func takeID() -> Int64 {
        defer { nextID += 1 }
        return nextID
    }

    private static let entities = ["ICAccount": 1, "ICFolder": 2, "ICNote": 3]

    private func entity(_ name: String) -> DatabaseValue { (Self.entities[name] ?? 0).databaseValue }

    private func insert(_ row: [String: DatabaseValue], into table: String, _ db: Database) throws {
        let columns = row.keys.sorted()
        let sql =
            "INSERT INTO \(table) (\(columns.map { "\"\($0)\"" }.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        try db.execute(sql: sql, arguments: StatementArguments(columns.map { row[$0]! }))
    }

    private var createStatements: [String] {
        switch schema {
        case .older:
            return [
                """
                CREATE TABLE ZICCLOUDSYNCINGOBJECT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
                  ZISPASSWORDPROTECTED INTEGER, ZCRYPTOITERATIONCOUNT INTEGER, ZACCOUNT2 INTEGER, ZFOLDER INTEGER,
                  ZOWNER INTEGER, ZCREATIONDATE TIMESTAMP, ZMODIFICATIONDATE1 TIMESTAMP, ZNAME VARCHAR,
                  ZPASSWORDHINT VARCHAR, ZTITLE1 VARCHAR, ZTITLE2 VARCHAR, ZCRYPTOSALT BLOB, ZCRYPTOWRAPPEDKEY BLOB)
                """,
                "CREATE TABLE ZICNOTEDATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNOTE INTEGER, ZDATA BLOB, ZCRYPTOINITIALIZATIONVECTOR BLOB, ZCRYPTOTAG BLOB)",
                "CREATE INDEX ZICNOTEDATA_ZNOTE_INDEX ON ZICNOTEDATA (ZNOTE)",
            ]
        case .newer:
            return [
                """
                CREATE TABLE ZICCLOUDSYNCINGOBJECT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
                  ZMARKEDFORDELETION INTEGER, ZISPASSWORDPROTECTED INTEGER, ZISPINNED INTEGER, ZCRYPTOITERATIONCOUNT INTEGER,
                  ZACCOUNT3 INTEGER, ZACCOUNT4 INTEGER, ZACCOUNT7 INTEGER, ZFOLDER INTEGER, ZFOLDERTYPE INTEGER, ZNOTEDATA INTEGER, ZOWNER INTEGER,
                  ZPARENT INTEGER, ZCREATIONDATE TIMESTAMP, ZCREATIONDATE1 TIMESTAMP, ZCREATIONDATE3 TIMESTAMP,
                  ZMODIFICATIONDATE1 TIMESTAMP, ZIDENTIFIER VARCHAR, ZNAME VARCHAR, ZPASSWORDHINT VARCHAR, ZSNIPPET VARCHAR,
                  ZTITLE VARCHAR, ZTITLE1 VARCHAR, ZTITLE2 VARCHAR, ZCRYPTOINITIALIZATIONVECTOR BLOB, ZCRYPTOSALT BLOB,
                  ZCRYPTOTAG BLOB, ZCRYPTOWRAPPEDKEY BLOB, ZENCRYPTEDVALUESJSON BLOB, ZUNAPPLIEDENCRYPTEDRECORD BLOB)
                """,
                """
                CREATE TABLE ZICNOTEDATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNOTE INTEGER,
                  ZCRYPTOINITIALIZATIONVECTOR BLOB, ZCRYPTOTAG BLOB, ZDATA BLOB)
                """,
                "CREATE INDEX ZICNOTEDATA_ZNOTE_INDEX ON ZICNOTEDATA (ZNOTE)",
                "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
                "INSERT INTO Z_PRIMARYKEY VALUES (1, 'ICAccount', 0, 0), (2, 'ICFolder', 0, 0), (3, 'ICNote', 0, 0)",
                "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            ]
        }
    }
}
