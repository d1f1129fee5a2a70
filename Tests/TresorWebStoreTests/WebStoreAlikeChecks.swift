import Foundation
import Testing
import TresorNotesDomain

// Where the two stores could answer differently and a client would notice: each check pins the
// one behaviour `WebStore` documents (docs/ARCHITECTURE.md, "The web storage boundary"). A
// revision changes whenever what another device must fetch again changes; a change is announced
// whenever it changes what a client shows.
extension WebStoreCheck {
    static let alike: [WebStoreCheck] = [
        WebStoreCheck(name: "of eight password changes made at once from one current password, exactly one is kept") { store, _ in
            let account = try await registered(store, "ike")
            let kept = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await store.changePassword(
                            account: account.id, current: password("ike-password-1"), to: password("ike-password-new-\(index)")) ? index : nil
                    }
                }
                return try await group.reduce(into: [Int]()) { if let index = $1 { $0.append(index) } }
            }
            #expect(kept.count == 1)
            for index in 0..<8 {
                let signedIn = try await store.authenticate(name: "ike", password: password("ike-password-new-\(index)")) != nil
                #expect(signedIn == kept.contains(index))
            }
        },
        WebStoreCheck(
            name: "sharing and unsharing count the note's revision up, announced with it; an edit from before still merges",
            hearing: {
                store, _, heard in
                let owner = try await registered(store, "abe")
                _ = try await registered(store, "bo")
                let leaver = try await registered(store, "cy")
                let note = try await store.createNote(NoteDraft(title: "Shared list", body: "one"), account: owner.id, quota: nil)
                _ = try await store.share(note: note.id, with: "bo", by: owner.id)
                let first = try await store.summary(ofNote: note.id).revision
                #expect(first > note.revision)
                _ = try await store.share(note: note.id, with: "cy", by: owner.id)
                let second = try await store.summary(ofNote: note.id).revision
                #expect(second > first)
                try await store.unshare(note: note.id, participant: "bo", by: owner.id)
                let third = try await store.summary(ofNote: note.id).revision
                #expect(third > second)
                try await store.unshare(note: note.id, participant: "cy", by: leaver.id)
                let fourth = try await store.summary(ofNote: note.id).revision
                #expect(fourth > third)
                #expect(try await heard.hear { $0.kind == .shared && $0.noteID == note.id && $0.revision == second })
                #expect(try await heard.hear { $0.kind == .unshared && $0.noteID == note.id && $0.revision == fourth })
                // Sharing changed no content: an edit made before it merges, nothing lost.
                let outcome = try await store.saveNote(
                    note.id, NoteChanges(body: "one\ntwo", base: NoteBase(revision: note.revision, body: "one")), by: owner.id, quota: nil)
                #expect(outcome.kind == .merged && outcome.note.revision > fourth)
                #expect(try await store.openNote(note.id).body == "one\ntwo")
            }),
        WebStoreCheck(
            name: "a note re-wrapped under the current passphrase counts its revision up and is announced as changed",
            hearing: {
                store, _, heard in
                let account = try await registered(store, "dee")
                let first = Data(repeating: 0x26, count: 32), second = Data(repeating: 0x27, count: 32), noteProof = Data(repeating: 0x63, count: 32)
                try await store.setPassphrase(try material(store, proof: first, seed: 20), hint: nil, account: account.id)
                let old = try #require(try await store.passphraseRecord(account: account.id))
                let note = try await store.createNote(NoteDraft(title: "Old lock", body: "x"), account: account.id, quota: nil)
                try await store.lockNote(note.id, sealedBy: lockedBody(old.id, key: 0x46, noteProof: noteProof), proof: first, quota: nil)
                try await store.resetPassphrase(to: try material(store, proof: second, seed: 21), hint: nil, account: account.id)
                let current = try #require(try await store.passphraseRecord(account: account.id))
                let before = try await store.summary(ofNote: note.id).revision
                try await store.rewrap(
                    note.id, proof: PassphraseProof(passphraseID: current.id, proof: second), wrappedKey: Data(repeating: 0x47, count: 24),
                    noteProof: noteProof, earlierProof: nil, quota: nil)
                let after = try await store.summary(ofNote: note.id)
                #expect(after.revision > before && after.lock?.isCurrent == true)
                #expect(try await heard.hear { $0.kind == .changed && $0.noteID == note.id && $0.revision == after.revision })
            }),
        WebStoreCheck(
            name: "a passphrase change counts up the revision of every note it re-wraps, and announces each as changed",
            hearing: {
                store, _, heard in
                let account = try await registered(store, "eve")
                let proof = Data(repeating: 0x28, count: 32), newProof = Data(repeating: 0x29, count: 32)
                try await store.setPassphrase(try material(store, proof: proof, seed: 22), hint: nil, account: account.id)
                let record = try #require(try await store.passphraseRecord(account: account.id))
                var locked: [NoteSummary] = []
                for (index, key) in [UInt8(0x48), 0x49].enumerated() {
                    let note = try await store.createNote(NoteDraft(title: "Vault \(index)", body: "x"), account: account.id, quota: nil)
                    try await store.lockNote(note.id, sealedBy: lockedBody(record.id, key: key), proof: proof, quota: nil)
                    locked.append(try await store.summary(ofNote: note.id))
                }
                let plain = try await store.createNote(NoteDraft(title: "Plain", body: "y"), account: account.id, quota: nil)
                try await store.changePassphrase(
                    proof: PassphraseProof(passphraseID: record.id, proof: proof), to: try material(store, proof: newProof, seed: 23), hint: nil,
                    rewrappedKeys: Dictionary(uniqueKeysWithValues: locked.map { ($0.id, Data(repeating: 0x5a, count: 24)) }), account: account.id)
                for note in locked {
                    let now = try await store.summary(ofNote: note.id).revision
                    #expect(now > note.revision)
                    #expect(try await heard.hear { $0.kind == .changed && $0.noteID == note.id && $0.revision == now })
                }
                #expect(try await store.summary(ofNote: plain.id).revision == plain.revision)
            }),
        WebStoreCheck(
            name: "a note in Recently Deleted is not locked, edited, re-wrapped, or given or relieved of an attachment (restore it first)"
        ) { store, _ in
            let account = try await registered(store, "fox")
            let first = Data(repeating: 0x2a, count: 32), second = Data(repeating: 0x2b, count: 32), noteProof = Data(repeating: 0x64, count: 32)
            try await store.setPassphrase(try material(store, proof: first, seed: 24), hint: nil, account: account.id)
            let old = try #require(try await store.passphraseRecord(account: account.id))
            let note = try await store.createNote(NoteDraft(title: "Binned", body: "text"), account: account.id, quota: nil)
            let upload = try await store.beginAttachment(to: note.id, kind: .file, name: "kept.txt")
            try await upload.append(Data("kept".utf8))
            let attachment = try await upload.finish(quota: nil)
            let earlier = try await store.createNote(NoteDraft(title: "Old lock", body: "x"), account: account.id, quota: nil)
            try await store.lockNote(earlier.id, sealedBy: lockedBody(old.id, key: 0x4b, noteProof: noteProof), proof: first, quota: nil)
            try await store.resetPassphrase(to: try material(store, proof: second, seed: 25), hint: nil, account: account.id)
            let current = try #require(try await store.passphraseRecord(account: account.id))
            let proof = PassphraseProof(passphraseID: current.id, proof: second)
            try await store.moveToRecentlyDeleted(note.id)
            try await store.moveToRecentlyDeleted(earlier.id)
            let deleted = try await store.summary(ofNote: note.id), deletedLocked = try await store.summary(ofNote: earlier.id)
            // Refused as deleted before anything else is looked at (here: an attachment that cannot be locked).
            var client = lockedBody(current.id, key: 0x4a)
            client.attachmentChunks = [attachment.id: [pattern(4 + 28)]]
            guard case .invalid = await failure({ try await store.lockNote(note.id, sealedBy: client, proof: second, quota: nil) }) else {
                Issue.record("a note in Recently Deleted was locked, or refused for another reason first")
                return
            }
            guard case .invalid = await failure({ _ = try await store.saveNote(note.id, NoteChanges(body: "new"), by: account.id, quota: nil) })
            else {
                Issue.record("a note in Recently Deleted was edited")
                return
            }
            guard case .invalid = await failure({ _ = try await store.beginAttachment(to: note.id, kind: .file, name: "late.txt") }) else {
                Issue.record("an attachment was begun on a note in Recently Deleted")
                return
            }
            guard
                case .invalid = await failure({
                    try await store.removeAttachment(attachment.id, of: note.id, by: .browser(noteProof: nil, passphraseProof: nil))
                })
            else {
                Issue.record("an attachment was removed from a note in Recently Deleted")
                return
            }
            guard
                case .invalid = await failure({
                    try await store.rewrap(
                        earlier.id, proof: proof, wrappedKey: Data(repeating: 0x4c, count: 24), noteProof: noteProof, earlierProof: nil, quota: nil)
                })
            else {
                Issue.record("a note in Recently Deleted was re-wrapped")
                return
            }
            #expect(try await store.summary(ofNote: note.id) == deleted)
            #expect(try await store.summary(ofNote: earlier.id) == deletedLocked)
            #expect(try await store.listedAttachments(ofNote: note.id).map(\.id) == [attachment.id])
            // Restored, each goes through.
            _ = try await store.restoreNote(note.id)
            _ = try await store.restoreNote(earlier.id)
            try await store.removeAttachment(attachment.id, of: note.id, by: .browser(noteProof: nil, passphraseProof: nil))
            try await store.lockNote(note.id, sealedBy: lockedBody(current.id, key: 0x4a), proof: second, quota: nil)
            #expect(try await store.summary(ofNote: note.id).isLocked)
            try await store.rewrap(
                earlier.id, proof: proof, wrappedKey: Data(repeating: 0x4c, count: 24), noteProof: noteProof, earlierProof: nil, quota: nil)
            #expect(try await store.summary(ofNote: earlier.id).lock?.isCurrent == true)
        },
        WebStoreCheck(name: "search ranks more of the words in the title first, then the most recently modified; text without a word is refused") {
            store, clock in
            let owner = try await registered(store, "gia")
            func create(_ title: String, _ body: String) async throws -> String {
                clock.advance(by: 1)
                let note = try await store.createNote(NoteDraft(title: title, body: body), account: owner.id, quota: nil)
                return note.id
            }
            let inBodyOldest = try await create("Garden", "tomato plan")
            let bothInTitle = try await create("Tomato plan", "water daily")
            let oneInTitle = try await create("Tomatoes", "plan for the garden")
            let inBodyNewest = try await create("Ideas", "a tomato plan, and a long body that mentions tomato plan twice: tomato plan")
            #expect(try await store.search("tomato plan", account: owner.id).map(\.id) == [bothInTitle, oneInTitle, inBodyNewest, inBodyOldest])
            clock.advance(by: 1)
            _ = try await store.saveNote(inBodyOldest, NoteChanges(body: "tomato plan, revised"), by: owner.id, quota: nil)
            #expect(try await store.search("Plan TOMATO", account: owner.id).map(\.id) == [bothInTitle, oneInTitle, inBodyOldest, inBodyNewest])
            guard case .invalid = await failure({ _ = try await store.search("?! …", account: owner.id) }) else {
                Issue.record("a search without a word was run")
                return
            }
        },
        WebStoreCheck(
            name: "deleting a folder is announced as a folder change, and each note it moves out as changed with its revision",
            hearing: {
                store, _, heard in
                let owner = try await registered(store, "hob")
                let folder = try await store.createFolder(named: "Work", account: owner.id)
                let kept = try await store.createNote(NoteDraft(title: "Plan", body: "q4", folder: "Work"), account: owner.id, quota: nil)
                let binned = try await store.createNote(NoteDraft(title: "Old plan", body: "q3", folder: "Work"), account: owner.id, quota: nil)
                try await store.moveToRecentlyDeleted(binned.id)
                let before = try await store.summary(ofNote: kept.id).revision
                let mark = heard.changes.count
                try await store.deleteFolder(id: folder.id, account: owner.id)
                let moved = try await store.summary(ofNote: kept.id)
                #expect(moved.folder == nil && moved.revision > before)
                #expect(try await heard.hear(after: mark) { $0.kind == .folders && $0.accounts == [owner.id] })
                #expect(try await heard.hear(after: mark) { $0.kind == .changed && $0.noteID == kept.id && $0.revision == moved.revision })
                #expect(try await store.restoreNote(binned.id).folder == nil)
                #expect(try await store.folders(account: owner.id).isEmpty)
            }),
    ]
}
