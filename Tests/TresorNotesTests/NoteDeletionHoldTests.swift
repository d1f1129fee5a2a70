import Foundation
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// The mass-deletion hold for notes (docs/SYNC.md, "Notes"): notes deleted for good on another
/// device that add up to a mass deletion stay here until the user allows it.
@Suite("Notes' mass-deletion hold")
struct NoteDeletionHoldTests {
    /// A home whose local account holds `count` synced notes, `server-0`…, applied from the server.
    static func synced(_ count: Int) throws -> NotesHome {
        let home = try NotesHome()
        _ = try home.notes.noteSyncCursor(account: NoteSyncOutboxTests.account)
        let states = (0..<count).map {
            ("server-\($0)", NoteSyncOutboxTests.state("server-\($0)", revision: 1, title: "Note \($0)", body: "Note \($0)"))
        }
        #expect(try home.notes.applySyncedNotes(states, cursor: 1) == count)
        return home
    }

    static func deleted(_ range: Range<Int>) -> [(serverID: String, state: SyncedNoteState?)] {
        range.map { (serverID: "server-\($0)", state: nil) }
    }

    static func remaining(_ notes: NotesStore) throws -> Int { try notes.notes().count }

    @Test func aMassDeletionOfNotesWaitsForTheUser() throws {
        let home = try Self.synced(40)
        let notes = home.notes
        // 11 of 40 is more than a quarter: applied nowhere, however often the sync runs.
        #expect(try notes.applySyncedNotes(Self.deleted(0..<11), cursor: 2) == 0)
        #expect(try notes.settleNoteDeletions(allow: false) == NoteDeletionsSettled(applied: 0, held: 11))
        #expect(try notes.settleNoteDeletions(allow: false) == NoteDeletionsSettled(applied: 0, held: 11))
        #expect(try Self.remaining(notes) == 40)
        #expect(try notes.openNote("server-3").body == "Note 3")
        #expect(try notes.noteDeletionsHeld() == 11)
        // A further deletion, however small, waits with them: one list to confirm.
        _ = try notes.applySyncedNotes(Self.deleted(11..<12), cursor: 3)
        #expect(try notes.settleNoteDeletions(allow: false) == NoteDeletionsSettled(applied: 0, held: 12))
        // A day later they still wait: a new window changes nothing of a mass deletion.
        home.clock.advance(by: 25 * 3600)
        #expect(try notes.settleNoteDeletions(allow: false).held == 12)

        // The user allows them: gone here, and the next 24 hours count from now.
        #expect(try notes.settleNoteDeletions(allow: true) == NoteDeletionsSettled(applied: 12, held: 0))
        #expect(try Self.remaining(notes) == 28)
        #expect(try notes.noteDeletionsHeld() == 0)
        #expect(throws: NotesError.self) { try notes.summary(ofNote: "server-3") }
        #expect(try notes.noteChangesWaiting() == 0, "a deletion from the server is not sent back")
        _ = try notes.applySyncedNotes(Self.deleted(12..<14), cursor: 4)
        #expect(try notes.settleNoteDeletions(allow: false) == NoteDeletionsSettled(applied: 2, held: 0))
    }

    @Test func deletionsSpreadOverSeveralSyncsAddUp() throws {
        let home = try Self.synced(100)
        let notes = home.notes
        // 20 of 100: applied.
        _ = try notes.applySyncedNotes(Self.deleted(0..<20), cursor: 2)
        #expect(try notes.settleNoteDeletions(allow: false) == NoteDeletionsSettled(applied: 20, held: 0))
        // 10 more within the day make 30 of the 100 there were: held.
        home.clock.advance(by: 3600)
        _ = try notes.applySyncedNotes(Self.deleted(20..<30), cursor: 3)
        #expect(try notes.settleNoteDeletions(allow: false) == NoteDeletionsSettled(applied: 0, held: 10))
        #expect(try Self.remaining(notes) == 80)
    }

    @Test func deletionsSpanningPagesAreJudgedTogether() throws {
        let home = try Self.synced(100)
        let notes = home.notes
        // 60 in two pages of 30: neither alone passes 50, together they wait whole.
        _ = try notes.applySyncedNotes(Self.deleted(0..<30), cursor: 2)
        _ = try notes.applySyncedNotes(Self.deleted(30..<60), cursor: 3)
        #expect(try notes.settleNoteDeletions(allow: false) == NoteDeletionsSettled(applied: 0, held: 60))
        #expect(try Self.remaining(notes) == 100)
    }

    @Test func aHeldNoteChangedHereIsNoLongerHeldAndItsChangeGoes() throws {
        let home = try Self.synced(40)
        let notes = home.notes
        _ = try notes.applySyncedNotes(Self.deleted(0..<11), cursor: 2)
        #expect(try notes.settleNoteDeletions(allow: false).held == 11)
        try notes.editNote("server-0", NoteChanges(body: "Note 0\nstill needed"))
        #expect(try notes.settleNoteDeletions(allow: true) == NoteDeletionsSettled(applied: 10, held: 0))
        #expect(try notes.openNote("server-0").body == "Note 0\nstill needed")
        // It goes to the server, where an edit outlives the deletion.
        #expect(try notes.pendingNoteSyncs(after: nil, limit: 10).map(\.serverID) == ["server-0"])
    }

    @Test func aNoteThatArrivesAgainIsNoLongerHeld() throws {
        let home = try Self.synced(40)
        let notes = home.notes
        _ = try notes.applySyncedNotes(Self.deleted(0..<11), cursor: 2)
        _ = try notes.applySyncedNotes(
            [("server-0", NoteSyncOutboxTests.state("server-0", revision: 2, title: "Note 0", body: "Note 0\nback"))], cursor: 3)
        #expect(try notes.noteDeletionsHeld() == 10)
        #expect(try notes.openNote("server-0").body == "Note 0\nback")
    }

    @Test func anotherSyncAccountForgetsTheHeldDeletions() throws {
        let home = try Self.synced(40)
        let notes = home.notes
        _ = try notes.applySyncedNotes(Self.deleted(0..<11), cursor: 2)
        #expect(try notes.noteDeletionsHeld() == 11)
        _ = try notes.noteSyncCursor(account: "https://other.example.com ada")
        #expect(try notes.noteDeletionsHeld() == 0)
        #expect(try Self.remaining(notes) == 40)
    }
}
