import Crypto
import Foundation
import GRDB
import Testing
import TresorCrypto
@testable import TresorNotes

/// SPEC §5: locked notes made in the browser. These tests play the browser with
/// `LockedNoteCrypto` (the web client does the same with WebCrypto): the store only ever sees
/// salts, verifiers, wrapped keys and ciphertext, and what it stores opens in the CLI's way.
@Suite("Locked notes made in the browser")
struct ClientLockingTests {
    /// What the browser derives and keeps: the passphrase key and the material it sends.
    struct Browser {
        let key: SymmetricKey
        let material: PassphraseMaterial

        init(_ passphrase: String, iterations: Int) throws {
            let salt = SecureRandom.bytes(count: 16)
            key = try LockedNoteCrypto.passphraseKey(try Passphrase(passphrase), salt: salt, iterations: iterations)
            material = try PassphraseMaterial(
                salt: salt, iterations: iterations, verifier: try LockedNoteCrypto.wrap(LockedNoteCrypto.newNoteKey(), with: key))
        }

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
            return ClientLockedNote(passphraseID: passphraseID, wrappedKey: try LockedNoteCrypto.wrap(noteKey, with: key),
                                    iv: sealed.iv, tag: sealed.tag, ciphertext: sealed.ciphertext, attachmentChunks: chunks)
        }

