import Foundation
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// The notes outbox of sync (docs/SYNC.md, "Notes"): every change of a local note is recorded
/// in its own transaction, what the server sends is applied without being recorded, and a note
/// whose change still waits is left for that change.
@Suite("Notes sync outbox")
struct NoteSyncOutboxTests {
    static let account = "https://notes.example.com ada"

    static func state(_ id: String, revision: Int64, title: String, body: String, deleted: Date? = nil) -> SyncedNoteState {
        SyncedNoteState(
            serverID: id, revision: revision, content: NoteSyncContent(title: title, body: body, folder: "Home", isPinned: true),
            created: Date(timeIntervalSince1970: 1_700_000_000), modified: Date(timeIntervalSince1970: 1_700_000_100), deleted: deleted)
    }

    @Test func everyLocalChangeIsRecordedAndWhatTheServerSendsIsNot() throws {
        let home = try NotesHome()
        let notes = home.notes
        #expect(try notes.noteSyncCursor(account: Self.account) == 0)
        let note = try notes.createNote(NoteDraft(title: "Plans", body: "Plans\nsail"))
        #expect(try notes.noteChangesWaiting() == 1)
        var pending = try notes.pendingNoteSyncs(after: nil, limit: 10)
        #expect(pending.map(\.localID) == [note.id] && pending[0].serverID == nil && pending[0].base == nil)
        #expect(pending[0].current == NoteSyncContent(title: "Plans", body: "Plans\nsail", folder: nil, isPinned: false))

        // The server's answer: linked, applied, out of the outbox.
        try notes.recordNoteSynced(pending[0], result: Self.state("server-1", revision: 3, title: "Plans", body: "Plans\nsail\nmerged"))
        #expect(try notes.noteChangesWaiting() == 0)
        #expect(try notes.openNote(note.id).body == "Plans\nsail\nmerged")
        #expect(try notes.summary(ofNote: note.id).folder == "Home")

        // A note from the server: applied under the server's id, not recorded, cursor kept.
        let applied = try notes.applySyncedNotes([("server-2", Self.state("server-2", revision: 1, title: "Web", body: "Web\nnote"))], cursor: 7)
        #expect(applied == 1)
        #expect(try notes.openNote("server-2").body == "Web\nnote")
        #expect(try notes.noteChangesWaiting() == 0)
        #expect(try notes.noteSyncCursor(account: Self.account) == 7)
        // The same version again changes nothing.
        #expect(try notes.applySyncedNotes([("server-2", Self.state("server-2", revision: 1, title: "Web", body: "Web\nnote"))], cursor: 8) == 0)

        // An edit here waits, with the base it was made from; a newer server version of that
        // note is left for it.
        try notes.editNote("server-2", NoteChanges(body: "Web\nnote\nlocal"))
        pending = try notes.pendingNoteSyncs(after: nil, limit: 10)
        #expect(pending.map(\.serverID) == ["server-2"])
        #expect(pending[0].base?.revision == 1 && pending[0].base?.content.body == "Web\nnote")
        #expect(try notes.applySyncedNotes([("server-2", Self.state("server-2", revision: 2, title: "Web", body: "Web\nother"))], cursor: 9) == 0)
        #expect(try notes.openNote("server-2").body == "Web\nnote\nlocal")

        // Edited again while its change travelled: the newer change stays waiting.
        try notes.editNote("server-2", NoteChanges(body: "Web\nnote\nlocal\nagain"))
        try notes.recordNoteSynced(pending[0], result: Self.state("server-2", revision: 3, title: "Web", body: "Web\nother\nlocal"))
        #expect(try notes.noteChangesWaiting() == 1)
        #expect(try notes.openNote("server-2").body == "Web\nnote\nlocal\nagain")
        #expect(try notes.pendingNoteSyncs(after: nil, limit: 10).first?.base?.revision == 1, "made from the same base")

        // Deleted for good on the server: gone here once the sync judged its deletions (no mass
        // deletion), unless a change of it waits.
        #expect(try notes.applySyncedNotes([(serverID: "server-1", state: nil)], cursor: 10) == 0)
        #expect(try notes.settleNoteDeletions(allow: false) == NoteDeletionsSettled(applied: 1, held: 0))
        #expect(throws: NotesError.self) { try notes.summary(ofNote: note.id) }
        #expect(try notes.noteChangesWaiting() == 1, "a deletion from the server is not sent back")
    }

    @Test func anotherAccountStartsAfreshAndWebAccountsNotesAreNotRecorded() throws {
        let home = try NotesHome()
        let notes = home.notes
        _ = try notes.noteSyncCursor(account: Self.account)
        // A web account of this home's web side is not the local account: its notes stay.
        let web = try notes.registerAccount(name: "bob", password: try AccountPassword("correct horse battery"))
        _ = try notes.createNote(NoteDraft(title: "Bob's", body: "Bob's"), account: web.id)
        #expect(try notes.noteChangesWaiting() == 0)
        let note = try notes.createNote(NoteDraft(title: "Mine", body: "Mine"))
        let pending = try notes.pendingNoteSyncs(after: nil, limit: 10)
        try notes.recordNoteSynced(pending[0], result: Self.state("server-1", revision: 1, title: "Mine", body: "Mine"))
        _ = try notes.applySyncedNotes([], cursor: 5)
        #expect(try notes.pendingNoteSyncs(after: nil, limit: 10).isEmpty)

        // Another account: nothing linked any more, every local note goes as new.
        #expect(try notes.noteSyncCursor(account: "https://other.example.com ada") == 0)
        let again = try notes.pendingNoteSyncs(after: nil, limit: 10)
        #expect(again.map(\.localID) == [note.id] && again[0].serverID == nil)
    }
}
