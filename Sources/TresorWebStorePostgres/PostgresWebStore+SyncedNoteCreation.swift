import Foundation
import PostgresNIO
import TresorNotesDomain

// A device's new note and its origin (`sync_note_origins`) in one transaction (docs/SYNC.md,
// "Notes"): under the account's row lock, a creation retried — after a lost answer, or a server
// instance that died mid-way — finds the note the first one made, and two at once make one.
extension PostgresWebStore: SyncedNoteCreationStore {
    func createSyncedNote(
        _ draft: NoteDraft, locked: SyncedLockedRecord?, inRecentlyDeleted: Bool, origin: NoteOrigin, edit: SyncedEdit, account: AccountID,
        quota: StorageQuota?
    ) async throws -> (id: String, created: Bool) {
        if locked != nil { try NoteRules.validate(draft.title, limit: NoteLimits.titleBytes, what: "title", allowEmpty: false) }
        return try await db.transaction { [self, logger] connection in
            try await lockAccount(account, connection)
            if let made = try await connection.value(
                """
                SELECT o.note_id FROM sync_note_origins o JOIN notes n ON n.id = o.note_id AND n.account_id = o.account_id
                WHERE o.account_id = \(account.rawValue) AND o.device_id = \(origin.device) AND o.local_id = \(origin.localID)
                """, logger, as: String.self)
            {
                return (made, false)
            }
            try await check(quota, account: account, connection)
            let id: String
            if let locked {
                id = UUID().uuidString.lowercased()
                let passphraseID = try await passphraseID(for: locked, account: account, connection)
                let folderID = try await draft.folder.asyncMap { try await self.folderID(named: $0, account: account, creating: true, connection)! }
                try await insertSyncedLockedNote(
                    id, title: draft.title, folderID: folderID, isPinned: draft.isPinned, record: locked, passphraseID: passphraseID,
                    account: account, made: edit, connection)
            } else {
                id = try await insertNote(draft, account: account, made: edit, connection)
            }
            // A note of this origin deleted for good meanwhile: this one takes its place.
            try await connection.run(
                """
                INSERT INTO sync_note_origins (account_id, device_id, local_id, note_id)
                VALUES (\(account.rawValue), \(origin.device), \(origin.localID), \(id))
                ON CONFLICT (account_id, device_id, local_id) DO UPDATE SET note_id = EXCLUDED.note_id
                """, logger)
            if inRecentlyDeleted {
                try await connection.run("UPDATE notes SET deleted = \(now) WHERE id = \(id)", logger)
                try await announce(.deleted, note: id, connection)
            }
            return (id, true)
        }
    }
}
