import Foundation
import Testing
import TresorCrypto
import TresorKeybag
import TresorNotesDomain

@testable import TresorNotes

@Suite("Locked notes: locking, secure sessions, wrong passphrases")
struct LockedNotesTests {
    @Test func aSessionOpensEveryNoteOfItsPassphraseUntilLockNow() throws {
        let home = try NotesHome()
        let notes = home.notes
        let first = try notes.createNote(NoteDraft(title: "First", body: "one"))
        let second = try notes.createNote(NoteDraft(title: "Second", body: "two"))
        try notes.setPassphrase(passphrase("the passphrase"))
        try notes.lockNote(first.id)
        try notes.lockNote(second.id)
        #expect(try notes.summary(ofNote: first.id).isLocked)

        notes.lockNow()
        #expect(notes.openSessionCount == 0)
        let required = #expect(throws: NotesError.self) { try notes.openNote(first.id) }
        guard case .passphraseRequired(let info) = required else { Issue.record("\(String(describing: required))"); return }
        #expect(info.isCurrent && info.generation == 1 && !info.isOpen)

        #expect(try notes.openNote(first.id, passphrase: passphrase("the passphrase")).body == "one")
        #expect(try notes.openNote(second.id).body == "two")  // same passphrase: no question
        notes.lockNow()
        #expect(throws: NotesError.self) { try notes.openNote(second.id) }
    }

