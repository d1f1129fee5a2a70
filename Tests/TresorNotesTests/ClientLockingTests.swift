import Crypto
import Foundation
import GRDB
import Testing
import TresorCrypto
import TresorNotesDomain

@testable import TresorNotes

/// Locked notes made in the browser (docs/FORMAT.md, "Locked notes made in the browser"). These
/// tests play the browser with `LockedNoteCrypto` (the web client does the same with WebCrypto):
/// the store only ever sees salts, verifiers, wrapped keys and ciphertext, and what it stores opens
/// in the CLI's way.
@Suite("Locked notes made in the browser")
struct ClientLockingTests {
    /// What the browser derives and keeps: the passphrase key and the material it sends.
    struct Browser {
        let key: SymmetricKey
        let material: PassphraseMaterial
        /// What it presents to show it holds `key`.
        var proof: Data { LockedNoteCrypto.passphraseProof(key) }

        init(_ passphrase: String, iterations: Int) throws {
            let salt = SecureRandom.bytes(count: 16)
            key = try LockedNoteCrypto.passphraseKey(try Passphrase(passphrase), salt: salt, iterations: iterations)
            material = try PassphraseMaterial(
                salt: salt, iterations: iterations, verifier: try LockedNoteCrypto.wrap(LockedNoteCrypto.newNoteKey(), with: key),
                proofHash: LockedNoteCrypto.proofHash(LockedNoteCrypto.passphraseProof(key)))
        }

        /// The browser's key as it derives it from the record the store hands out.
        init(_ passphrase: String, record: PassphraseRecord) throws {
            key = try LockedNoteCrypto.passphraseKey(try Passphrase(passphrase), salt: record.salt, iterations: record.iterations)
            material = try PassphraseMaterial(salt: record.salt, iterations: record.iterations, key: key)
        }

        func proof(_ id: Int64) -> PassphraseProof { PassphraseProof(passphraseID: id, proof: proof) }

        func lock(_ body: String, attachments: [(id: String, data: Data)], passphraseID: Int64) throws -> ClientLockedNote {
            let noteKey = LockedNoteCrypto.newNoteKey()
            let sealed = try LockedNoteCrypto.sealBody(Data(body.utf8), with: noteKey)
            var chunks: [String: [Data]] = [:]
            for (id, data) in attachments {
                let size = AttachmentFile.chunkByteCount
                let count = max(1, (data.count + size - 1) / size)
                chunks[id] = try (0..<count).map { index in
                    let part = data[(index * size)..<min(data.count, (index + 1) * size)]
                    return try LockedNoteCrypto.sealChunk(part, with: noteKey, attachmentID: id, index: UInt64(index), isFinal: index == count - 1)
                }
            }
            return ClientLockedNote(
                passphraseID: passphraseID, wrappedKey: try LockedNoteCrypto.wrap(noteKey, with: key),
                noteProofHash: LockedNoteCrypto.proofHash(LockedNoteCrypto.noteProof(noteKey)),
                iv: sealed.iv, tag: sealed.tag, ciphertext: sealed.ciphertext, attachmentChunks: chunks)
        }

        /// The note key of locked note `id`, its wrapped key fetched with a proof.
        func noteKey(_ store: NotesStore, _ id: String) throws -> SymmetricKey {
            let record = try store.lockedRecord(ofNote: id)
            let wrapped = try record.wrappedKey ?? store.wrappedKey(ofNote: id, proof: proof(record.passphraseID), account: .local)
            return try #require(LockedNoteCrypto.unwrap(wrapped, with: key))
        }

        func open(_ store: NotesStore, _ id: String) throws -> String {
            let record = try store.lockedRecord(ofNote: id)
            let plain = try LockedNoteCrypto.openBody(
                AESGCM.Sealed(iv: record.iv, ciphertext: record.ciphertext, tag: record.tag), with: try noteKey(store, id))
            return String(decoding: plain, as: UTF8.self)
        }
    }

