import Foundation
import GRDB
import TresorModel
import TresorNotesDomain

// The mass-deletion hold for notes (docs/SYNC.md, "Notes"), by the arithmetic of the items' one
// (``MassDeletionWindow``). A note deleted for good elsewhere is not removed as its page is
// applied: its server id is set aside, and once the sync has pulled every page the deletions
// set aside are judged together — so a mass deletion that spans pages or syncs waits whole.

/// What settling the notes' deletions did.
public struct NoteDeletionsSettled: Sendable, Equatable {
    /// Notes removed here.
    public var applied: Int
    /// Deletions waiting for the user (`tresor sync now --allow-deletions`).
    public var held: Int
}

/// The rows of the deletions held (their tables: `Schema/NotesSyncSchema.swift`).
enum NoteDeletionHoldTables {
    /// Sets aside the deletion of synced note `serverID`.
    static func setAside(_ serverID: String, _ db: Database) throws {
        try db.execute(sql: "INSERT OR IGNORE INTO sync_note_deletions_held (server_id) VALUES (?)", arguments: [serverID])
    }

    /// Forgets the deletion set aside of `serverID` (the note arrived again, or is gone here).
    static func forget(_ serverID: String, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM sync_note_deletions_held WHERE server_id = ?").execute(arguments: [serverID])
    }

    static func window(_ db: Database, now: Date) throws -> MassDeletionWindow {
        let stored = try Row.fetchOne(db, sql: "SELECT start, deleted FROM sync_note_deletion_window WHERE id = 1").map {
            MassDeletionWindow(start: Date(timeIntervalSince1970: $0["start"]), deleted: $0["deleted"])
        }
        return MassDeletionWindow.current(stored, now: now)
    }

    static func record(_ window: MassDeletionWindow, _ db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO sync_note_deletion_window (id, start, deleted) VALUES (1, ?, ?)",
            arguments: [window.start.timeIntervalSince1970, window.deleted])
    }
}

extension NotesStore {
    /// Judges the deletions set aside by the pulls (``applySyncedNotes(_:cursor:)``), together:
    /// unless they make a mass deletion — with those applied within the window, of the notes
    /// there were — or the user allows them, the notes are removed here. A note changed here
    /// since is no longer held: its change goes to the server, where an edit outlives the
    /// deletion.
    /// - Parameter allow: the user confirmed them (`tresor sync now --allow-deletions`): they are
    ///   removed, and a new window starts now.
    /// - Returns: what was removed and what waits.
    /// - Throws: database errors.
    @discardableResult
    public func settleNoteDeletions(allow: Bool) throws -> NoteDeletionsSettled {
        guard try noteDeletionsHeld() > 0 else { return NoteDeletionsSettled(applied: 0, held: 0) }
        let now = self.now
        var settled = NoteDeletionsSettled(applied: 0, held: 0)
        let effects = try applying { db, effects in
            var rows: [(serverID: String, row: NoteRow)] = []
            for serverID in try String.fetchAll(db, sql: "SELECT server_id FROM sync_note_deletions_held ORDER BY server_id") {
                guard let localID = try String.fetchOne(db, sql: "SELECT local_id FROM sync_note_links WHERE server_id = ?", arguments: [serverID]),
                    try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_note_outbox WHERE note_id = ?", arguments: [localID]) != true,
                    let row = try Row.fetchOne(db, sql: "SELECT * FROM notes WHERE id = ?", arguments: [localID]).map(NoteRow.init(row:))
                else {
                    try NoteDeletionHoldTables.forget(serverID, db)
                    continue
                }
                rows.append((serverID, row))
            }
            guard !rows.isEmpty else { return }
            var window = try NoteDeletionHoldTables.window(db, now: now)
            let remaining = try Int.fetchOne(db, sql: "SELECT count(*) FROM notes WHERE account_id = ?", arguments: [AccountID.local.rawValue]) ?? 0
            guard allow || !window.isMassDeletion(adding: rows.count, remaining: remaining) else {
                settled.held = rows.count
                return
            }
            for (serverID, row) in rows {
                try NoteDeletionHoldTables.forget(serverID, db)
                try removeSyncedNote(row, db, &effects)
            }
            settled.applied = rows.count
            // The user confirmed these: the next 24 hours count from now.
            if allow {
                window = MassDeletionWindow(start: now)
            } else {
                window.deleted += rows.count
            }
            try NoteDeletionHoldTables.record(window, db)
        }
        finish(effects)
        return settled
    }

    /// How many notes deleted for good elsewhere wait here for the user
    /// (``settleNoteDeletions(allow:)``).
    public func noteDeletionsHeld() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_note_deletions_held") ?? 0 }
    }
}
