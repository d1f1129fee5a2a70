import Foundation
import GRDB
import TresorNotesDomain

// The local account's folders and the sync account's travel by name (docs/SYNC.md, "Notes"),
// empty ones too. `sync_folders` keeps, sealed, the account's folder names as this device last
// had them from the server: a local folder not among them is one made here, one of them no
// longer here was deleted here.

extension NotesStore {
    /// The local account's folder names, and the account's as this device last had them from
    /// the server (empty before the first time).
    /// - Returns: both sets.
    /// - Throws: ``NotesError/contentUnavailable`` while the keybag was never unlocked.
    public func folderNamesForSync() throws -> (local: Set<String>, agreed: Set<String>) {
        let sealing = try sealing()
        return try pool.read { db in (Set(try localFolders(db, sealing).values), try agreedFolders(db, sealing)) }
    }

    /// Mirrors the account's folders, in one transaction: makes those missing here (but for
    /// those deleted here whose deletion has not gone yet), deletes
    /// those the server no longer has that this device had from it (`agreed`) and that hold no
    /// note outside Recently Deleted — a folder made here meanwhile, or holding notes, stays —
    /// and records `names` as the account's.
    /// - Parameters:
    ///   - names: the account's folder names on the server.
    ///   - agreed: the names this device had from the server before.
    ///   - unsentDeletions: folders deleted here that this sync did not send (past the most a
    ///     request names): the next one sends them.
    /// - Throws: ``NotesError/contentUnavailable``.
    public func applySyncedFolders(_ names: [String], agreed: Set<String>, unsentDeletions: Set<String> = []) throws {
        let sealing = try sealing()
        let server = Set(names)
        let changed = try pool.write { db -> Bool in
            var changed = false
            let local = try localFolders(db, sealing)
            for name in server.subtracting(local.values).subtracting(unsentDeletions) {
                _ = try folderID(named: name, account: .local, creating: true, db, sealing)
                changed = true
            }
            for (id, name) in local where !server.contains(name) && agreed.contains(name) {
                guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notes WHERE folder_id = ? AND deleted IS NULL", arguments: [id]) == 0
                else { continue }
                try removeEmptyFolder(id, db)
                changed = true
            }
            let sealed = try sealing.seal(try JSONEncoder().encode(server.sorted()), table: "sync_folders", id: "1", column: "names")
            try db.execute(sql: "INSERT OR REPLACE INTO sync_folders (id, sealed_names) VALUES (1, ?)", arguments: [sealed])
            return changed
        }
        if changed { changes.publish(NoteChange(kind: .folders, noteID: nil, revision: nil, accounts: [.local])) }
    }

    /// The local account's folders: id → name.
    private func localFolders(_ db: Database, _ sealing: ContentSealing) throws -> [String: String] {
        var folders: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, sealed_name FROM folders WHERE account_id = 'local'") {
            let id: String = row["id"]
            folders[id] = try sealing.openText(row["sealed_name"], table: "folders", id: id, column: "name")
        }
        return folders
    }

    private func agreedFolders(_ db: Database, _ sealing: ContentSealing) throws -> Set<String> {
        guard let sealed = try Data.fetchOne(db, sql: "SELECT sealed_names FROM sync_folders WHERE id = 1") else { return [] }
        guard let names = try? JSONDecoder().decode([String].self, from: try sealing.open(sealed, table: "sync_folders", id: "1", column: "names"))
        else { throw NotesError.damaged("the sync's folder names") }
        return Set(names)
    }
}