    @Test func aNoteLockedInTheBrowserOpensWithThePassphraseInTheCLIsWay() throws {
        let home = try NotesHome()
        let browser = try Browser("browser pass", iterations: home.notes.minimumIterations)
        try home.notes.setPassphrase(browser.material, hint: "browser", account: .local)
        let record = try #require(try home.notes.passphraseRecord(account: .local))
        #expect(record.salt == browser.material.salt && record.hasProof && record.verifier == nil && record.hasHint)

        let body = unique("BROWSER-BODY"), image = Data(unique("IMAGE-BYTES").utf8) + Data(repeating: 7, count: 1 << 20)
        let note = try home.notes.createNote(NoteDraft(title: "Web", body: body))
        let attachment = try home.notes.addAttachment(to: note.id, kind: .image, name: "a.png", data: image)
        try home.notes.lockNote(
            note.id, sealedBy: browser.lock(body, attachments: [(attachment.id, image)], passphraseID: record.id), proof: browser.proof)

        #expect(home.files(containing: body).isEmpty)
        #expect(home.files(containing: Data(image.prefix(24))).isEmpty)
        #expect(throws: NotesError.self) { try home.notes.openNote(note.id) }  // no session: the server never had the key
        let opened = try home.notes.openNote(note.id, passphrase: passphrase("browser pass"))
        #expect(opened.body == body)
        #expect(try home.notes.attachment(attachment.id, of: note.id).1 == image)
        // And the browser opens it back from what the server hands out.
        #expect(try browser.open(home.notes, note.id) == body)
        #expect(try home.notes.sealedChunks(ofAttachment: attachment.id, note: note.id).count == 2)
    }

