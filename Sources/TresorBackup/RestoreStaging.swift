import Foundation
import GRDB
import TresorStorage
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// The staging area of a restore, `restore-staging/` in the home (docs/FORMAT.md, "Restore
/// staging"): one journal of ``StagedStatement``s per database, the attachment files, and —
/// once everything is staged and durable — the `commit` marker. From the marker on the restore
/// completes, even across a crash: ``recover(home:)`` at the daemon's start runs the journals
/// again (they are written to be run twice) and moves the files in. Without the marker, the
/// staging area is removed and the home is as it was.
///
/// Everything staged is sealed as the home's own files are (rows under the home's keys,
/// attachment files under its content key): staging shows no more than the home.
public final class RestoreStaging {
    /// The folder's name in the home.
    public static let folderName = "restore-staging"
    static let commitName = "commit"

    let folder: URL
    let home: URL
    /// Where staged attachment files are written.
    public let attachments: URL
    /// Held around `journals` and `plan`: items are staged on a thread of their own
    /// (``RestoreItems``) while the notes are staged on the restore's.
    private let lock = ThreadCondition()
    private var journals: [String: (number: Int, writer: StatementJournal.Writer)] = [:]
    private var plan = CommitPlan()
    /// Set once the commit marker is written: from then on the restore is completed, never discarded.
    private var committed = false

    /// What the commit does, written as the marker.
    struct CommitPlan: Codable {
        /// Journal file → the database it is for, relative to the home.
        var journals: [String: String] = [:]
        /// Staged attachment files to move into `attachments/`.
        var files: [String] = []
        /// The home's attachment files that restored ones replace, removed once the notes database committed.
        var removedFiles: [String] = []
    }

    /// Makes an empty staging area in `home`, completing or removing what an earlier restore left.
    /// - Parameter home: the home restored into.
    /// - Throws: ``BackupError/io(_:)`` when it cannot be made.
    public init(home: URL) throws {
        self.home = home
        folder = home.appendingPathComponent(Self.folderName)
        attachments = folder.appendingPathComponent("attachments")
        _ = try Self.recover(home: home)
        do {
            try SecureFiles.createDirectory(attachments)
        } catch {
            throw BackupError.io("cannot make the restore's staging folder: \(error)")
        }
    }

    /// Adds `statements` to the journal of `database`.
    /// - Parameters:
    ///   - statements: what a store staged.
    ///   - database: the database they are for, relative to the home (`notes.db`).
    /// - Throws: ``TresorSystem/SecureFileError`` when the journal cannot be written.
    public func stage(_ statements: [StagedStatement], for database: String) throws {
        guard !statements.isEmpty else { return }
        lock.lock()
        defer { lock.unlock() }
        if journals[database] == nil {
            let number = journals.count + 1
            let writer = try StatementJournal.Writer(creating: folder.appendingPathComponent("journal-\(number)"))
            journals[database] = (number, writer)
            plan.journals["journal-\(number)"] = database
        }
        try journals[database]!.writer.append(contentsOf: statements)
    }

    /// Records a staged attachment file, to move into the home at the commit.
    /// - Parameter name: the file's name in ``attachments``.
    public func stageFile(_ name: String) {
        lock.lock()
        defer { lock.unlock() }
        plan.files.append(name)
    }

    /// Records the home's attachment files that restored ones replace, to remove once committed.
    /// - Parameter names: their names in the home's `attachments/`.
    public func removeAfterCommit(_ names: [String]) {
        lock.lock()
        defer { lock.unlock() }
        plan.removedFiles += names
    }

