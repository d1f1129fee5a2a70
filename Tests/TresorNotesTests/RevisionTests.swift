import Foundation
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// Revisions in the store (docs/FORMAT.md, "Revisions and merges"): a save names the revision
/// it was made from; a late one is merged, or kept whole as a conflict copy — never a silent
/// overwrite — for unlocked, shared and locked notes.
@Suite("Revisions and merges")
struct RevisionTests {
    @Test func everyChangeCountsTheRevisionUp() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "b"))
        #expect(note.revision == 1)
        let pinned = try home.notes.editNote(note.id, NoteChanges(isPinned: true))
        #expect(pinned.revision > note.revision)
        let edited = try home.notes.editNote(note.id, NoteChanges(body: "c"))
        #expect(edited.revision > pinned.revision)
        // Reading does not count.
        _ = try home.notes.openNote(note.id)
        #expect(try home.notes.summary(ofNote: note.id).revision == edited.revision)
    }

    @Test func aSaveFromTheCurrentRevisionIsSavedAsItIs() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "one"))
        let outcome = try home.notes.saveNote(note.id, NoteChanges(body: "two", base: NoteBase(revision: note.revision, body: "one")))
        #expect(outcome.kind == .saved)
        #expect(try home.notes.openNote(note.id).body == "two")
    }

    @Test func aLateSaveOfOtherLinesIsMerged() throws {
        let home = try NotesHome()
        let base = "milk\nbread\neggs"
        let note = try home.notes.createNote(NoteDraft(title: "Groceries", body: base))
        // Two editors opened revision 1; the first saves the first line…
        try home.notes.saveNote(note.id, NoteChanges(body: "oat milk\nbread\neggs", base: NoteBase(revision: note.revision, body: base)))
        // …the second, late, the last line.
        let late = try home.notes.saveNote(
            note.id,
            NoteChanges(
                title: "Shopping", body: "milk\nbread\neggs\ncheese", base: NoteBase(revision: note.revision, title: "Groceries", body: base)))
        #expect(late.kind == .merged)
        #expect(late.mergedBody == "oat milk\nbread\neggs\ncheese")
        let opened = try home.notes.openNote(note.id)
        #expect(opened.body == "oat milk\nbread\neggs\ncheese")
        #expect(opened.summary.title == "Shopping")
        #expect(try home.notes.notes().count == 1, "no conflict copy")
    }

    @Test func aLateSaveOfTheSameLinesBecomesAConflictCopy() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "Plan", body: "meet at 10"))
        try home.notes.saveNote(note.id, NoteChanges(body: "meet at 11", base: NoteBase(revision: note.revision, body: "meet at 10")))
        let late = try home.notes.saveNote(note.id, NoteChanges(body: "meet at 9", base: NoteBase(revision: note.revision, body: "meet at 10")))
        #expect(late.kind == .conflictCopy)
        // The note keeps the version saved first; the late one is whole in the copy.
        #expect(try home.notes.openNote(note.id).body == "meet at 11")
        let copy = try #require(late.conflictCopy)
        #expect(copy.title == "Plan (conflict copy)")
        #expect(try home.notes.openNote(copy.id).body == "meet at 9")
        #expect(try home.notes.search("9").map(\.id) == [copy.id])
    }

    @Test func aLateSaveWithoutItsBaseTextIsAConflictCopyNotAnOverwrite() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "v1"))
        try home.notes.editNote(note.id, NoteChanges(body: "v2"))
        let late = try home.notes.saveNote(note.id, NoteChanges(body: "v3", base: NoteBase(revision: note.revision)))
        #expect(late.kind == .conflictCopy)
        #expect(try home.notes.openNote(note.id).body == "v2")
        #expect(try home.notes.openNote(late.conflictCopy!.id).body == "v3")
    }

    @Test func aSharedNotesConflictCopyIsSharedWithTheSameParticipantsAndNamesTheEditor() throws {
        let home = try NotesHome()
        let alice = try home.notes.registerAccount(name: "alice", password: try AccountPassword("alice password"))
        let bob = try home.notes.registerAccount(name: "bob", password: try AccountPassword("bob password"))
        let note = try home.notes.createNote(NoteDraft(title: "Trip", body: "day 1: museum"), account: alice.id)
        try home.notes.share(note: note.id, with: "bob", by: alice.id)
        let shared = try home.notes.summary(ofNote: note.id)
        try home.notes.saveNote(
            note.id, NoteChanges(body: "day 1: beach", base: NoteBase(revision: shared.revision, body: "day 1: museum")), by: alice.id)
        let late = try home.notes.saveNote(
            note.id, NoteChanges(body: "day 1: zoo", base: NoteBase(revision: shared.revision, body: "day 1: museum")), by: bob.id)
        let copy = try #require(late.conflictCopy)
        #expect(copy.title == "Trip (conflict copy from bob)")
        #expect(copy.sharing == ShareInfo(owner: "alice", participants: ["bob"]))
        #expect(try home.notes.notesShared(with: bob.id).map(\.id).contains(copy.id))
        #expect(try home.notes.openNote(copy.id).body == "day 1: zoo")
        #expect(try home.notes.openNote(note.id).body == "day 1: beach")
    }

    @Test func aLockedNoteEditedInTheCLIMergesWithTheKeyInMemory() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("pp"))
        let note = try home.notes.createNote(NoteDraft(title: "Codes", body: "door 1\nsafe 2"))
        try home.notes.lockNote(note.id)
        let locked = try home.notes.summary(ofNote: note.id)
        try home.notes.saveNote(note.id, NoteChanges(body: "door 11\nsafe 2", base: NoteBase(revision: locked.revision, body: "door 1\nsafe 2")))
        let merged = try home.notes.saveNote(
            note.id, NoteChanges(body: "door 1\nsafe 22", base: NoteBase(revision: locked.revision, body: "door 1\nsafe 2")))
        #expect(merged.kind == .merged)
        #expect(try home.notes.openNote(note.id).body == "door 11\nsafe 22")
        // Overlapping: the copy is locked too, under the same passphrase, and opens.
        let now = try home.notes.summary(ofNote: note.id)
        try home.notes.saveNote(note.id, NoteChanges(body: "A", base: NoteBase(revision: now.revision, body: "door 11\nsafe 22")))
        let copy = try #require(
            try home.notes.saveNote(note.id, NoteChanges(body: "B", base: NoteBase(revision: now.revision, body: "door 11\nsafe 22"))).conflictCopy)
        #expect(copy.isLocked)
        home.notes.lockNow()
        #expect(try home.notes.openNote(copy.id, passphrase: passphrase("pp")).body == "B")
        #expect(try home.notes.openNote(note.id).body == "A")
    }

    @Test func aBrowsersLockedSaveFromAnOlderRevisionIsRefusedAndCanBecomeACopy() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("pp"))
        let note = try home.notes.createNote(NoteDraft(title: "Sealed", body: "x"))
        try home.notes.lockNote(note.id)
        let key = try home.notes.noteKey(of: home.notes.pool.read { db in try NoteRow.fetch(note.id, db) }, passphrase: nil, home.notes.sealing())
        let proof = LockedNoteCrypto.noteProof(key)
        let first = try LockedNoteCrypto.sealBody(Data("first".utf8), with: key)
        let revision = try home.notes.summary(ofNote: note.id).revision
        let saved = try home.notes.replaceLockedBody(
            ofNote: note.id, iv: first.iv, tag: first.tag, ciphertext: first.ciphertext, noteProof: proof, passphraseProof: nil,
            baseRevision: revision)
        #expect(saved.revision > revision)
        let second = try LockedNoteCrypto.sealBody(Data("second".utf8), with: key)
        #expect(throws: NotesError.staleRevision(current: saved.revision)) {
            try home.notes.replaceLockedBody(
                ofNote: note.id, iv: second.iv, tag: second.tag, ciphertext: second.ciphertext, noteProof: proof, passphraseProof: nil,
                baseRevision: revision)
        }
        let copy = try home.notes.saveLockedConflictCopy(
            ofNote: note.id, iv: second.iv, tag: second.tag, ciphertext: second.ciphertext, noteProof: proof, passphraseProof: nil, by: nil)
        #expect(copy.isLocked && copy.title == "Sealed (conflict copy)")
        #expect(try home.notes.openNote(copy.id).body == "second")
        #expect(try home.notes.openNote(note.id).body == "first")
        // A wrong note proof saves no copy.
        #expect(throws: NotesError.self) {
            try home.notes.saveLockedConflictCopy(
                ofNote: note.id, iv: second.iv, tag: second.tag, ciphertext: second.ciphertext, noteProof: Data(count: 32), passphraseProof: nil,
                by: nil)
        }
        #expect(try home.notes.notes().count == 2)
    }
}
