import Crypto
import Foundation
import GRDB
import Synchronization
import TresorCrypto
import TresorKeybag
import TresorNotesDomain
import TresorStorage
import TresorSystem

/// The notes of one home: accounts, folders, notes, attachments, locked notes and their
/// secure sessions (docs/API.md, "Notes"; docs/FORMAT.md, "Notes"). The daemon holds one; tests
/// make their own over a temporary home.
///
/// Every piece of content is sealed under the keybag's `afterFirstUnlock` class (through
/// `ContentSealing`), so nothing is readable before the first unlock after a start. Locked
/// notes are sealed, in addition, under their own note key (``LockedNoteCrypto``), which only
/// the passphrase unwraps; the passphrase key stays in memory while its secure session is open.
///
/// ```swift
/// let notes = try NotesStore(paths: paths, keybag: keybag)
/// let note = try notes.createNote(NoteDraft(title: "Bank", body: "PIN 1234"))
/// try notes.setPassphrase(try Passphrase("correct horse"), hint: "horse")
/// try notes.lockNote(note.id)                   // the session opened by `setPassphrase`
/// notes.lockNow()                               // every session ends
/// try notes.openNote(note.id, passphrase: try Passphrase("correct horse")).body  // "PIN 1234"
/// ```
public final class NotesStore: Sendable {
    let pool: DatabasePool
    let keybag: Keybag
    let settings: NotesSettings
    let attachmentsFolder: URL
    let databaseFile: URL
    let sessions = Mutex(SecureSessions())
    let index: SearchIndex
    /// Set when a truncating checkpoint could not complete (a reader held it off).
    let checkpointPending = Mutex(false)
    /// Progress of a passphrase change in flight: (done, total).
    let changeProgress = Mutex<(done: Int, total: Int)?>(nil)
    /// Where committed changes are announced (live updates).
    public let changes: NoteChangeFeed

    /// The protection class whose key seals note content (docs/FORMAT.md, "Two layers":
    /// `afterFirstUnlock`).
    public static let protectionClass = ProtectionClass.afterFirstUnlock
    /// The local account's display name.
    public static let localAccountName = "On My Computer"

    /// Opens (creating when missing) the notes database and attachments folder of `paths`.
    /// - Parameters:
    ///   - paths: the home.
    ///   - keybag: its keybag (note content is sealed under its `afterFirstUnlock` class).
    ///   - settings: KDF rounds, session timeout, clock.
    ///   - changes: where committed changes are announced.
    /// - Throws: a database or file error.
    public convenience init(paths: TresorPaths, keybag: Keybag, settings: NotesSettings = .production, changes: NoteChangeFeed = NoteChangeFeed())
        throws
    {
        try self.init(paths: paths, keybag: keybag, settings: settings, changes: changes, maintaining: true)
    }

    /// Opens the notes database of `paths` for reading while its daemon may be running
    /// (`tresor server migrate`, docs/WEB.md): unlike ``init(paths:keybag:settings:changes:)`` it
    /// neither adds the local account nor removes attachment files no row names yet — the
    /// daemon may be writing one.
    /// - Parameters:
    ///   - paths: the home.
    ///   - keybag: its keybag, unlocked.
    ///   - settings: KDF rounds, clock.
    /// - Returns: the store, to read with ``readAllForBackup(_:)``.
    /// - Throws: ``NotesError/notFound(_:)`` when the home has no notes database; a database error.
    public static func openForReading(paths: TresorPaths, keybag: Keybag, settings: NotesSettings = .production) throws -> NotesStore {
        guard FileManager.default.fileExists(atPath: paths.notesDatabase.path) else {
            throw NotesError.notFound("the notes of home \(paths.home.path)")
        }
        return try NotesStore(paths: paths, keybag: keybag, settings: settings, changes: NoteChangeFeed(), maintaining: false)
    }