    @Test func aNoteLockedInTheCLIOpensInTheBrowser() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("cli pass"))
        let note = try home.notes.createNote(NoteDraft(title: "CLI", body: "from the terminal"))
        let image = Data("png-ish".utf8)
        let attachment = try home.notes.addAttachment(to: note.id, kind: .image, name: "i.png", data: image)
        try home.notes.lockNote(note.id)
        let record = try #require(try home.notes.passphraseRecord(account: .local))
        #expect(record.hasProof && record.verifier == nil, "the CLI records the proof hash; the verifier is not served")
        let browser = try Browser("cli pass", record: record)
        let locked = try home.notes.lockedRecord(ofNote: note.id)
        #expect(locked.wrappedKey == nil)
        let noteKey = try browser.noteKey(home.notes, note.id)
        let body = try LockedNoteCrypto.openBody(AESGCM.Sealed(iv: locked.iv, ciphertext: locked.ciphertext, tag: locked.tag), with: noteKey)
        #expect(String(decoding: body, as: UTF8.self) == "from the terminal")
        let chunks = try home.notes.sealedChunks(ofAttachment: attachment.id, note: note.id)
        #expect(try LockedNoteCrypto.openChunk(chunks[0], with: noteKey, attachmentID: attachment.id, index: 0, isFinal: true) == image)
    }

    @Test func badlySizedOrIncompleteLockRequestsChangeNothing() throws {
        let home = try NotesHome()
        let browser = try Browser("pp", iterations: home.notes.minimumIterations)
        try home.notes.setPassphrase(browser.material, hint: nil, account: .local)
        let id = try #require(try home.notes.passphraseRecord(account: .local)).id
        let note = try home.notes.createNote(NoteDraft(title: "N", body: "body"))
        let data = Data(repeating: 1, count: 100)
        let attachment = try home.notes.addAttachment(to: note.id, kind: .image, name: "x.png", data: data)
        let filesBefore = Set(home.allFiles().map(\.lastPathComponent))

        var missing = try browser.lock("body", attachments: [], passphraseID: id)  // attachment left out
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id, sealedBy: missing, proof: browser.proof) }
        var cut = try browser.lock("body", attachments: [(attachment.id, data)], passphraseID: id)
        cut.attachmentChunks[attachment.id]![0].removeLast()  // a truncated chunk
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id, sealedBy: cut, proof: browser.proof) }
        missing = try browser.lock("body", attachments: [(attachment.id, data)], passphraseID: id + 99)  // not the current passphrase
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id, sealedBy: missing, proof: browser.proof) }
        var shortKey = try browser.lock("body", attachments: [(attachment.id, data)], passphraseID: id)
        shortKey.wrappedKey.removeLast()
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id, sealedBy: shortKey, proof: browser.proof) }

        #expect(try home.notes.summary(ofNote: note.id).lock == nil)
        #expect(try home.notes.openNote(note.id).body == "body")
        #expect(try home.notes.attachment(attachment.id, of: note.id).1 == data)
        #expect(Set(home.allFiles().map(\.lastPathComponent)).subtracting(filesBefore).subtracting(["notes.db-wal", "notes.db-shm"]).isEmpty)
        #expect(throws: NotesError.self) {
            try PassphraseMaterial(salt: Data(count: 8), iterations: 1, verifier: Data(count: 24), proofHash: Data(count: 32))
        }
        let weak = try Browser("pp", iterations: home.notes.minimumIterations - 1)
        #expect(throws: NotesError.self) { try home.notes.resetPassphrase(to: weak.material, hint: nil, account: .local) }
    }

    @Test func aChangeRewrapsEveryNoteAtOnceOrNothing() throws {
        let home = try NotesHome()
        let old = try Browser("old pass", iterations: home.notes.minimumIterations)
        try home.notes.setPassphrase(old.material, hint: nil, account: .local)
        let id = try #require(try home.notes.passphraseRecord(account: .local)).id
        var ids: [String] = []
        for index in 0..<4 {
            let note = try home.notes.createNote(NoteDraft(title: "N\(index)", body: "body \(index)"))
            try home.notes.lockNote(note.id, sealedBy: old.lock("body \(index)", attachments: [], passphraseID: id), proof: old.proof)
            ids.append(note.id)
        }
        let new = try Browser("new pass", iterations: home.notes.minimumIterations)
        var rewrapped: [String: Data] = [:]
        for noteID in ids {
            let noteKey = try old.noteKey(home.notes, noteID)
            rewrapped[noteID] = try LockedNoteCrypto.wrap(noteKey, with: new.key)
        }
        var partial = rewrapped
        partial[ids[0]] = nil
        #expect(throws: NotesError.self) {
            try home.notes.changePassphrase(proof: old.proof(id), to: new.material, hint: nil, rewrappedKeys: partial, account: .local)
        }
        #expect(try ids.allSatisfy { try old.open(home.notes, $0).hasPrefix("body") })

        // A proof of another key (the new one, say) is a wrong entry: counted, nothing changed.
        #expect(throws: NotesError.self) {
            try home.notes.changePassphrase(proof: new.proof(id), to: new.material, hint: nil, rewrappedKeys: rewrapped, account: .local)
        }
        #expect(try home.notes.passphraseStatus(account: .local).failedAttempts == 1)
        #expect(try ids.allSatisfy { try old.open(home.notes, $0).hasPrefix("body") })
        try home.notes.changePassphrase(proof: old.proof(id), to: new.material, hint: .some("new"), rewrappedKeys: rewrapped, account: .local)
        for (index, noteID) in ids.enumerated() {
            #expect(try new.open(home.notes, noteID) == "body \(index)")
            #expect(throws: NotesError.self) { try home.notes.wrappedKey(ofNote: noteID, proof: old.proof(id), account: .local) }
        }
        #expect(try home.notes.openNote(ids[2], passphrase: passphrase("new pass")).body == "body 2")
        #expect(try home.notes.passphraseHint(account: .local) == "new")
    }

    @Test func wrongProofsShowTheHintThenDelayAndOnlyARightOneClearsTheCount() throws {
        let home = try NotesHome()
        let browser = try Browser("pp", iterations: home.notes.minimumIterations)
        try home.notes.setPassphrase(browser.material, hint: "the usual", account: .local)
        let id = try #require(try home.notes.passphraseRecord(account: .local)).id
        let wrong = PassphraseProof(passphraseID: id, proof: SecureRandom.bytes(count: 32))
        for attempt in 1...5 {
            // "establish" means nothing once a proof is recorded: the server checks.
            #expect {
                try home.notes.enterPassphrase(wrong, establish: true, account: .local)
            } throws: { error in
                guard case NotesError.wrongPassphrase(let failures, let hint, let wait) = error else { return false }
                return failures == attempt && (hint == "the usual") == (attempt >= 3) && (wait != nil) == (attempt >= 5)
            }
        }
        // Delayed: not even a right proof is checked now.
        #expect(throws: NotesError.self) { try home.notes.enterPassphrase(browser.proof(id), establish: false, account: .local) }
        #expect(try home.notes.passphraseStatus(account: .local).failedAttempts == 5)
        home.clock.advance(by: 61)
        let right = try home.notes.enterPassphrase(browser.proof(id), establish: false, account: .local)
        #expect(right.failedAttempts == 0 && !right.established)
        // Another account's passphrase id is not found.
        let bob = try home.notes.registerAccount(name: "bob", password: AccountPassword("password b"))
        #expect(throws: NotesError.notFound("passphrase \(id)")) {
            try home.notes.enterPassphrase(browser.proof(id), establish: true, account: bob.id)
        }
    }

    @Test func concurrentWrongProofsAreCheckedNoMoreThanTheFreeAllowance() throws {
        let home = try NotesHome()
        let browser = try Browser("pp", iterations: home.notes.minimumIterations)
        try home.notes.setPassphrase(browser.material, hint: nil, account: .local)
        let id = try #require(try home.notes.passphraseRecord(account: .local)).id
        let store = home.notes
        let outcomes = PassphraseRaceTests.concurrently(60) {
            _ = try store.enterPassphrase(PassphraseProof(passphraseID: id, proof: SecureRandom.bytes(count: 32)), establish: true, account: .local)
        }
        #expect(outcomes.filter { $0 == "wrong" }.count == 5, "\(outcomes)")
        #expect(outcomes.filter { $0 == "throttled" }.count == 55)
        #expect(try home.notes.passphraseStatus(account: .local).failedAttempts == 5)
    }

    @Test func aPassphraseFromBeforeProofsRecordsItsProofAtTheFirstRightEntry() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("old data"), hint: "h")
        let note = try home.notes.createNote(NoteDraft(title: "Old", body: "locked before proofs"))
        try home.notes.lockNote(note.id)
        home.notes.lockNow()
        // As a home written before the v3 migration: no proof hashes at all.
        try home.tamper { db in
            try db.execute(sql: "UPDATE passphrases SET proof_hash = NULL")
            try db.execute(sql: "UPDATE notes SET note_proof_hash = NULL")
        }
        let record = try #require(try home.notes.passphraseRecord(account: .local))
        #expect(!record.hasProof && record.verifier != nil, "the browser needs the verifier to check the passphrase itself")
        #expect(try home.notes.lockedRecord(ofNote: note.id).wrappedKey != nil)
        let browser = try Browser("old data", record: record)
        // Nothing proof-guarded works before the proof is recorded.
        #expect(throws: NotesError.self) { try home.notes.wrappedKey(ofNote: note.id, proof: browser.proof(record.id), account: .local) }
        // A failed local check is counted; it cannot clear anything.
        #expect(throws: NotesError.self) {
            try home.notes.enterPassphrase(
                PassphraseProof(passphraseID: record.id, proof: SecureRandom.bytes(count: 32)), establish: false, account: .local)
        }
        #expect(try home.notes.passphraseStatus().failedAttempts == 1)
        let first = try home.notes.enterPassphrase(browser.proof(record.id), establish: true, account: .local)
        #expect(first.established && first.failedAttempts == 0)
        #expect(try home.notes.passphraseRecord(account: .local)?.verifier == nil)
        #expect(try home.notes.lockedRecord(ofNote: note.id).wrappedKey == nil)
        // Established once: a later "establish" with another proof is just a wrong entry.
        #expect(throws: NotesError.self) {
            try home.notes.enterPassphrase(
                PassphraseProof(passphraseID: record.id, proof: SecureRandom.bytes(count: 32)), establish: true, account: .local)
        }
        #expect(try browser.open(home.notes, note.id) == "locked before proofs")

        // The old note has no note proof yet: a save needs the passphrase proof once, which
        // records the note proof; then the note proof alone.
        let noteKey = try browser.noteKey(home.notes, note.id)
        let noteProof = LockedNoteCrypto.noteProof(noteKey)
        let edited = try LockedNoteCrypto.sealBody(Data("edited".utf8), with: noteKey)
        #expect(throws: NotesError.self) {
            try home.notes.replaceLockedBody(
                ofNote: note.id, iv: edited.iv, tag: edited.tag, ciphertext: edited.ciphertext, noteProof: noteProof, passphraseProof: nil)
        }
        try home.notes.replaceLockedBody(
            ofNote: note.id, iv: edited.iv, tag: edited.tag, ciphertext: edited.ciphertext, noteProof: noteProof,
            passphraseProof: browser.proof(record.id))
        let again = try LockedNoteCrypto.sealBody(Data("edited twice".utf8), with: noteKey)
        try home.notes.replaceLockedBody(
            ofNote: note.id, iv: again.iv, tag: again.tag, ciphertext: again.ciphertext, noteProof: noteProof, passphraseProof: nil)
        #expect(try browser.open(home.notes, note.id) == "edited twice")
    }

    @Test func theCLIReplacesAProofRecordedInTheUpgradeWindowByAClientWithoutThePassphrase() throws {
        let home = try NotesHome()
        try home.notes.setPassphrase(passphrase("the real one"))
        try home.tamper { db in try db.execute(sql: "UPDATE passphrases SET proof_hash = NULL") }
        let record = try #require(try home.notes.passphraseRecord(account: .local))
        // A session without the passphrase "establishes" a proof of its own.
        let bogus = PassphraseProof(passphraseID: record.id, proof: SecureRandom.bytes(count: 32))
        #expect(try home.notes.enterPassphrase(bogus, establish: true, account: .local).established)
        // The daemon checks the passphrase itself (the CLI typed it) and records the right proof.
        home.notes.lockNow()
        let note = try home.notes.createNote(NoteDraft(title: "N", body: "b"))
        try home.notes.lockNote(note.id, passphrase: passphrase("the real one"))
        let browser = try Browser("the real one", record: record)
        #expect(try home.notes.enterPassphrase(browser.proof(record.id), establish: false, account: .local).failedAttempts == 0)
        #expect(throws: NotesError.self) { try home.notes.enterPassphrase(bogus, establish: false, account: .local) }
    }

    @Test func lockedBodiesAndRewrapsNeedTheNoteKeyAndTheCurrentPassphrase() throws {
        let home = try NotesHome()
        let first = try Browser("first", iterations: home.notes.minimumIterations)
        try home.notes.setPassphrase(first.material, hint: nil, account: .local)
        let firstID = try #require(try home.notes.passphraseRecord(account: .local)).id
        let note = try home.notes.createNote(NoteDraft(title: "N", body: "original"))
        try home.notes.lockNote(note.id, sealedBy: first.lock("original", attachments: [], passphraseID: firstID), proof: first.proof)
        let noteKey = try first.noteKey(home.notes, note.id)

        // Random bytes with a made-up note proof: refused (counted), body unchanged.
        let junk = PassphraseProof(passphraseID: firstID, proof: SecureRandom.bytes(count: 32))
        #expect(throws: NotesError.self) {
            try home.notes.replaceLockedBody(
                ofNote: note.id, iv: SecureRandom.bytes(count: 12), tag: SecureRandom.bytes(count: 16), ciphertext: SecureRandom.bytes(count: 40),
                noteProof: SecureRandom.bytes(count: 32), passphraseProof: junk)
        }
        #expect(try home.notes.passphraseStatus().failedAttempts == 1)
        #expect(try first.open(home.notes, note.id) == "original")

        // After a reset, a re-wrap needs a proof of the current passphrase and of the note key.
        let second = try Browser("second", iterations: home.notes.minimumIterations)
        try home.notes.resetPassphrase(to: second.material, hint: nil, account: .local)
        let secondID = try #require(try home.notes.passphraseRecord(account: .local)).id
        let rewrapped = try LockedNoteCrypto.wrap(noteKey, with: second.key)
        #expect(throws: NotesError.self) {
            try home.notes.rewrap(
                note.id, proof: second.proof(secondID), wrappedKey: SecureRandom.bytes(count: 24),
                noteProof: SecureRandom.bytes(count: 32), earlierProof: nil)
        }
        #expect(throws: NotesError.self) {
            try home.notes.rewrap(note.id, proof: junk, wrappedKey: rewrapped, noteProof: LockedNoteCrypto.noteProof(noteKey), earlierProof: nil)
        }
        #expect(try first.open(home.notes, note.id) == "original", "still under the first passphrase")
        try home.notes.rewrap(
            note.id, proof: second.proof(secondID), wrappedKey: rewrapped, noteProof: LockedNoteCrypto.noteProof(noteKey), earlierProof: nil)
        #expect(try second.open(home.notes, note.id) == "original")
    }

    @Test func theWidgetCountsBeforeTheFirstUnlockAndListsTitlesAfter() throws {
        let home = try NotesHome()
        for index in 0..<7 {
            try home.notes.createNote(NoteDraft(title: "Note \(index)", body: "b", isPinned: index == 2)); home.clock.advance(by: 1)
        }
        let widget = try home.notes.widget(account: .local)
        #expect(widget.noteCount == 7 && widget.lockedNoteCount == 0)
        #expect(widget.recent.map(\.title) == ["Note 6", "Note 5", "Note 4", "Note 3", "Note 2"])
        #expect(widget.pinned.map(\.title) == ["Note 2"])
        try home.restart()  // locked since start: titles unreadable, counts still there
        #expect(try home.notes.widgetCounts(account: .local).notes == 7)
        #expect(throws: NotesError.contentUnavailable) { try home.notes.widget(account: .local) }
    }
}
