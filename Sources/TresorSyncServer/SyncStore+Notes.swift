import Foundation
import PostgresNIO
import TresorNotesDomain
import TresorSyncProtocol
import TresorWebStorePostgres

/// The account's notes changes in counter order, and the notes devices created (docs/SYNC.md,
/// "Notes"). The counter is taken by trigger in every write of a note (`ServerSchema.version4`).
extension SyncStore {
    /// A change after a cursor: a note written (`gone` false) or deleted for good.
    struct NoteChangeRow: Sendable {
        var counter: UInt64
        var noteID: String
        var gone: Bool
    }

    /// The account's own notes written or deleted for good after `cursor`, in counter order: at
    /// most `limit`, and whether more follow.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func noteChanges(account: AccountID, after cursor: UInt64, limit: Int) async throws -> (changes: [NoteChangeRow], more: Bool) {
        let logger = self.logger
        let rows = try await db.read { connection in
            try await connection.rows(
                """
                SELECT sync_counter, id, FALSE FROM notes WHERE account_id = \(account.rawValue) AND sync_counter > \(Int64(cursor))
                UNION ALL
                SELECT sync_counter, note_id, TRUE FROM sync_notes_gone WHERE account_id = \(account.rawValue) AND sync_counter > \(Int64(cursor))
                ORDER BY 1 LIMIT \(Int64(limit + 1))
                """, logger, as: (Int64, String, Bool).self)
        }
        let changes = rows.prefix(limit).map { NoteChangeRow(counter: UInt64($0.0), noteID: $0.1, gone: $0.2) }
        return (changes, rows.count > limit)
    }

    /// The note that `device` created for its note `localID`, if any.
    func noteOrigin(account: AccountID, device: String, localID: String) async throws -> String? {
        let logger = self.logger
        return try await db.read { connection in
            try await connection.value(
                """
                SELECT note_id FROM sync_note_origins
                WHERE account_id = \(account.rawValue) AND device_id = \(device) AND local_id = \(localID)
                """, logger, as: String.self)
        }
    }

    /// Remembers that `device`'s note `localID` is note `noteID` here.
    func recordNoteOrigin(account: AccountID, device: String, localID: String, noteID: String) async throws {
        let logger = self.logger
        try await db.transaction { connection in
            try await connection.run(
                """
                INSERT INTO sync_note_origins (account_id, device_id, local_id, note_id)
                VALUES (\(account.rawValue), \(device), \(localID), \(noteID)) ON CONFLICT DO NOTHING
                """, logger)
        }
    }
}
