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
            let summaries = try await summaries(notes, attachmentCounts: attachments.mapValues(\.count), connection)
            var read: [String: SyncedNoteRead] = [:]
            for (note, summary) in zip(notes, summaries) {
                read[note.id] = SyncedNoteRead(
                    summary: summary, body: note.isLocked ? nil : try openBody(note), attachments: attachments[note.id] ?? [])
            }
            return read
        }
    }
}
