import Foundation
import Synchronization
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// The daemon's background sync hears of every local change of a note — also of a note whose
/// change already waits — and of nothing a pull applies or a web account writes (docs/SYNC.md,
/// "Background sync").
@Suite("Notes sync outbox observation")
struct NoteSyncOutboxObservationTests {
    @Test func everyLocalChangeIsToldAndWhatAPullAppliesIsNot() throws {
        let home = try NotesHome()
        let notes = home.notes
        _ = try notes.noteSyncCursor(account: NoteSyncOutboxTests.account)
        let told = Mutex(0)
        let observation = notes.observeSyncOutbox { told.withLock { $0 += 1 } }

        let note = try notes.createNote(NoteDraft(title: "Plans", body: "Plans\nsail"))
        #expect(told.withLock { $0 } == 1)
        // Waiting already: a second change is told too (it may have come while the first travelled).
        try notes.editNote(note.id, NoteChanges(body: "Plans\nsail\nagain"))
        #expect(told.withLock { $0 } == 2)
        #expect(try notes.noteChangesWaiting() == 1)

        // Taking the server's answer, and applying a pull: nothing told.
        let pending = try notes.pendingNoteSyncs(after: nil, limit: 10)
        try notes.recordNoteSynced(
            pending[0], result: NoteSyncOutboxTests.state("server-1", revision: 2, title: "Plans", body: "Plans\nsail\nagain"))
        _ = try notes.applySyncedNotes(
            [("server-2", NoteSyncOutboxTests.state("server-2", revision: 1, title: "Web", body: "Web\nnote"))], cursor: 3)
        #expect(told.withLock { $0 } == 2)
        // A web account's note is not the local account's: nothing told.
        let web = try notes.registerAccount(name: "bob", password: try AccountPassword("correct horse battery"))
        _ = try notes.createNote(NoteDraft(title: "Bob's", body: "Bob's"), account: web.id)
        #expect(told.withLock { $0 } == 2)

        // A local deletion is a change; after the observation ends, nothing is told.
        _ = try notes.moveToRecentlyDeleted("server-2")
        #expect(told.withLock { $0 } == 3)
        observation.cancel()
        _ = try notes.createNote(NoteDraft(title: "Later", body: "Later"))
        #expect(told.withLock { $0 } == 3)
    }
}
