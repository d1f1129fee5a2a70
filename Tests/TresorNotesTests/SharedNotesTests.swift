import Foundation
import GRDB
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// Notes shared between accounts of one server (docs/FORMAT.md, "Web accounts and shared notes").
@Suite("Shared notes")
struct SharedNotesTests {
    @Test func anotherAccountSeesNothingUntilSharedThenReadsAndEdits() throws {
        let home = try NotesHome()
        let ann = try home.notes.registerAccount(name: "ann", password: AccountPassword("password a"))
        let bob = try home.notes.registerAccount(name: "bob", password: AccountPassword("password b"))
        let note = try home.notes.createNote(NoteDraft(title: "Trip", body: "bring maps"), account: ann.id)
        // Not shared: bob cannot tell it exists.
        #expect(throws: NotesError.notFound("note \(note.id)")) { try home.notes.access(toNote: note.id, for: bob.id) }
        #expect(throws: NotesError.notFound("note nope")) { try home.notes.access(toNote: "nope", for: bob.id) }
        #expect(try home.notes.access(toNote: note.id, for: ann.id) == .owner)
        #expect(try home.notes.notesShared(with: bob.id).isEmpty)

        try home.notes.share(note: note.id, with: "Bob", by: ann.id)
        #expect(try home.notes.access(toNote: note.id, for: bob.id) == .participant)
        let shared = try home.notes.notesShared(with: bob.id)
        #expect(shared.map(\.id) == [note.id])
        #expect(shared[0].sharing == ShareInfo(owner: "ann", participants: ["bob"]))
        // The participant edits; the owner reads the edit.
        _ = try home.notes.editNote(note.id, NoteChanges(body: "bring maps and tea"))
        #expect(try home.notes.openNote(note.id).body == "bring maps and tea")
        #expect(try home.notes.openNote(note.id).summary.title == "Trip")

        // A participant cannot share it on or remove others; they may leave.
        let cy = try home.notes.registerAccount(name: "cy", password: AccountPassword("password c"))
        #expect(throws: NotesError.self) { try home.notes.share(note: note.id, with: "cy", by: bob.id) }
        try home.notes.share(note: note.id, with: "cy", by: ann.id)
        #expect(throws: NotesError.forbidden("only the owner removes other participants")) {
            try home.notes.unshare(note: note.id, participant: "cy", by: bob.id)
        }
        try home.notes.unshare(note: note.id, participant: "bob", by: bob.id)
        #expect(throws: NotesError.self) { try home.notes.access(toNote: note.id, for: bob.id) }
        try home.notes.unshare(note: note.id, participant: "cy", by: ann.id)
        #expect(try home.notes.notesShared(with: cy.id).isEmpty)
        #expect(throws: NotesError.notFound("account \"nobody\"")) { try home.notes.share(note: note.id, with: "nobody", by: ann.id) }
    }

    @Test func lockedNotesCannotBeSharedAndSharedNotesCannotBeLocked() throws {
        let home = try NotesHome()
        let bob = try home.notes.registerAccount(name: "bob", password: AccountPassword("password b"))
        try home.notes.setPassphrase(passphrase("pp"))
        let locked = try home.notes.createNote(NoteDraft(title: "L", body: "secret"))
        try home.notes.lockNote(locked.id)
        #expect(throws: NotesError.wrongLockState("note \(locked.id) is locked: a locked note cannot be shared")) {
            try home.notes.share(note: locked.id, with: "bob", by: .local)
        }
        let shared = try home.notes.createNote(NoteDraft(title: "S", body: "open"))
        try home.notes.share(note: shared.id, with: "bob", by: .local)
        #expect(throws: NotesError.self) { try home.notes.lockNote(shared.id) }
        #expect(try home.notes.openNote(shared.id).body == "open")
        #expect(try home.notes.access(toNote: shared.id, for: bob.id) == .participant)
    }

    @Test func aSharedNotesContentIsSealedUnderItsOwnRecordKey() throws {
        let home = try NotesHome()
        _ = try home.notes.registerAccount(name: "bob", password: AccountPassword("password b"))
        let body = unique("SHARED-BODY")
        let note = try home.notes.createNote(NoteDraft(title: "T", body: body))
        try home.notes.share(note: note.id, with: "bob", by: .local)
        let row = try home.notes.pool.read { db in try NoteRow.fetch(note.id, db) }
        #expect(row.sealedRecordKey != nil)
        // The content key alone no longer opens the body: it needs the record key.
        let sealing = try home.notes.sealing()
        #expect(throws: NotesError.self) { try sealing.openText(row.sealedBody!, table: "notes", id: note.id, column: "body") }
        #expect(try sealing.noteLayer(row).openText(row.sealedBody!, table: "notes", id: note.id, column: "body") == body)
        #expect(home.files(containing: body).isEmpty)
        // Participants are stored in the clear (docs/FORMAT.md, "Web accounts and shared notes").
        let participants = try home.notes.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM participants")! }
        #expect(participants == 1)
        // Deleting the note removes its participants.
        try home.notes.deleteNote(note.id)
        #expect(try home.notes.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM participants")! } == 0)
    }
}