    @Test func anIdleSessionEndsAfterTheTimeoutAndUseKeepsItOpen() throws {
        let home = try NotesHome(sessionIdleTimeout: 180)
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "idle"))
        try home.notes.setPassphrase(passphrase("pp"))
        try home.notes.lockNote(note.id)
        home.clock.advance(by: 170)
        #expect(try home.notes.openNote(note.id).body == "idle")  // used: the idle time restarts
        home.clock.advance(by: 170)
        #expect(try home.notes.openNote(note.id).body == "idle")
        home.clock.advance(by: 181)
        #expect(home.notes.expireIdleSessions() == 1)
        #expect(throws: NotesError.self) { try home.notes.openNote(note.id) }
    }

    @Test func aKeybagLockEndsEverySession() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "kb"))
        try home.notes.setPassphrase(passphrase("pp"))
        try home.notes.lockNote(note.id)
        #expect(try home.notes.openNote(note.id).body == "kb")
        home.keybag.lock()
        #expect(throws: NotesError.self) { try home.notes.openNote(note.id) }
        #expect(home.notes.openSessionCount == 0)
        try home.unlock()
        #expect(throws: NotesError.self) { try home.notes.openNote(note.id) }  // unlocking the keybag reopens nothing
    }

    @Test func threeWrongEntriesShowTheHintAndFurtherOnesAreDelayed() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "guarded"))
        try home.notes.setPassphrase(passphrase("right one"), hint: "the usual")
        try home.notes.lockNote(note.id)
        home.notes.lockNow()

        var errors: [NotesError] = []
        for attempt in 1...5 {
            let error = #expect(throws: NotesError.self) { try home.notes.openNote(note.id, passphrase: passphrase("wrong \(attempt)")) }
            errors.append(error!)
        }
        #expect(errors[0] == .wrongPassphrase(failedAttempts: 1, hint: nil, retryAfterSeconds: nil))
        #expect(errors[1] == .wrongPassphrase(failedAttempts: 2, hint: nil, retryAfterSeconds: nil))
        #expect(errors[2] == .wrongPassphrase(failedAttempts: 3, hint: "the usual", retryAfterSeconds: nil))
        #expect(errors[4] == .wrongPassphrase(failedAttempts: 5, hint: "the usual", retryAfterSeconds: 60))
        // Even the right passphrase waits now, and nothing is derived meanwhile.
        #expect(throws: NotesError.throttled(retryAfterSeconds: 60, hint: "the usual")) {
            try home.notes.openNote(note.id, passphrase: passphrase("right one"))
        }
        #expect(try home.notes.passphraseStatus().failedAttempts == 5)
        // The count survives a restart.
        try home.restart()
        try home.unlock()
        #expect(throws: NotesError.self) { try home.notes.openNote(note.id, passphrase: passphrase("right one")) }
        home.clock.advance(by: 61)
        #expect(try home.notes.openNote(note.id, passphrase: passphrase("right one")).body == "guarded")
        #expect(try home.notes.passphraseStatus().failedAttempts == 0)
    }

    @Test func theHintMayNotContainThePassphrase() throws {
        let home = try NotesHome()
        #expect(throws: NotesError.invalid("the hint must not contain the passphrase")) {
            try home.notes.setPassphrase(passphrase("tiger"), hint: "it is tiger")
        }
        #expect(try home.notes.passphraseStatus().isSet == false)
    }

    /// A change that keeps the hint holds it to the rule for the new passphrase: refused, with
    /// nothing changed, until another hint (or none) is given.
    @Test func aKeptHintMayNotContainTheNewPassphrase() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("first one"), hint: "later: hunter22")
        #expect(throws: NotesError.invalid("the hint kept from the old passphrase contains the new one: give another hint, or none")) {
            try home.notes.changePassphrase(from: passphrase("first one"), to: passphrase("Hunter22"))
        }
        #expect(try home.notes.passphraseHint() == "later: hunter22")
        // Still the first passphrase: the change that follows is made from it.
        try home.notes.changePassphrase(from: passphrase("first one"), to: passphrase("Hunter22"), hint: .some(nil))
        #expect(try home.notes.passphraseHint() == nil)
    }

    /// A hint set on its own is held to the same rule, in any letter case — so it needs the
    /// passphrase typed: with only the session open, the store could not check it. Removing
    /// the hint needs no more than the session.
    @Test func aHintSetLaterMayNotContainThePassphraseInAnyCase() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("Tiger Lily"), hint: "a flower")
        for hint in ["my tiger lily", "TIGER LILY!", "Tiger Lily"] {
            #expect(throws: NotesError.invalid("the hint must not contain the passphrase")) {
                try home.notes.setPassphraseHint(hint, passphrase: passphrase("Tiger Lily"))
            }
        }
        #expect(try home.notes.passphraseHint() == "a flower")
        #expect(throws: NotesError.self, "the session alone cannot vouch for a new hint") {
            try home.notes.setPassphraseHint("striped")
        }
        try home.notes.setPassphraseHint("striped", passphrase: passphrase("Tiger Lily"))
        #expect(try home.notes.passphraseHint() == "striped")
        try home.notes.setPassphraseHint(nil)
        #expect(try home.notes.passphraseHint() == nil)
    }

    @Test func lockingNeedsAPassphraseAndAnOpenSessionOrTheRightOne() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "b"))
        #expect(throws: NotesError.noPassphrase) { try home.notes.lockNote(note.id) }
        try home.notes.setPassphrase(passphrase("pp"))
        home.notes.lockNow()
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id) }
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id, passphrase: passphrase("nope")) }
        #expect(try !home.notes.summary(ofNote: note.id).isLocked)
        try home.notes.lockNote(note.id, passphrase: passphrase("pp"))
        #expect(throws: NotesError.wrongLockState("note \(note.id) is already locked")) { try home.notes.lockNote(note.id) }
    }

    @Test func lockedNotesStoreApplesFieldsAndTheirCryptographyOpensDirectly() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "apple-shaped"))
        try home.notes.setPassphrase(passphrase("pp"))
        try home.notes.lockNote(note.id)
        // Opened by hand from the stored fields, the way Apple Notes or the web client would.
        let row = try home.notes.pool.read { db in try NoteRow.fetch(note.id, db) }
        #expect(row.salt?.count == 16 && row.iterations == 1_000 && row.wrappedKey?.count == 24 && row.iv?.count == 12 && row.tag?.count == 16)
        #expect(row.sealedBody == nil)
        let key = try PBKDF2.deriveKey(from: Data("pp".utf8), parameters: .init(salt: row.salt!, rounds: row.iterations!, outputByteCount: 16))
        let noteKey = try KeyWrap.unwrap(row.wrappedKey!, using: key)
        let ciphertext = try home.notes.sealing().open(row.sealedCiphertext!, table: "notes", id: note.id, column: "ciphertext")
        let body = try AESGCM.open(.init(iv: row.iv!, ciphertext: ciphertext, tag: row.tag!), using: noteKey, authenticating: Data())
        #expect(String(decoding: body, as: UTF8.self) == "apple-shaped")
    }

    @Test func tamperedLockedBodyIsAClearErrorAndOtherNotesStillOpen() throws {
        let home = try NotesHome()
        let a = try home.notes.createNote(NoteDraft(title: "A", body: "alpha"))
        let b = try home.notes.createNote(NoteDraft(title: "B", body: "beta"))
        try home.notes.setPassphrase(passphrase("pp"))
        try home.notes.lockNote(a.id)
        try home.notes.lockNote(b.id)
        try home.tamper { db in
            var tag = try Data.fetchOne(db, sql: "SELECT crypto_tag FROM notes WHERE id = ?", arguments: [a.id])!
            tag[0] ^= 1
            try db.execute(sql: "UPDATE notes SET crypto_tag = ? WHERE id = ?", arguments: [tag, a.id])
        }
        #expect(throws: NotesError.damaged("the body of note \(a.id)")) { try home.notes.openNote(a.id) }
        #expect(try home.notes.openNote(b.id).body == "beta")
        try home.tamper { db in
            var wrapped = try Data.fetchOne(db, sql: "SELECT crypto_wrapped_key FROM notes WHERE id = ?", arguments: [b.id])!
            wrapped[5] ^= 0x80
            try db.execute(sql: "UPDATE notes SET crypto_wrapped_key = ? WHERE id = ?", arguments: [wrapped, b.id])
        }
        #expect(throws: NotesError.damaged("the wrapped key of note \(b.id)")) { try home.notes.openNote(b.id) }
        #expect(try home.notes.notes().count == 2)
    }

    @Test func removingTheLockRestoresAnOrdinaryNote() throws {
        let home = try NotesHome()
        let note = try home.notes.createNote(NoteDraft(title: "T", body: "back to normal"))
        try home.notes.addAttachment(to: note.id, kind: .image, name: "photo.png", data: Data(repeating: 7, count: 3000))
        try home.notes.setPassphrase(passphrase("pp"))
        try home.notes.lockNote(note.id)
        home.notes.lockNow()
        #expect(throws: NotesError.self) { try home.notes.removeLock(note.id) }
        try home.notes.removeLock(note.id, passphrase: passphrase("pp"))
        home.notes.lockNow()
        let opened = try home.notes.openNote(note.id)
        #expect(opened.body == "back to normal" && opened.summary.lock == nil)
        let attachment = try home.notes.attachment(opened.attachments[0].id, of: note.id)
        #expect(attachment.1 == Data(repeating: 7, count: 3000))
    }

    @Test func editingALockedBodyKeepsItLocked() throws {
        let home = try NotesHome()
        let marker = unique("OLDBODY")
        let note = try home.notes.createNote(NoteDraft(title: "T", body: marker))
        try home.notes.setPassphrase(passphrase("pp"))
        try home.notes.lockNote(note.id)
        home.notes.lockNow()
        #expect(throws: NotesError.self) { try home.notes.editNote(note.id, NoteChanges(body: "new")) }
        try home.notes.editNote(note.id, NoteChanges(title: "Renamed"))  // the title needs no passphrase
        try home.notes.editNote(note.id, NoteChanges(body: "new body"), passphrase: passphrase("pp"))
        home.notes.lockNow()
        #expect(try home.notes.openNote(note.id, passphrase: passphrase("pp")).body == "new body")
        #expect(try home.notes.summary(ofNote: note.id).title == "Renamed")
        #expect(home.files(containing: marker) == [])
    }
}
