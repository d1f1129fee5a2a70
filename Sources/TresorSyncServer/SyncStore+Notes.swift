import Foundation
import PostgresNIO
import TresorNotesDomain
import TresorSyncProtocol
import TresorWebStorePostgres

/// The account's notes changes in counter order (docs/SYNC.md, "Notes"). The counter is taken by
/// trigger in every write of a note (`ServerSchema.version4`); the notes devices created are
/// remembered by the web store, in the creation's transaction (``SyncedNoteCreationStore``).
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

    /// The account's notes counter: the number of its latest note change (0 for none).
    /// - Throws: ``NotesError/unavailable(_:)``.
    func notesCounter(account: AccountID) async throws -> UInt64 {
        let logger = self.logger
        let counter = try await db.read { connection in
            try await connection.value("SELECT notes_counter FROM accounts WHERE id = \(account.rawValue)", logger, as: Int64.self)
        }
        return UInt64(max(counter ?? 0, 0))
    }
}
