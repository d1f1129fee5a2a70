import Foundation
import GRDB
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// Recently Deleted (docs/FORMAT.md): deleting moves a note there for 30 days with its
/// attachments (locked or not); it is restored or deleted for good, and deleted for good it
/// leaves no plaintext in any file of the home.
@Suite("Recently Deleted")
struct RecentlyDeletedTests {
    @Test func aDeletedNoteLeavesTheListsAndComesBackWhole() throws {
        let home = try NotesHome()
        let body = unique("BODY")
        let note = try home.notes.createNote(NoteDraft(title: "Keep", body: body, folder: "Work"))
        try home.notes.addAttachment(to: note.id, kind: .image, name: "plan.png", data: Data("png".utf8))
        let deleted = try home.notes.moveToRecentlyDeleted(note.id)
        #expect(deleted.deleted == home.clock.now)
        #expect(try home.notes.notes().isEmpty)
        #expect(try home.notes.search(body).isEmpty)
        #expect(try home.notes.folders().first?.noteCount == 0)
        #expect(try home.notes.widget(account: .local).noteCount == 0)
        #expect(try home.notes.recentlyDeleted().map(\.id) == [note.id])
        // Nothing changes it while it is there.
        #expect(throws: NotesError.self) { try home.notes.editNote(note.id, NoteChanges(body: "x")) }
        #expect(throws: NotesError.self) { try home.notes.access(toNote: note.id, for: .local) }
        #expect(try home.notes.access(toNote: note.id, for: .local, includingDeleted: true) == .owner)

        let restored = try home.notes.restoreNote(note.id)
        #expect(restored.deleted == nil && restored.folder == "Work" && restored.attachmentCount == 1)
        #expect(try home.notes.openNote(note.id).body == body)
        #expect(try home.notes.search(body).map(\.id) == [note.id])
        #expect(try home.notes.recentlyDeleted().isEmpty)
    }

