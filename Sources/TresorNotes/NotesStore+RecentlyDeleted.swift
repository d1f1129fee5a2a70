import Foundation
import GRDB
import TresorNotesDomain

// Recently Deleted (docs/FORMAT.md): deleting a note moves it there — with its attachments,
// participants and lock, all still sealed — for 30 days, from where it is restored or deleted
// for good. Lists, search, folders' counts and the widget leave it out; only its owner sees it.
extension NotesStore {

    /// Moves note `id` to Recently Deleted: it leaves every list, its participants no longer
    /// see it, and nothing can change it until it is restored.
    /// - Parameter id: the note.
    /// - Returns: the note as it now is (`deleted` set).
    /// - Throws: `notFound`; `invalid` when it is in Recently Deleted already.
    @discardableResult
    public func moveToRecentlyDeleted(_ id: String) throws -> NoteSummary {
        let sealing = try sealing()
        let moved = try pool.write { db in
            let row = try NoteRow.fetch(id, db)
            guard !row.isDeleted else { throw NotesError.invalid("note \(id) is in Recently Deleted already") }
            try db.execute(sql: "UPDATE notes SET deleted = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, id])
            return try summary(of: NoteRow.fetch(id, db), db, sealing)
        }
        index.remove(noteID: id)
        announce(.deleted, note: id)
        return moved
    }

    /// Brings note `id` back from Recently Deleted, to its folder if that still exists.
    /// - Parameter id: the note.
    /// - Returns: the note as it now is.
    /// - Throws: `notFound`; `invalid` when it is not in Recently Deleted.
    @discardableResult
    public func restoreNote(_ id: String) throws -> NoteSummary {
        let sealing = try sealing()
        let (restored, entry) = try pool.write { db -> (NoteSummary, SearchIndex.Entry) in
            guard try NoteRow.fetch(id, db).isDeleted else { throw NotesError.invalid("note \(id) is not in Recently Deleted") }
            try db.execute(sql: "UPDATE notes SET deleted = NULL WHERE id = ?", arguments: [id])
            let row = try NoteRow.fetch(id, db)
            let body = row.isLocked ? nil : try sealing.noteLayer(row).openText(row.sealedBody ?? Data(), table: "notes", id: id, column: "body")
            return (try summary(of: row, db, sealing), .init(noteID: id, accountID: row.accountID, title: try title(of: row, sealing), body: body))
        }
        index.upsert(entry)
        announce(.restored, note: id)
        return restored
    }

    /// The notes of `account` in Recently Deleted, most recently deleted first.
    /// - Parameter account: the owner.
    /// - Returns: their summaries (`deleted` set on each).
    public func recentlyDeleted(account: AccountID = .local) throws -> [NoteSummary] {
        let sealing = try sealing()
        return try pool.read { db in
            var reader = NoteSummaryReader(self, db, sealing)
            return try reader.summaries(
                of: Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(NoteRow.summaryColumns) FROM notes WHERE account_id = ? AND deleted IS NOT NULL ORDER BY deleted DESC, id
                        """, arguments: [account.rawValue]
                ).map(NoteRow.init(summaryRow:)))
        }
    }

    /// Deletes every note of `account` in Recently Deleted for good.
    /// - Parameter account: the owner.
    /// - Returns: how many notes were deleted.
    @discardableResult
    public func emptyRecentlyDeleted(account: AccountID = .local) throws -> Int {
        try deleteNotes { db in
            try Row.fetchAll(db, sql: "SELECT * FROM notes WHERE account_id = ? AND deleted IS NOT NULL", arguments: [account.rawValue])
                .map(NoteRow.init(row:))
        }
    }

    /// Deletes for good the notes that have been in Recently Deleted for
    /// ``recentlyDeletedDays`` days (the daemon calls it every minute; it needs no key).
    /// - Returns: how many notes were deleted.
    @discardableResult
    public func deleteExpiredNotes() throws -> Int {
        let cutoff = now.addingTimeInterval(-TimeInterval(NoteRules.recentlyDeletedDays) * 86_400).timeIntervalSince1970
        return try deleteNotes { db in
            try Row.fetchAll(db, sql: "SELECT * FROM notes WHERE deleted IS NOT NULL AND deleted <= ?", arguments: [cutoff]).map(NoteRow.init(row:))
        }
    }

    /// Refuses a change to a note in Recently Deleted.
    func requireNotDeleted(_ row: NoteRow) throws {
        guard !row.isDeleted else { throw NotesError.invalid("note \(row.id) is in Recently Deleted: restore it first") }
    }
}
