import Foundation
import GRDB
import TresorNotesDomain

// The note list's previews (docs/WEB.md, "Shapes"): the first line of text after the title,
// as a person reads it (no markup). Made when the list is read, never stored: a stored preview
// would be one more copy of the text to remove when a note is locked. Locked notes have none.
extension NotesStore {

    /// The preview of each unlocked note of `ids` (locked notes and notes without more text
    /// than their title are left out).
    /// - Parameters:
    ///   - ids: the notes.
    ///   - query: a search's words, to preview the line each note matches on; none otherwise.
    /// - Returns: note id → preview.
    /// - Throws: `contentUnavailable` before the first unlock, `damaged`.
    public func previews(ofNotes ids: [String], matching query: [String] = []) throws -> [String: String] {
        let sealing = try sealing()
        return try pool.read { db in
            var previews: [String: String] = [:]
            var start = ids.startIndex
            while start < ids.endIndex {
                let batch = Array(ids[start..<min(start + NoteSummaryReader.batchSize, ids.endIndex)])
                let rows = try Row.fetchAll(db, sql: Self.previewsQuery(count: batch.count), arguments: StatementArguments(batch))
                for row in rows.map(NoteRow.init(row:)) {
                    let layer = try sealing.noteLayer(row)
                    let body = try layer.openText(row.sealedBody ?? Data(), table: "notes", id: row.id, column: "body")
                    let title = try layer.openText(row.sealedTitle, table: "notes", id: row.id, column: "title")
                    if let preview = NoteRules.preview(body: body, title: title, matching: query) { previews[row.id] = preview }
                }
                start += batch.count
            }
            return previews
        }
    }

    /// The unlocked notes among `count` ids. `+passphrase_id` keeps SQLite from reading the
    /// whole `notes_passphrase` index for "IS NULL" (every unlocked note is in it) instead of
    /// looking the ids up by primary key.
    static func previewsQuery(count: Int) -> String {
        "SELECT * FROM notes WHERE +passphrase_id IS NULL AND id IN (\(databaseQuestionMarks(count: count)))"
    }
}
