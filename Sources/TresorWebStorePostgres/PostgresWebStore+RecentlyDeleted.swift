import Foundation
import PostgresNIO
import TresorNotesDomain

// Recently Deleted (docs/FORMAT.md): a deleted note keeps its row, attachments and participants
// for ``NoteRules/recentlyDeletedDays`` days, seen only by its owner; then, or when deleted for
// good, it goes with its attachments' chunks.
extension PostgresWebStore: RecentlyDeletedStore {
    func moveToRecentlyDeleted(_ id: String) async throws {
        try await db.transaction { [self, logger] connection in
            let row = try await noteForWrite(id, connection)
            guard !row.isDeleted else { throw NotesError.invalid("note \(id) is in Recently Deleted already") }
            try await connection.run("UPDATE notes SET deleted = \(now) WHERE id = \(id)", logger)
            try await announce(.deleted, note: id, connection)
        }
    }

    func restoreNote(_ id: String) async throws -> NoteSummary {
        try await db.transaction { [self] connection in
            try await restoreNote(id, connection)
            return try await summary(note(id, connection), connection)
        }
    }

    /// ``restoreNote(_:)`` in the caller's transaction.
    func restoreNote(_ id: String, _ connection: PostgresConnection) async throws {
        let row = try await noteForWrite(id, connection)
        guard row.isDeleted else { throw NotesError.invalid("note \(id) is not in Recently Deleted") }
        try await connection.run("UPDATE notes SET deleted = NULL WHERE id = \(id)", logger)
        try await announce(.restored, note: id, connection)
    }

    func recentlyDeleted(account: AccountID) async throws -> [NoteSummary] {
        try await db.read { [self] connection in
            try await summaries(
                selecting: """
                    SELECT \(unescaped: StoredNote.summaryColumns) FROM notes
                    WHERE account_id = \(account.rawValue) AND deleted IS NOT NULL ORDER BY deleted DESC, id
                    """, connection)
        }
    }

    func deleteForGood(_ id: String) async throws {
        try await db.transaction { [self] connection in
            let row = try await noteForWrite(id, connection)
            guard row.isDeleted else { throw NotesError.invalid("only a note in Recently Deleted is deleted for good: delete it first") }
            try await removeNote(id, connection)
        }
    }

    func emptyRecentlyDeleted(account: AccountID) async throws -> Int {
        try await db.transaction { [self, logger] connection in
            try await lockAccount(account, connection)
            let ids = try await connection.column(
                "SELECT id FROM notes WHERE account_id = \(account.rawValue) AND deleted IS NOT NULL ORDER BY id FOR UPDATE", logger,
                as: String.self)
            for id in ids { try await removeNote(id, connection) }
            return ids.count
        }
    }

    func deleteExpiredNotes() async throws -> Int {
        let cutoff = now - Double(NoteRules.recentlyDeletedDays) * 86_400
        let abandonedBefore = now - 86_400
        let accounts = try await db.read { [logger] connection in
            try await connection.column(
                "SELECT DISTINCT account_id FROM notes WHERE deleted IS NOT NULL AND deleted <= \(cutoff) ORDER BY account_id", logger,
                as: String.self)
        }
        var deleted = 0
        for account in accounts {
            // One transaction per account, which takes the account's lock before its notes' as
            // every write of them does: taking the notes first could deadlock with a restore.
            deleted += try await db.transaction { [self, logger] connection in
                do {
                    try await lockAccount(AccountID(rawValue: account), connection)
                } catch NotesError.notFound {
                    return 0  // deleted meanwhile, with its notes
                }
                let ids = try await connection.column(
                    """
                    SELECT id FROM notes WHERE account_id = \(account) AND deleted IS NOT NULL AND deleted <= \(cutoff) ORDER BY id FOR UPDATE
                    """, logger, as: String.self)
                for id in ids { try await removeNote(id, connection) }
                return ids.count
            }
        }
        // Uploads a day old were abandoned by an instance that stopped: their chunks go too.
        try await db.transaction { [logger] connection in
            try await connection.run(
                """
                WITH stale AS (DELETE FROM attachment_uploads WHERE started < \(abandonedBefore) RETURNING id)
                DELETE FROM attachment_chunks WHERE attachment_id IN (SELECT id FROM stale)
                """, logger)
        }
        return deleted
    }

    /// Deletes note `id` with its attachments' chunks, pending uploads and participants, and
    /// tells those who could see it.
    func removeNote(_ id: String, _ connection: PostgresConnection) async throws {
        let (accounts, _) = try await audience(of: id, connection)
        try await connection.run(
            """
            DELETE FROM attachment_chunks WHERE attachment_id IN (
                SELECT id FROM attachments WHERE note_id = \(id) UNION SELECT id FROM attachment_uploads WHERE note_id = \(id))
            """, logger)
        // Attachments, uploads and participants go with the note (ON DELETE CASCADE).
        try await connection.run("DELETE FROM notes WHERE id = \(id)", logger)
        try await notify(.note(NoteChange(kind: .deletedForGood, noteID: id, revision: nil, accounts: accounts)), connection)
    }
}
