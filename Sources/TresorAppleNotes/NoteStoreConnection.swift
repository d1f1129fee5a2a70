import Foundation
internal import GRDB

/// Opens a NoteStore.sqlite the only way the reader ever does: read-only and immutable.
///
/// `immutable=1` tells SQLite the file cannot change, so it takes no locks and neither reads
/// nor creates `-wal`/`-shm` files: the user's folder stays byte-for-byte as it was. (The
/// price: changes still in an existing `-wal` are not seen; ``AppleNotesLibrary/unreadWriteAheadLog``
/// says when there are some.) SQLite is hardened against a hostile schema on top:
/// `trusted_schema = OFF`, `cell_size_check = ON`, `mmap_size = 0`, `query_only = ON`.
enum NoteStoreConnection {
    /// The 16 bytes every SQLite 3 database starts with.
    static let sqliteMagic = Data("SQLite format 3\0".utf8)

    /// Runs `body` on the database at `url`, then closes it.
    static func read<T>(_ url: URL, _ body: (Database) throws(AppleNotesError) -> T) throws(AppleNotesError) -> T {
        let path = url.standardizedFileURL.path
        try checkLooksLikeSQLite(path)
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "TresorAppleNotes.NoteStore"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON; PRAGMA mmap_size = 0; PRAGMA query_only = ON")
        }
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: PercentEncoding.immutableSQLiteURI(path: path), configuration: configuration)
        } catch {
            if !sqliteReadsURIFilenames() {
                throw .notANoteStore("this system's SQLite library cannot open files read-only and immutable (built without SQLITE_USE_URI)")
            }
            throw .notANoteStore("SQLite cannot open it (\(message(error)))")
        }
        defer { try? queue.close() }
        // Outside a transaction: after SQLite meets a damaged page, the COMMIT that ends a read
        // transaction fails too, which would turn one damaged note into a failed read.
        // Immutable means there is no writer to be consistent with.
        let outcome = queue.inDatabase { db in
            Result { () throws(AppleNotesError) -> T in try body(db) }
        }
        return try outcome.get()
    }

    /// Whether SQLite was built to read `file:` URIs without being asked (GRDB does not pass
    /// SQLITE_OPEN_URI). Debian's and most distributions' libsqlite3 are.
    private static func sqliteReadsURIFilenames() -> Bool {
        let answer = try? DatabaseQueue().read { db in
            try Bool.fetchOne(db, sql: "SELECT sqlite_compileoption_used('USE_URI')")
        }
        return answer == true
    }

    /// Whether `<path>-wal` exists and is not empty.
    static func hasUnreadWriteAheadLog(_ url: URL) -> Bool {
        let wal = URL(fileURLWithPath: url.standardizedFileURL.path + "-wal")
        return ((try? wal.resourceValues(forKeys: [.fileSizeKey]))?.fileSize ?? 0) > 0
    }

    /// SQLite's message for an error (never the SQL or its arguments), made safe to show.
    static func message(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return AppleNotesError.sanitized(error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
        return AppleNotesError.sanitized(String(describing: error))
    }

    /// A clear error before SQLite is involved: missing, not a regular file, empty, other format.
    private static func checkLooksLikeSQLite(_ path: String) throws(AppleNotesError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .notANoteStore("there is no file at that path")
        }
        guard !isDirectory.boolValue else { throw .notANoteStore("it is a folder, not a file") }
        // A FIFO or a device would block the open or the read below, and the import with it.
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw .notANoteStore("it is not a regular file (a pipe or a device)")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .notANoteStore("the file cannot be read")
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: sqliteMagic.count)) ?? Data()
        guard !head.isEmpty else { throw .notANoteStore("the file is empty") }
        guard head == sqliteMagic else { throw .notANoteStore("the file is not an SQLite database") }
    }

}