        func open(_ record: LockedNoteRecord) throws -> String {
            let noteKey = try #require(LockedNoteCrypto.unwrap(record.wrappedKey, with: key))
            let plain = try LockedNoteCrypto.openBody(AESGCM.Sealed(iv: record.iv, ciphertext: record.ciphertext, tag: record.tag), with: noteKey)
            return String(decoding: plain, as: UTF8.self)
        }
    }

    @Test func aNoteLockedInTheBrowserOpensWithThePassphraseInTheCLIsWay() throws {
        let home = try NotesHome()
        let browser = try Browser("browser pass", iterations: home.notes.minimumIterations)
        try home.notes.setPassphrase(browser.material, hint: "browser", account: .local)
        let record = try #require(try home.notes.passphraseRecord(account: .local))
        #expect(record.salt == browser.material.salt && record.verifier == browser.material.verifier && record.hasHint)

        let body = unique("BROWSER-BODY"), image = Data(unique("IMAGE-BYTES").utf8) + Data(repeating: 7, count: 1 << 20)
        let note = try home.notes.createNote(NoteDraft(title: "Web", body: body))
        let attachment = try home.notes.addAttachment(to: note.id, kind: .image, name: "a.png", data: image)
        try home.notes.lockNote(note.id, sealedBy: browser.lock(body, attachments: [(attachment.id, image)], passphraseID: record.id))

        #expect(home.files(containing: body).isEmpty)
        #expect(home.files(containing: Data(image.prefix(24))).isEmpty)
        #expect(throws: NotesError.self) { try home.notes.openNote(note.id) }   // no session: the server never had the key
        let opened = try home.notes.openNote(note.id, passphrase: passphrase("browser pass"))
        #expect(opened.body == body)
        #expect(try home.notes.attachment(attachment.id, of: note.id).1 == image)
        // And the browser opens it back from what the server hands out.
        #expect(try browser.open(home.notes.lockedRecord(ofNote: note.id)) == body)
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
        let key = try LockedNoteCrypto.passphraseKey(passphrase("cli pass"), salt: record.salt, iterations: record.iterations)
        #expect(LockedNoteCrypto.unwrap(try #require(record.verifier), with: key) != nil)
        let locked = try home.notes.lockedRecord(ofNote: note.id)
        let noteKey = try #require(LockedNoteCrypto.unwrap(locked.wrappedKey, with: key))
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

        var missing = try browser.lock("body", attachments: [], passphraseID: id)       // attachment left out
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id, sealedBy: missing) }
        var cut = try browser.lock("body", attachments: [(attachment.id, data)], passphraseID: id)
        cut.attachmentChunks[attachment.id]![0].removeLast()                             // a truncated chunk
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id, sealedBy: cut) }
        missing = try browser.lock("body", attachments: [(attachment.id, data)], passphraseID: id + 99)  // not the current passphrase
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id, sealedBy: missing) }
        var shortKey = try browser.lock("body", attachments: [(attachment.id, data)], passphraseID: id)
        shortKey.wrappedKey.removeLast()
        #expect(throws: NotesError.self) { try home.notes.lockNote(note.id, sealedBy: shortKey) }

        #expect(try home.notes.summary(ofNote: note.id).lock == nil)
        #expect(try home.notes.openNote(note.id).body == "body")
        #expect(try home.notes.attachment(attachment.id, of: note.id).1 == data)
        #expect(Set(home.allFiles().map(\.lastPathComponent)).subtracting(filesBefore).subtracting(["notes.db-wal", "notes.db-shm"]).isEmpty)
        #expect(throws: NotesError.self) {
            try PassphraseMaterial(salt: Data(count: 8), iterations: 1, verifier: Data(count: 24))
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
            try home.notes.lockNote(note.id, sealedBy: old.lock("body \(index)", attachments: [], passphraseID: id))
            ids.append(note.id)
        }
        let new = try Browser("new pass", iterations: home.notes.minimumIterations)
        var rewrapped: [String: Data] = [:]
        for noteID in ids {
            let noteKey = try #require(LockedNoteCrypto.unwrap(home.notes.lockedRecord(ofNote: noteID).wrappedKey, with: old.key))
            rewrapped[noteID] = try LockedNoteCrypto.wrap(noteKey, with: new.key)
        }
        var partial = rewrapped
        partial[ids[0]] = nil
        #expect(throws: NotesError.self) {
            try home.notes.changePassphrase(from: id, to: new.material, hint: nil, rewrappedKeys: partial, account: .local)
        }
        #expect(try ids.allSatisfy { try old.open(home.notes.lockedRecord(ofNote: $0)).hasPrefix("body") })

        try home.notes.changePassphrase(from: id, to: new.material, hint: .some("new"), rewrappedKeys: rewrapped, account: .local)
        for (index, noteID) in ids.enumerated() {
            #expect(try new.open(home.notes.lockedRecord(ofNote: noteID)) == "body \(index)")
            #expect(LockedNoteCrypto.unwrap(try home.notes.lockedRecord(ofNote: noteID).wrappedKey, with: old.key) == nil)
        }
        #expect(try home.notes.openNote(ids[2], passphrase: passphrase("new pass")).body == "body 2")
        #expect(try home.notes.passphraseHint(account: .local) == "new")
    }

    @Test func wrongEntriesReportedByTheBrowserShowTheHintThenDelay() throws {
        let home = try NotesHome()
        let browser = try Browser("pp", iterations: home.notes.minimumIterations)
        try home.notes.setPassphrase(browser.material, hint: "the usual", account: .local)
        let id = try #require(try home.notes.passphraseRecord(account: .local)).id
        let first = try home.notes.recordPassphraseEntry(passphraseID: id, succeeded: false, account: .local)
        #expect(first.failedAttempts == 1 && first.hint == nil)
        _ = try home.notes.recordPassphraseEntry(passphraseID: id, succeeded: false, account: .local)
        let third = try home.notes.recordPassphraseEntry(passphraseID: id, succeeded: false, account: .local)
        #expect(third.failedAttempts == 3 && third.hint == "the usual")
        _ = try home.notes.recordPassphraseEntry(passphraseID: id, succeeded: false, account: .local)
        let fifth = try home.notes.recordPassphraseEntry(passphraseID: id, succeeded: false, account: .local)
        #expect(fifth.retryAfterSeconds != nil)
        #expect(throws: NotesError.self) { try home.notes.recordPassphraseEntry(passphraseID: id, succeeded: false, account: .local) }
        // Shared with the CLI's count.
        #expect(try home.notes.passphraseStatus(account: .local).failedAttempts == 5)
        let right = try home.notes.recordPassphraseEntry(passphraseID: id, succeeded: true, account: .local)
        #expect(right.failedAttempts == 0 && right.hint == nil)
        // Another account's passphrase id is not found.
        let bob = try home.notes.registerAccount(name: "bob", password: AccountPassword("password b"))
        #expect(throws: NotesError.self) { try home.notes.recordPassphraseEntry(passphraseID: id, succeeded: false, account: bob.id) }
    }

    @Test func theWidgetCountsBeforeTheFirstUnlockAndListsTitlesAfter() throws {
        let home = try NotesHome()
        for index in 0..<7 { try home.notes.createNote(NoteDraft(title: "Note \(index)", body: "b", isPinned: index == 2)); home.clock.advance(1) }
        let widget = try home.notes.widget(account: .local)
        #expect(widget.noteCount == 7 && widget.lockedNoteCount == 0)
        #expect(widget.recent.map(\.title) == ["Note 6", "Note 5", "Note 4", "Note 3", "Note 2"])
        #expect(widget.pinned.map(\.title) == ["Note 2"])
        try home.restart()   // locked since start: titles unreadable, counts still there
        #expect(try home.notes.widgetCounts(account: .local).notes == 7)
        #expect(throws: NotesError.contentUnavailable) { try home.notes.widget(account: .local) }
    }
}