    @Test func aLockedNoteStaysLockedThroughDeleteAndRestore() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("pp"))
        let note = try home.notes.createNote(NoteDraft(title: "Secret", body: "s3cret"))
        try home.notes.addAttachment(to: note.id, kind: .image, name: "i.png", data: Data("img".utf8))
        try home.notes.lockNote(note.id)
        try home.notes.moveToRecentlyDeleted(note.id)
        #expect(try home.notes.recentlyDeleted().first?.isLocked == true)
        try home.notes.restoreNote(note.id)
        home.notes.lockNow()
        #expect(throws: NotesError.self) { try home.notes.openNote(note.id) }
        #expect(try home.notes.openNote(note.id, passphrase: passphrase("pp")).body == "s3cret")
    }

    @Test func aSharedNoteInRecentlyDeletedIsHiddenFromItsParticipants() throws {
        let home = try NotesHome()
        let ann = try home.notes.registerAccount(name: "ann", password: AccountPassword("password a"))
        let bob = try home.notes.registerAccount(name: "bob", password: AccountPassword("password b"))
        let note = try home.notes.createNote(NoteDraft(title: "Shared", body: "b"), account: ann.id)
        try home.notes.share(note: note.id, with: "bob", by: ann.id)
        try home.notes.moveToRecentlyDeleted(note.id)
        #expect(try home.notes.notesShared(with: bob.id).isEmpty)
        #expect(throws: NotesError.notFound("note \(note.id)")) { try home.notes.access(toNote: note.id, for: bob.id, includingDeleted: true) }
        #expect(try home.notes.recentlyDeleted(account: bob.id).isEmpty)
        try home.notes.restoreNote(note.id)
        #expect(try home.notes.notesShared(with: bob.id).map(\.id) == [note.id], "restored with its participants")
    }

    @Test func notesAreDeletedForGoodAfterThirtyDays() throws {
        let home = try NotesHome()
        let old = try home.notes.createNote(NoteDraft(title: "Old", body: "o"))
        try home.notes.moveToRecentlyDeleted(old.id)
        home.clock.advance(by: 29 * 86_400)
        let young = try home.notes.createNote(NoteDraft(title: "Young", body: "y"))
        try home.notes.moveToRecentlyDeleted(young.id)
        #expect(try home.notes.deleteExpiredNotes() == 0)
        home.clock.advance(by: 86_400)
        #expect(try home.notes.deleteExpiredNotes() == 1)
        #expect(try home.notes.recentlyDeleted().map(\.id) == [young.id])
        #expect(throws: NotesError.notFound("note \(old.id)")) { try home.notes.summary(ofNote: old.id) }
    }

    /// The daemon's minute of expiry and the user's "Empty" can run at once: neither fails
    /// on a note the other took first, and together they delete each note once.
    @Test func expiryAndEmptyingAtOnceNeitherFails() async throws {
        let home = try NotesHome()
        let notes = try (0..<40).map { try home.notes.createNote(NoteDraft(title: "Old \($0)", body: "o")) }
        for note in notes { try home.notes.moveToRecentlyDeleted(note.id) }
        home.clock.advance(by: 31 * 86_400)
        let store = home.notes
        for _ in 0..<5 {
            let more = try (0..<8).map { try store.createNote(NoteDraft(title: "More \($0)", body: "m")) }
            for note in more { try store.moveToRecentlyDeleted(note.id) }
            home.clock.advance(by: 31 * 86_400)
        }
        async let expired = Task.detached { try store.deleteExpiredNotes() }.value
        async let emptied = Task.detached { try store.emptyRecentlyDeleted() }.value
        let total = try await expired + emptied
        #expect(total == 80)
        #expect(try store.recentlyDeleted().isEmpty)
    }

    @Test func aFolderDeletedWhileItsNoteIsInRecentlyDeletedGivesItBackWithoutAFolder() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "N", body: "b", folder: "Gone"))
        try home.notes.moveToRecentlyDeleted(note.id)
        try home.notes.deleteFolder(named: "Gone")
        #expect(try home.notes.restoreNote(note.id).folder == nil)
    }

    /// The at-rest guarantee extends to Recently Deleted: emptied, a note — unlocked or locked,
    /// with attachments — leaves no marker and none of its sealed bytes in any file of the
    /// home (database, -wal, -shm, attachments), and no search finds it.
    @Test func emptyingRecentlyDeletedLeavesNoPlaintextAnywhere() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("pp"))
        var markers: [String] = []
        var sealed: [Data] = []
        for locked in [false, true] {
            let body = unique("TRASHBODY"), image = unique("TRASHIMAGE"), title = unique("TRASHTITLE")
            markers += [body, image, title]
            let note = try home.notes.createNote(NoteDraft(title: title, body: body + String(repeating: " filler", count: 300)))
            try home.notes.addAttachment(
                to: note.id, kind: .image, name: unique("NAME"), data: Data((image + String(repeating: "x", count: 70_000)).utf8))
            _ = try home.notes.search(body)
            if locked { try home.notes.lockNote(note.id) }
            sealed += try home.notes.pool.read { db in
                let row = try NoteRow.fetch(note.id, db)
                let files = try String.fetchAll(db, sql: "SELECT file FROM attachments WHERE note_id = ?", arguments: [note.id])
                return [row.sealedTitle.suffix(48), (row.sealedBody ?? row.sealedCiphertext!).suffix(48)]
                    + (try files.map { try Data(contentsOf: home.paths.attachmentsFolder.appendingPathComponent($0)).suffix(48) })
            }
            try home.notes.moveToRecentlyDeleted(note.id)
        }
        #expect(try home.notes.emptyRecentlyDeleted() == 2)
        for marker in markers { #expect(home.files(containing: marker) == [], "\(marker)") }
        for bytes in sealed { #expect(home.files(containing: bytes) == []) }
        #expect(try home.notes.notes().isEmpty && home.notes.recentlyDeleted().isEmpty)
        #expect(try home.notes.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM attachments") } == 0)
    }
}
