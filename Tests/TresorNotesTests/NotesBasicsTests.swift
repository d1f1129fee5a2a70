import Foundation
import Testing
import TresorKeybag
import TresorNotesDomain

@testable import TresorNotes

@Suite("Notes: folders, notes, search, sealing at rest")
struct NotesBasicsTests {
    @Test func createListEditDeleteWithFoldersAndPins() throws {
        let home = try NotesHome()
        let notes = home.notes
        let groceries = try notes.createNote(NoteDraft(title: "Groceries", body: "milk\neggs", folder: "Home"))
        let plan = try notes.createNote(NoteDraft(title: "", body: "Plan for Monday\nsecond line"))
        #expect(plan.title == "Plan for Monday")
        #expect(groceries.folder == "Home")
        try notes.editNote(plan.id, NoteChanges(isPinned: true))
        home.clock.advance(by: 5)
        try notes.editNote(groceries.id, NoteChanges(body: "milk\neggs\nbread"))

        let listed = try notes.notes()
        #expect(listed.map(\.id) == [plan.id, groceries.id])  // pinned first
        #expect(try notes.openNote(groceries.id).body == "milk\neggs\nbread")
        #expect(try notes.notes(folder: "Home").map(\.id) == [groceries.id])
        #expect(try notes.folders().map(\.name) == ["Home"])
        #expect(throws: NotesError.self) { try notes.deleteFolder(named: "Home") }  // not empty

        try notes.editNote(groceries.id, NoteChanges(folder: .some(nil)))
        try notes.deleteFolder(named: "Home")
        try notes.deleteNote(groceries.id)
        #expect(try notes.notes().map(\.id) == [plan.id])
        #expect(throws: NotesError.notFound("note \(groceries.id)")) { try notes.openNote(groceries.id) }
    }

