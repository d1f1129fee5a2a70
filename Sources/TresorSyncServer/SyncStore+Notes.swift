import Foundation
import PostgresNIO
import TresorNotesDomain
import TresorSyncProtocol
import TresorWebStorePostgres

/// The account's notes changes in counter order (docs/SYNC.md, "Notes"). The counter is taken by
/// trigger in every write of a note (`ServerSchema.version4`); the notes devices created are
/// remembered by the web store, in the creation's transaction (``SyncedNoteCreationStore``).
extension SyncStore {
    /// A change after a cursor: a note written (`gone` false) or deleted for good — or, for a
    /// note shared with the account (`sharedWith`), no longer the account's to see.
    struct NoteChangeRow: Sendable {
        var counter: UInt64
        var noteID: String
        var gone: Bool
        var sharedWith: Bool = false
    }

    /// The account's notes written or deleted for good after `cursor`, and the notes shared with
    /// it written, shared or unshared after it, in counter order: at most `limit`, and whether
    /// more follow. A shared note goes as gone when, as the page is read, it is no longer shared
    /// with the account, is in its owner's Recently Deleted, or is deleted for good — what the
    /// web store's `access(toNote:for:)` answers, asked here of the whole page in its one query.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func noteChanges(account: AccountID, after cursor: UInt64, limit: Int) async throws -> (changes: [NoteChangeRow], more: Bool) {
        let logger = self.logger
        let rows = try await db.read { connection in
            try await connection.rows(
                """
                SELECT sync_counter, id, FALSE, FALSE FROM notes WHERE account_id = \(account.rawValue) AND sync_counter > \(Int64(cursor))
                UNION ALL
                SELECT sync_counter, note_id, TRUE, FALSE FROM sync_notes_gone
                WHERE account_id = \(account.rawValue) AND sync_counter > \(Int64(cursor))
                UNION ALL
                SELECT changes.sync_counter, changes.note_id, NOT EXISTS (
                    SELECT 1 FROM participants JOIN notes ON notes.id = participants.note_id
                    WHERE participants.note_id = changes.note_id AND participants.account_id = changes.account_id AND notes.deleted IS NULL
                ), TRUE
                FROM sync_shared_note_changes AS changes
                WHERE changes.account_id = \(account.rawValue) AND changes.sync_counter > \(Int64(cursor))
                ORDER BY 1 LIMIT \(Int64(limit + 1))
                """, logger, as: (Int64, String, Bool, Bool).self)
        }
        let changes = rows.prefix(limit).map { NoteChangeRow(counter: UInt64($0.0), noteID: $0.1, gone: $0.2, sharedWith: $0.3) }
        return (changes, rows.count > limit)
    }

    /// Whether note `id` was shared with `account` at some time (it has a number on its counter).
    /// - Throws: ``NotesError/unavailable(_:)``.
    func wasShared(note id: String, with account: AccountID) async throws -> Bool {
        let logger = self.logger
        return try await db.read { connection in
            try await connection.value(
                "SELECT TRUE FROM sync_shared_note_changes WHERE account_id = \(account.rawValue) AND note_id = \(id)", logger, as: Bool.self)
        } ?? false
    }

    /// The login name of `account` (nil for an account that is gone).
    /// - Throws: ``NotesError/unavailable(_:)``.
    func loginName(of account: AccountID) async throws -> String? {
        let logger = self.logger
        return try await db.read { connection in
            try await connection.value("SELECT login_name FROM accounts WHERE id = \(account.rawValue)", logger, as: String.self)
        }
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
