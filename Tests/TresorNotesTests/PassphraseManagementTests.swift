import Foundation
import Testing
import TresorCrypto
import TresorNotesDomain

@testable import TresorNotes

@Suite("Passphrase change, reset, re-wrap and keychain keys")
struct PassphraseManagementTests {
    /// `count` locked notes under passphrase `old`, each with a distinct body.
    func lockedNotes(_ home: NotesHome, count: Int, passphrase old: String) throws -> [String] {
        try home.notes.setPassphrase(passphrase(old), hint: "first hint")
        return try (0..<count).map { index in
            let note = try home.notes.createNote(NoteDraft(title: "Note \(index)", body: "body \(index)"))
            try home.notes.lockNote(note.id)
            return note.id
        }
    }

    @Test func changeRewrapsEveryNoteAndTheOldPassphraseOpensNone() throws {
        let home = try NotesHome()
        let ids = try lockedNotes(home, count: 40, passphrase: "old passphrase")
        let before = try home.notes.pool.read { db in try Data.fetchAll(db, sql: "SELECT sealed_ciphertext FROM notes ORDER BY id") }
        var reports: [(Int, Int)] = []
        try home.notes.changePassphrase(from: passphrase("old passphrase"), to: passphrase("new passphrase"), progress: { reports.append(($0, $1)) })
        #expect(reports.last.map { $0 == (40, 40) } == true)
        // Keys only: no content was re-encrypted.
        #expect(try home.notes.pool.read { db in try Data.fetchAll(db, sql: "SELECT sealed_ciphertext FROM notes ORDER BY id") } == before)

        home.notes.lockNow()
        #expect(throws: NotesError.self) { try home.notes.openNote(ids[0], passphrase: passphrase("old passphrase")) }
        #expect(try home.notes.openNote(ids[0], passphrase: passphrase("new passphrase")).body == "body 0")
        for (index, id) in ids.enumerated() { #expect(try home.notes.openNote(id).body == "body \(index)") }
        #expect(try home.notes.passphraseHint() == "first hint")  // kept unless replaced
    }

    @Test func changeNeedsTheTypedCurrentPassphraseEvenWithASessionOpen() throws {
        let home = try NotesHome()
        let ids = try lockedNotes(home, count: 2, passphrase: "current")
        #expect(home.notes.openSessionCount == 1)
        #expect(throws: NotesError.self) { try home.notes.changePassphrase(from: passphrase("not it"), to: passphrase("next")) }
        home.notes.lockNow()
        #expect(try home.notes.openNote(ids[1], passphrase: passphrase("current")).body == "body 1")
    }

    @Test func aChangeThatFailsMidwayChangesNothing() throws {
        let home = try NotesHome()
        let ids = try lockedNotes(home, count: 10, passphrase: "old")
        // Damage the last note's wrapped key: the change reaches it after re-wrapping nine.
        let last = try home.notes.pool.read { db in try String.fetchOne(db, sql: "SELECT id FROM notes ORDER BY id DESC LIMIT 1")! }
        try home.tamper { db in
            try db.execute(sql: "UPDATE notes SET crypto_wrapped_key = zeroblob(24) WHERE id = ?", arguments: [last])
        }
        #expect(throws: NotesError.damaged("the wrapped key of note \(last)")) {
            try home.notes.changePassphrase(from: passphrase("old"), to: passphrase("new"))
        }
        home.notes.lockNow()
        for id in ids where id != last {
            #expect(try home.notes.openNote(id, passphrase: passphrase("old")).summary.id == id)
        }
        home.notes.lockNow()
        #expect(throws: NotesError.self) { try home.notes.openNote(ids.first { $0 != last }!, passphrase: passphrase("new")) }
    }

    @Test func resetStartsAGenerationAndOldNotesKeepTheirPassphrase() throws {
        let home = try NotesHome()
        let old = try lockedNotes(home, count: 2, passphrase: "forgotten")
        home.clock.advance(by: 86_400)
        try home.notes.resetPassphrase(to: passphrase("fresh start"), hint: "second hint")
        let newer = try home.notes.createNote(NoteDraft(title: "After", body: "after reset"))
        try home.notes.lockNote(newer.id)
        #expect(try home.notes.summary(ofNote: newer.id).lock?.generation == 2)

        home.notes.lockNow()
        let error = #expect(throws: NotesError.self) { try home.notes.openNote(old[0], passphrase: passphrase("fresh start")) }
        #expect(error == .wrongPassphrase(failedAttempts: 1, hint: nil, retryAfterSeconds: nil))
        let asked = #expect(throws: NotesError.self) { try home.notes.openNote(old[0]) }
        guard case .passphraseRequired(let info) = asked else { Issue.record("\(String(describing: asked))"); return }
        #expect(!info.isCurrent && info.generation == 1 && info.hint == "first hint")
        #expect(info.explanation.hasPrefix("this note was locked with an earlier passphrase (hint: first hint, set on 2027-01-15"))

        #expect(try home.notes.openNote(old[0], passphrase: passphrase("forgotten")).body == "body 0")
        // Re-wrap it under the current passphrase (its session is closed: give it).
        try home.notes.rewrap(old[0], currentPassphrase: passphrase("fresh start"))
        home.notes.lockNow()
        #expect(try home.notes.openNote(old[0], passphrase: passphrase("fresh start")).body == "body 0")
        #expect(try home.notes.summary(ofNote: old[0]).lock?.isCurrent == true)
        #expect(throws: NotesError.self) { try home.notes.openNote(old[1]) }  // still generation 1
    }

    @Test func keychainKeysOpenTheCurrentSessionOnly() throws {
        let home = try NotesHome()
        let ids = try lockedNotes(home, count: 1, passphrase: "kept in keychain")
        let key = try #require(try home.notes.currentSessionKey())
        home.notes.lockNow()
        #expect(try home.notes.currentSessionKey() == nil)
        #expect(try !home.notes.openSession(with: SecureRandom.key(bitCount: 128)))
        #expect(try home.notes.openSession(with: key))
        #expect(try home.notes.openNote(ids[0]).body == "body 0")
        // A key taken before a change no longer opens anything.
        try home.notes.changePassphrase(from: passphrase("kept in keychain"), to: passphrase("changed"))
        home.notes.lockNow()
        #expect(try !home.notes.openSession(with: key))
    }
}