    private init(paths: TresorPaths, keybag: Keybag, settings: NotesSettings, changes: NoteChangeFeed, maintaining: Bool) throws {
        self.changes = changes
        try SecureFiles.createDirectory(paths.attachmentsFolder)
        self.pool = try NotesDatabase.open(at: paths.notesDatabase)
        self.keybag = keybag
        self.settings = settings
        self.attachmentsFolder = paths.attachmentsFolder
        self.databaseFile = paths.notesDatabase
        self.index = try SearchIndex()
        // On a read-only file system the database was opened read-only (reads are served): the
        // local account is there since the first start, and nothing can be removed.
        guard maintaining, !SecureFiles.isOnReadOnlyFileSystem(paths.notesDatabase) else { return }
        let now = settings.clock()
        let referenced = try pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO accounts (id, name, created) VALUES (?, ?, ?)",
                arguments: [AccountID.local.rawValue, Self.localAccountName, now.timeIntervalSince1970])
            return Set(try String.fetchAll(db, sql: "SELECT file FROM attachments"))
        }
        // A crash between writing an attachment file and committing its row leaves a file no
        // row names; and after a lock or unlock, the file the row no longer names.
        AttachmentFile.removeUnreferenced(in: attachmentsFolder, keeping: referenced)
    }

    /// Whether this store was opened on a read-only file system that is writable again: it
    /// refuses every write until a new store is opened on the same home (the daemon opens one at
    /// the next request, so writing resumes without a restart). A secure session opened meanwhile
    /// ends with the old store, as at a lock; on a read-only disk only the passphrase key kept in
    /// the keychain can have opened one (a typed passphrase must be counted on disk first).
    public var needsReopeningToWrite: Bool { SealedDatabase.isReadOnlyOnAWritableFileSystem(pool, at: databaseFile) }

    /// Closes the database's connections, before a new store is opened on the same home
    /// (``needsReopeningToWrite``): SQLite shares a file's WAL index between the connections of
    /// one process, and a read-only connection still open would keep the new one read-only.
    /// Waits for the reads and writes in progress; any later one through this store fails.
    public func close() {
        try? pool.close()
    }

    // MARK: Shared helpers

    var now: Date { settings.clock() }

    /// The content layer, or `contentUnavailable` before the first unlock.
    func sealing() throws -> ContentSealing {
        guard let key = try? keybag.classKey(for: Self.protectionClass) else { throw NotesError.contentUnavailable }
        return ContentSealing(classKey: key)
    }

    func title(of row: NoteRow, _ sealing: ContentSealing) throws -> String {
        try sealing.noteLayer(row).openText(row.sealedTitle, table: "notes", id: row.id, column: "title")
    }

    func hint(of passphrase: PassphraseRow, _ sealing: ContentSealing) throws -> String? {
        try passphrase.sealedHint.map { try sealing.openText($0, table: "passphrases", id: "\(passphrase.id)", column: "hint") }
    }

    /// One note's summary; many notes' through ``NoteSummaryReader``.
    func summary(of row: NoteRow, _ db: Database, _ sealing: ContentSealing) throws -> NoteSummary {
        var reader = NoteSummaryReader(self, db, sealing)
        return try reader.summary(of: row)
    }

    func lockInfo(_ passphrase: PassphraseRow, _ db: Database, _ sealing: ContentSealing) throws -> LockInfo {
        let account = try AccountRow.fetch(AccountID(rawValue: passphrase.accountID), db)
        let isCurrent = account.currentPassphraseID == passphrase.id
        let timeout = settings.sessionIdleTimeout, now = now
        return LockInfo(
            source: passphrase.source, passphraseID: passphrase.id, generation: passphrase.generation, isCurrent: isCurrent,
            hint: isCurrent ? nil : try hint(of: passphrase, sealing), setOn: passphrase.created,
            isOpen: sessions.withLock { $0.isOpen(passphrase.id, now: now, timeout: timeout) })
    }

    /// Truncating checkpoint after a change that removed content. If a reader kept it from
    /// completing, ``completePendingCheckpoint()`` retries it (the daemon calls it every second).
    func purgeRemovedPages() {
        let done = SealedDatabase.checkpoint(pool)
        checkpointPending.withLock { $0 = !done }
    }

    /// Retries a truncating checkpoint that a reader held off, so removed content does not
    /// linger in `-wal` until the next change. Returns whether one is still pending.
    @discardableResult
    public func completePendingCheckpoint() -> Bool {
        guard checkpointPending.withLock({ $0 }) else { return false }
        purgeRemovedPages()
        return checkpointPending.withLock { $0 }
    }

    /// Announces a committed change of note `id` to its owner and participants (and `extra`).
    func announce(_ kind: NoteChange.Kind, note id: String, alsoTo extra: [AccountID] = []) {
        guard changes.hasListeners, let (accounts, revision) = try? audience(of: id) else { return }
        changes.publish(NoteChange(kind: kind, noteID: id, revision: revision, accounts: accounts.union(extra)))
    }

    /// Who may see note `id` (owner and participants), and its revision.
    func audience(of id: String) throws -> (Set<AccountID>, Int64) {
        try pool.read { db in
            let row = try NoteRow.fetch(id, db)
            return (try audience(of: row, db), row.revision)
        }
    }

    /// Who may see note `row` (owner and participants), read in `db`'s transaction.
    func audience(of row: NoteRow, _ db: Database) throws -> Set<AccountID> {
        let participants = try String.fetchAll(db, sql: "SELECT account_id FROM participants WHERE note_id = ?", arguments: [row.id])
        return Set(([row.accountID] + participants).map(AccountID.init(rawValue:)))
    }

}
