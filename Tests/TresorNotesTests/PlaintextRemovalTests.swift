import Foundation
import GRDB
import Testing

@testable import TresorNotes

/// After locking (or deleting), no plaintext of the note remains in any file of the home —
/// database, -wal, -shm, attachment files, temporary files (docs/SECURITY.md §3.10).
@Suite("Plaintext removal")
struct PlaintextRemovalTests {
    /// 48-byte slices of a note's keybag-sealed body and of its attachment files.
    func sealedCopies(of noteID: String, _ home: NotesHome) throws -> [Data] {
        try home.notes.pool.read { db in
            let body = try Data.fetchOne(db, sql: "SELECT sealed_body FROM notes WHERE id = ?", arguments: [noteID])!
            let files = try String.fetchAll(db, sql: "SELECT file FROM attachments WHERE note_id = ?", arguments: [noteID])
            return [body.suffix(48)]
                + (try files.map { file in
                    try Data(contentsOf: home.paths.attachmentsFolder.appendingPathComponent(file)).suffix(48)
                })
        }
    }

    @Test func lockedAndDeletedNotesLeaveNoMarkerInAnyFile() throws {
        // No passcode: the keybag layer then needs only the device key, which is in the home,
        // so this also shows the scan looks at decryptable-at-rest data (see `rawContentIsSealed`).
        let home = try NotesHome()
        var markers: [String] = []
        var ids: [String] = []
        var sealedBeforeLocking: [Data] = []
        try home.notes.setPassphrase(passphrase("pp"))
        for index in 0..<5 {
            let title = unique("TITLE\(index)"), body = unique("BODY\(index)"), image = unique("IMAGE\(index)")
            markers += [body, image]
            let note = try home.notes.createNote(NoteDraft(title: title, body: body + "\n" + String(repeating: "filler ", count: 500)))
            try home.notes.addAttachment(
                to: note.id, kind: .image, name: unique("NAME\(index)"), data: Data((image + String(repeating: "x", count: 70_000)).utf8))
            _ = try home.notes.search(body)  // indexed in memory before locking
            sealedBeforeLocking += try sealedCopies(of: note.id, home)
            try home.notes.lockNote(note.id)
            ids.append(note.id)
        }
        let deletedBody = unique("DELETED")
        let deleted = try home.notes.createNote(NoteDraft(title: unique("DELTITLE"), body: deletedBody))
        try home.notes.addAttachment(to: deleted.id, kind: .pdf, name: "d.pdf", data: Data(deletedBody.utf8))
        sealedBeforeLocking += try sealedCopies(of: deleted.id, home)
        try home.notes.deleteNote(deleted.id)
        markers.append(deletedBody)

        for marker in markers { #expect(home.files(containing: marker) == [], "\(marker)") }
        // The keybag-layer ciphertext of the unlocked versions is gone too (secure_delete, a
        // truncating checkpoint, attachment files overwritten): with the device key it would
        // have opened.
        for sealed in sealedBeforeLocking { #expect(home.files(containing: sealed) == []) }
        // And not even the keybag-layer ciphertext of the removed versions: opening every
        // sealed value still in the database with the content key finds no marker either.
        let sealing = try home.notes.sealing()
        let blobs = try home.notes.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, sealed_title, sealed_body FROM notes").compactMap { row -> String? in
                let body: Data? = row["sealed_body"]
                return try body.map { try sealing.openText($0, table: "notes", id: row["id"], column: "body") }
            }
        }
        #expect(blobs.isEmpty)  // every remaining note is locked: no keybag-only body is left
        for marker in markers { #expect(try home.notes.search(marker).isEmpty) }
        for id in ids { #expect(try home.notes.openNote(id).body.contains("filler")) }
    }
}