    /// Makes everything durable, checks every journal's expectations against its database, writes
    /// the commit marker and completes the restore.
    /// - Throws: ``StagedStatementError/expectationFailed(_:)`` when a database changed since the
    ///   staging (nothing is changed then); I/O and SQLite errors.
    public func commit() throws {
        for (_, journal) in journals { try journal.writer.commit() }
        try SecureFiles.syncDirectory(attachments)
        try SecureFiles.syncDirectory(folder)
        for (journal, database) in plan.journals {
            let queue = try SealedDatabase.openWriter(at: home.appendingPathComponent(database))
            try StatementJournal.check(folder.appendingPathComponent(journal), against: queue)
        }
        try SecureFiles.writeAtomically(try JSONEncoder().encode(plan), to: folder.appendingPathComponent(Self.commitName))
        committed = true
        do {
            try Self.complete(plan, folder: folder, home: home)
        } catch {
            throw BackupError.io("the restore is committed but could not be completed now (\(error)); it completes when the daemon next starts")
        }
    }

    /// Removes the staging area and everything in it: the home is as it was. Once the commit
    /// marker is written, nothing is removed: the next start completes the restore.
    public func discard() {
        guard !committed else { return }
        for (_, journal) in journals { journal.writer.abandon() }
        Self.remove(folder)
    }

    // MARK: Completing

    /// Completes or removes what a restore left in `home`: with a commit marker, the restore is
    /// completed (the journals run again, the files move in); without one, the staging area is
    /// removed. Run at the daemon's start, before any store opens.
    /// - Parameter home: the home.
    /// - Returns: whether a restore was completed.
    /// - Throws: when a committed restore cannot be completed (its staging area is kept for the
    ///   next start).
    @discardableResult
    public static func recover(home: URL) throws -> Bool {
        let folder = home.appendingPathComponent(folderName)
        guard SecureFiles.exists(folder) else { return false }
        let marker = folder.appendingPathComponent(commitName)
        guard SecureFiles.exists(marker) else {
            remove(folder)
            return false
        }
        let plan = try JSONDecoder().decode(CommitPlan.self, from: try SecureFiles.read(marker, limit: 256 * 1024 * 1024))
        try complete(plan, folder: folder, home: home)
        return true
    }

    /// Moves the staged files in, runs every journal in one transaction of its database, removes
    /// the replaced files and the staging area. Every step can be done again after a crash.
    private static func complete(_ plan: CommitPlan, folder: URL, home: URL) throws {
        let staged = folder.appendingPathComponent("attachments")
        let destination = home.appendingPathComponent("attachments")
        try SecureFiles.createDirectory(destination)
        for name in plan.files {
            let from = staged.appendingPathComponent(name).path
            // Moved already by an interrupted completion: the file is where it goes.
            if access(from, F_OK) != 0 { continue }
            guard rename(from, destination.appendingPathComponent(name).path) == 0 else {
                throw BackupError.io("cannot move a restored attachment into the home: \(String(cString: strerror(errno)))")
            }
        }
        try SecureFiles.syncDirectory(destination)
        // After the files: until the notes database commits, a moved file is named by no row,
        // and a crash then is completed by the next start before the notes store removes such
        // files. The databases are independent of each other, so their journals run side by side.
        let journals = plan.journals.sorted { $0.key < $1.key }.map { (journal: $0.key, database: $0.value) }
        for applied in TwoThreads.map(
            journals,
            { journal in
                let queue = try SealedDatabase.openWriter(at: home.appendingPathComponent(journal.database))
                try StatementJournal.apply(folder.appendingPathComponent(journal.journal), to: queue)
            })
        {
            try applied.get()
        }
        for name in plan.removedFiles { SecureFiles.overwriteAndRemove(destination.appendingPathComponent(name)) }
        remove(folder)
    }

    /// Removes the staging folder (its attachment files are sealed; they are unlinked).
    static func remove(_ folder: URL) {
        let staged = folder.appendingPathComponent("attachments")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: staged.path)) ?? [] {
            unlink(staged.appendingPathComponent(name).path)
        }
        rmdir(staged.path)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            unlink(folder.appendingPathComponent(name).path)
        }
        rmdir(folder.path)
        // Best effort: a staging folder a power cut brings back is completed again (every step
        // can be) or removed at the next start (``recover(home:)``).
        try? SecureFiles.syncDirectory(folder.deletingLastPathComponent())
    }
}