    @Test func badInputIsRefusedAndChangesNothing() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "Kept", body: "body"))
        #expect(throws: NotesError.self) {
            try home.notes.createNote(NoteDraft(title: "x", body: String(repeating: "a", count: NoteLimits.bodyBytes + 1)))
        }
        #expect(throws: NotesError.self) {
            try home.notes.createNote(NoteDraft(title: String(repeating: "t", count: NoteLimits.titleBytes + 1), body: ""))
        }
        #expect(throws: NotesError.self) { try home.notes.createNote(NoteDraft(title: "nul\0", body: "")) }
        #expect(throws: NotesError.self) { try home.notes.editNote(note.id, NoteChanges(title: "")) }
        #expect(throws: NotesError.self) { try home.notes.search("   ") }
        for name in ["../../etc/passwd", "a/b", ".", "..", "tab\there", "", "invoice\u{202E}fdp.exe", "line\u{2028}break"] {
            #expect(throws: NotesError.self) { try home.notes.addAttachment(to: note.id, kind: .file, name: name, data: Data([1])) }
        }
        #expect(try home.notes.notes().count == 1)
        #expect(try home.notes.openNote(note.id).body == "body")
        #expect(try home.notes.openNote(note.id).attachments.isEmpty)
    }

    /// What a person types stops at its limit: the last byte is taken, the next one refused with
    /// nothing changed. Counted in UTF-8 bytes, so "é" (two bytes) reaches each limit at half as
    /// many characters.
    @Test func folderNamesPassphrasesAndHintsStopAtTheirLimits() throws {
        let home = try NotesHome()
        let longestName = String(repeating: "é", count: NoteLimits.folderNameBytes / 2)
        #expect(try home.notes.createFolder(named: longestName).name == longestName)
        let folders = try home.notes.folders().map(\.name)
        #expect(throws: NotesError.invalid("the folder name is longer than \(NoteLimits.folderNameBytes) bytes")) {
            try home.notes.createFolder(named: "x" + longestName)
        }
        #expect(try home.notes.folders().map(\.name) == folders)

        let longestPassphrase = String(repeating: "é", count: Passphrase.maximumByteCount / 2)
        #expect(throws: NotesError.invalid("the passphrase is longer than \(Passphrase.maximumByteCount) bytes")) {
            try Passphrase("x" + longestPassphrase)
        }
        let longestHint = String(repeating: "é", count: NoteLimits.hintBytes / 2)
        #expect(throws: NotesError.invalid("the hint is longer than \(NoteLimits.hintBytes) bytes")) {
            try home.notes.setPassphrase(try Passphrase(longestPassphrase), hint: "x" + longestHint)
        }
        #expect(try home.notes.passphraseStatus().isSet == false, "a refused hint sets no passphrase")
        try home.notes.setPassphrase(try Passphrase(longestPassphrase), hint: longestHint)
        #expect(try home.notes.passphraseHint() == longestHint)
        #expect(throws: NotesError.self) { try home.notes.setPassphraseHint("x" + longestHint) }
        #expect(try home.notes.passphraseHint() == longestHint)
        home.notes.lockNow()
        let note = try home.notes.createNote(NoteDraft(title: "Behind the longest passphrase", body: "kept"))
        try home.notes.lockNote(note.id, passphrase: try Passphrase(longestPassphrase))
        home.notes.lockNow()
        #expect(try home.notes.openNote(note.id, passphrase: try Passphrase(longestPassphrase)).body == "kept")
    }

    @Test func searchFindsUnlockedBodiesAndLockedTitlesOnly() throws {
        let home = try NotesHome()
        let notes = home.notes
        let open = try notes.createNote(NoteDraft(title: "Recipes", body: "Crème brûlée needs vanilla"))
        let secret = try notes.createNote(NoteDraft(title: "Vault combination", body: "vanilla 12-34-56"))
        try notes.setPassphrase(passphrase("pass one"))
        try notes.lockNote(secret.id)

        #expect(try notes.search("creme").map(\.id) == [open.id])  // diacritics ignored
        #expect(try notes.search("vanilla").map(\.id) == [open.id])  // the locked body is not indexed
        #expect(try notes.search("vault").map(\.id) == [secret.id])  // the locked title is
        #expect(try notes.search("vau comb").map(\.id) == [secret.id])  // word prefixes, all words
        #expect(try notes.search("\"unbalanced").isEmpty)  // FTS syntax cannot be injected

        // The index is in memory: a restarted store rebuilds it, still without locked bodies.
        try home.restart()
        try home.unlock()
        #expect(try home.notes.search("vanilla").map(\.id) == [open.id])
        try home.notes.removeLock(secret.id, passphrase: passphrase("pass one"))
        #expect(Set(try home.notes.search("vanilla").map(\.id)) == [open.id, secret.id])
    }

    @Test func contentIsUnavailableUntilTheFirstUnlock() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "B"))
        try home.restart()
        #expect(throws: NotesError.contentUnavailable) { try home.notes.notes() }
        #expect(throws: NotesError.contentUnavailable) { try home.notes.openNote(note.id) }
        try home.unlock()
        home.keybag.lock()  // afterFirstUnlock stays available after a lock
        #expect(try home.notes.openNote(note.id).body == "B")
    }

    @Test func noTitleBodyFolderOrAttachmentNameIsInAnyFileInTheClear() throws {
        let home = try NotesHome()
        let title = unique("TITLEMARK"), body = unique("BODYMARK"), folder = unique("FOLDERMARK")
        let name = unique("NAMEMARK"), bytes = unique("ATTACHMARK")
        let note = try home.notes.createNote(NoteDraft(title: title, body: body, folder: folder))
        try home.notes.addAttachment(to: note.id, kind: .file, name: name, data: Data(bytes.utf8))
        _ = try home.notes.search(title)
        for marker in [title, body, folder, name, bytes] {
            #expect(home.files(containing: marker) == [], "\(marker)")
        }
        // Positive control: the scanner does find a marker written in the clear.
        try Data(body.utf8).write(to: home.home.appendingPathComponent("control"))
        #expect(home.files(containing: body) == ["control"])
    }

    @Test func sealedValuesCannotBeSwappedBetweenNotes() throws {
        let home = try NotesHome()
        let a = try home.notes.createNote(NoteDraft(title: "A", body: "alpha"))
        let b = try home.notes.createNote(NoteDraft(title: "B", body: "beta"))
        try home.tamper { db in
            let bodyA = try Data.fetchOne(db, sql: "SELECT sealed_body FROM notes WHERE id = ?", arguments: [a.id])!
            try db.execute(sql: "UPDATE notes SET sealed_body = ? WHERE id = ?", arguments: [bodyA, b.id])
        }
        #expect(throws: NotesError.damaged("the body of note \(b.id)")) { try home.notes.openNote(b.id) }
        #expect(try home.notes.openNote(a.id).body == "alpha")
    }
}
