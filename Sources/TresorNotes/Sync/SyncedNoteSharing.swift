import Foundation
import GRDB
import TresorNotesDomain

// Shared notes on a device (docs/SYNC.md, "Shared notes"): sharing is the web client's; a device
// keeps, for each synced note shared with or by the sync account, who shares it — sealed, as
// the notes' titles are — so its lists show it, a lock of it is refused here as the server
// refuses it, and an attachment is not added to a note another account owns.

/// Who shares a synced note, as the server told.
public struct SyncedNoteSharing: Sendable, Equatable, Codable {
    /// The owner's login name.
    public var owner: String
    /// The participants' login names.
    public var participants: [String]
    /// The sync account owns the note (shared by it); false: shared with it.
    public var isOwner: Bool

    public init(owner: String, participants: [String], isOwner: Bool) {
        self.owner = owner
        self.participants = participants
        self.isOwner = isOwner
    }
}

/// The rows of the notes shared with or by the sync account (their table: `Schema/NotesSyncSchema.swift`).
enum SharingSyncTables {
    /// Records `sharing` of local note `localID` (none: removes it).
    static func record(_ sharing: SyncedNoteSharing?, localID: String, _ db: Database, _ sealing: ContentSealing) throws {
        guard let sharing else {
            try db.cachedStatement(sql: "DELETE FROM sync_note_sharing WHERE local_id = ?").execute(arguments: [localID])
            return
        }
        let text = String(decoding: try JSONEncoder().encode(sharing), as: UTF8.self)
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_note_sharing (local_id, is_owner, sealed_sharing) VALUES (?, ?, ?)").execute(
            arguments: [localID, sharing.isOwner, try sealing.sealText(text, table: "sync_note_sharing", id: localID, column: "sharing")])
    }

    /// Who shares each of `ids` that is shared.
    static func sharing(of ids: [String], _ db: Database, _ sealing: ContentSealing) throws -> [String: SyncedNoteSharing] {
        guard !ids.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ",")
        var found: [String: SyncedNoteSharing] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT local_id, sealed_sharing FROM sync_note_sharing WHERE local_id IN (\(marks))", arguments: StatementArguments(ids))
        {
            let id: String = row["local_id"]
            let text = try sealing.openText(row["sealed_sharing"], table: "sync_note_sharing", id: id, column: "sharing")
            found[id] = try JSONDecoder().decode(SyncedNoteSharing.self, from: Data(text.utf8))
        }
        return found
    }

    /// Whether local note `id` is shared with or by the sync account.
    static func isShared(_ id: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_note_sharing WHERE local_id = ?", arguments: [id]) == true
    }

    /// Whether local note `id` is another account's, shared with the sync account.
    static func isSharedWith(_ id: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sync_note_sharing WHERE local_id = ? AND NOT is_owner"), arguments: [id]) == true
    }
}
