import Foundation
import GRDB
import TresorModel
import TresorSystem

/// How Tresor keeps an SQLite database (the keychains, the notes): through GRDB, in WAL mode,
/// the file created 0600 first, every commit on the disk before it returns (`synchronous = FULL`),
/// deleted rows overwritten (`secure_delete`), and a truncating checkpoint whenever content is
/// removed — and once at open, so what a crash left in `-wal` joins the main file before anything
/// else happens.
///
/// What is *in* the rows is each store's business: every value that matters is sealed before
/// it gets here.
public enum SealedDatabase {
    /// Opens (creating when missing) the database at `url` and brings its schema up to date.
    ///
    /// On a read-only file system the database is opened read-only, as it is: reads are served,
    /// writes fail with `SQLITE_READONLY` (``StorageRefusal/diskReadOnly``).
    /// - Throws: ``StorageRefusal/diskReadOnly`` when a read-only file system holds no database
    ///   there, or one whose schema is older than this build's; SQLite's errors.
    public static func open(at url: URL, migrator: DatabaseMigrator) throws -> DatabasePool {
        if SecureFiles.isOnReadOnlyFileSystem(url.deletingLastPathComponent()) {
            guard SecureFiles.exists(url) else { throw StorageRefusal.diskReadOnly }
            let pool = try DatabasePool(path: readOnlyLocation(url), configuration: configuration(readonly: true))
            guard try pool.read({ db in try migrator.hasCompletedMigrations(db) }) else { throw StorageRefusal.diskReadOnly }
            return pool
        }
        // SQLite gives -wal and -shm the mode of the database file: create it 0600 first.
        if !SecureFiles.exists(url) { try SecureFiles.writeAtomically(Data(), to: url) }
        let pool = try DatabasePool(path: url.path, configuration: configuration(readonly: false))
        // GRDB sets its writer to `synchronous = NORMAL` once WAL mode is on, after every
        // `prepareDatabase`: a commit would then reach the disk only at the next checkpoint, and a
        // power cut could take a write that was already acknowledged. FULL syncs the WAL at each
        // commit (docs/SECURITY.md, "Durability").
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try migrator.migrate(pool)
        // Fold what a crash left in -wal into the main file now: a -wal damaged later then
        // costs at most what was written since this start, and no removed row outlives a
        // crash between its commit and its checkpoint (DamagedSideFilesTests, CrashConsistencyTests).
        checkpoint(pool)
        return pool
    }

    /// Whether `pool` was opened read-only because its file system was (``open(at:migrator:)``)
    /// and that file system is writable again: opening the database anew then writes. A store
    /// never turns a pool writable in place — its readers may be `immutable` (``readOnlyLocation(_:)``),
    /// which must not outlive the first write.
    /// - Parameters:
    ///   - pool: a pool ``open(at:migrator:)`` returned.
    ///   - url: the database file it was opened on.
    /// - Returns: true when the store should be opened again to write.
    public static func isReadOnlyOnAWritableFileSystem(_ pool: DatabasePool, at url: URL) -> Bool {
        pool.configuration.readonly && !SecureFiles.isOnReadOnlyFileSystem(url.deletingLastPathComponent())
    }

    /// A read-only connection of its own to a database ``open(at:migrator:)`` opened, for reads
    /// of one statement that must be quick: a pool's reader costs a semaphore, a barrier queue
    /// and two dispatch hops per read.
    public static func openReader(at url: URL) throws -> DatabaseQueue {
        let location = SecureFiles.isOnReadOnlyFileSystem(url) ? readOnlyLocation(url) : url.path
        return try DatabaseQueue(path: location, configuration: configuration(readonly: true))
    }

    /// What SQLite opens for a database on a read-only file system. A WAL database needs its
    /// `-shm` to be read, and there SQLite can create none: with a `-wal` that holds commits,
    /// both were left by a daemon that stopped without closing (and are used as they are);
    /// without one, the main file is all there is, opened `immutable` (no `-shm` needed).
    static func readOnlyLocation(_ url: URL) -> String {
        var info = stat()
        if stat(url.path + "-wal", &info) == 0, info.st_size > 0 { return url.path }
        return PercentEncoding.immutableSQLiteURI(path: url.path)
    }

    /// A writing connection of its own to an existing database, without migrations: for a
    /// restore's staged statements, applied beside the store's own pool (or, after a crash,
    /// before any store opens). Fails when the file does not exist.
    /// - Parameter url: the database file.
    /// - Returns: a queue on the file, set up as every other connection.
    /// - Throws: ``SecureFileError/notFound(path:)``; SQLite's errors.
    public static func openWriter(at url: URL) throws -> DatabaseQueue {
        guard SecureFiles.exists(url) else { throw SecureFileError.notFound(path: url.path) }
        return try DatabaseQueue(path: url.path, configuration: configuration(readonly: false))
    }

    /// Every connection's settings (a pool's readers are made read-only by the pool).
    private static func configuration(readonly: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readonly
        // Readers are brief; a TRUNCATE checkpoint waits for them rather than failing.
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // Deleted rows are overwritten with zeros, not just unlinked from the b-tree.
            try db.execute(sql: "PRAGMA secure_delete = ON")
            // The one writer keeps the upper levels of every b-tree in memory: at a million
            // items SQLite's default 2 MiB cache read them again for each insert (BENCHMARKS.md
            // §2). Readers keep the default, so the daemon's memory stays bounded.
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA cache_size = -16384")
                // What a pool's writer gets after GRDB's WAL setup too (``open(at:migrator:)``).
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
        }
        return configuration
    }

    /// Forces deleted pages out of the WAL file: without a truncating checkpoint, old page
    /// images (ciphertext of deleted rows) stay in `-wal` until it is reused.
    ///
    /// Returns false when readers kept it from completing within the busy timeout; the change
    /// itself is committed either way, so callers retry later rather than report a failure.
    @discardableResult
    public static func checkpoint(_ pool: DatabasePool) -> Bool {
        do {
            _ = try pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
            return true
        } catch {
            return false
        }
    }
}
