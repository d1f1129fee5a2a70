import Foundation
import PostgresNIO
import TresorNotesDomain

// A page of notes for the devices' sync (docs/SYNC.md, "Notes") in one read: the rows, their
// attachments and what their summaries need, a query each for the whole page.
extension PostgresWebStore: SyncedNotesReader {
    func syncedNotes(_ ids: [String]) async throws -> [String: SyncedNoteRead] {
        guard !ids.isEmpty else { return [:] }
        return try await db.read { [self, logger] connection in
            var notes: [StoredNote] = []
            for try await row in try await connection.query("SELECT * FROM notes WHERE id = ANY(\(ids))", logger: logger) {
                notes.append(try StoredNote(row, full: true))
            }
            let attachments = try await attachmentInfos(ofNotes: notes.map(\.id), connection)
            var sealed: [String: Set<String>] = [:]
            for (noteID, attachmentID) in try await connection.rows(
                "SELECT note_id, id FROM attachments WHERE note_id = ANY(\(ids)) AND is_locked", logger, as: (String, String).self)
            {
                sealed[noteID, default: []].insert(attachmentID)
            }
            let summaries = try await summaries(notes, attachmentCounts: attachments.mapValues(\.count), connection)
            var read: [String: SyncedNoteRead] = [:]
            for (note, summary) in zip(notes, summaries) {
                read[note.id] = SyncedNoteRead(
                    summary: summary, body: note.isLocked ? nil : try openBody(note), attachments: attachments[note.id] ?? [],
                    sealedAttachmentIDs: sealed[note.id] ?? [])
            }
            return read
        }
    }
}
