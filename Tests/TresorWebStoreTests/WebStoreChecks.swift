import Foundation
import Testing
import TresorNotesDomain

// The `WebStore` checks beyond accounts and the first notes: each one names answers a backend
// that got the rule wrong would give differently (docs/FORMAT.md, "Revisions and merges",
// "Recently Deleted"; docs/WEB.md).
extension WebStoreCheck {
    /// The error `body` throws (nil when it returns, or throws something else).
    static func failure(_ body: () async throws -> Void) async -> NotesError? {
        do {
            try await body()
            return nil
        } catch let error as NotesError {
            return error
        } catch {
            Issue.record("not a NotesError: \(error)")
            return nil
        }
    }

    /// Bytes that differ from position to position (a shifted or dropped chunk shows).
    static func pattern(_ count: Int, seed: UInt8 = 7) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 11 &+ Int(seed)) })
    }

    static func registered(_ store: any WebStore, _ name: String) async throws -> WebAccount {
        try await store.registerAccount(name: name, password: password("\(name)-password-1"))
    }

    static let revisions: [WebStoreCheck] = [
        WebStoreCheck(
            name: "a save from an old revision merges other lines, and keeps the same lines changed as a conflict copy named after its editor"
        ) {
            store, _ in
            let owner = try await registered(store, "rhea")
            let participant = try await registered(store, "sol")
            let note = try await store.createNote(NoteDraft(title: "List", body: "one\ntwo\nthree"), account: owner.id, quota: nil)
            _ = try await store.share(note: note.id, with: "sol", by: owner.id)
            let shared = try await store.summary(ofNote: note.id)
            let base = NoteBase(revision: shared.revision, title: "List", body: "one\ntwo\nthree")
            let first = try await store.saveNote(note.id, NoteChanges(body: "ONE\ntwo\nthree", base: base), by: owner.id, quota: nil)
            #expect(first.kind == .saved)
            #expect(first.note.revision > shared.revision)
            // The same base, another line: both edits are kept.
            let second = try await store.saveNote(note.id, NoteChanges(body: "one\ntwo\nTHREE", base: base), by: participant.id, quota: nil)
            #expect(second.kind == .merged)
            #expect(second.mergedBody == "ONE\ntwo\nTHREE")
            #expect(second.note.revision > first.note.revision)
            #expect(try await store.openNote(note.id).body == "ONE\ntwo\nTHREE")
            // The same base, the first line again, otherwise: never an overwrite.
            let third = try await store.saveNote(note.id, NoteChanges(body: "uno\ntwo\nthree", base: base), by: participant.id, quota: nil)
            #expect(third.kind == .conflictCopy)
            let copy = try #require(third.conflictCopy)
            #expect(copy.title == "List (conflict copy from sol)")
            #expect(try await store.openNote(copy.id).body == "uno\ntwo\nthree")
            #expect(try await store.openNote(note.id).body == "ONE\ntwo\nTHREE")
            #expect(third.note.revision == second.note.revision)
            // The copy is the owner's, shared as the note is.
            #expect(try await store.access(toNote: copy.id, for: owner.id, includingDeleted: false) == .owner)
            #expect(try await store.access(toNote: copy.id, for: participant.id, includingDeleted: false) == .participant)
            #expect(Set(try await store.notes(account: owner.id, folderID: nil).map(\.id)) == [note.id, copy.id])
            // A title changed on both sides differently is a conflict too.
            let now = try await store.summary(ofNote: note.id)
            _ = try await store.saveNote(
                note.id, NoteChanges(title: "Shopping", base: NoteBase(revision: now.revision, title: "List")), by: owner.id, quota: nil)
            let late = try await store.saveNote(
                note.id, NoteChanges(title: "Errands", base: NoteBase(revision: now.revision, title: "List")), by: owner.id, quota: nil)
            #expect(late.kind == .conflictCopy)
            #expect(late.conflictCopy?.title == "Errands (conflict copy from rhea)")
            #expect(try await store.summary(ofNote: note.id).title == "Shopping")
        },
        WebStoreCheck(name: "twenty concurrent saves from one old revision each end merged or as a conflict copy, none lost") { store, _ in
            let owner = try await registered(store, "tess")
            let lines = (0..<20).map { "line \($0)" }
            let note = try await store.createNote(NoteDraft(title: "Many", body: lines.joined(separator: "\n")), account: owner.id, quota: nil)
            let base = NoteBase(revision: note.revision, body: lines.joined(separator: "\n"))
            let kinds = try await withThrowingTaskGroup(of: NoteSaveOutcome.Kind.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        var edited = lines
                        edited[index] = "LINE \(index)"
                        return try await store.saveNote(
                            note.id, NoteChanges(body: edited.joined(separator: "\n"), base: base), by: owner.id, quota: nil
                        ).kind
                    }
                }
                return try await group.reduce(into: [NoteSaveOutcome.Kind]()) { $0.append($1) }
            }
            // Each save changed a line of its own: every one is merged (one saved), and the body holds all.
            #expect(kinds.filter { $0 == .saved }.count == 1)
            #expect(kinds.filter { $0 == .merged }.count == 19)
            #expect(try await store.openNote(note.id).body == (0..<20).map { "LINE \($0)" }.joined(separator: "\n"))
        },
    ]

    static let recentlyDeleted: [WebStoreCheck] = [
        WebStoreCheck(name: "Recently Deleted: a note moves there, comes back, is deleted for good, emptied, and expires after 30 days") {
            store, clock in
            let owner = try await registered(store, "uma")
            let participant = try await registered(store, "vic")
            let notes = try await (0..<4).asyncMap {
                try await store.createNote(NoteDraft(title: "Note \($0)", body: "text \($0)"), account: owner.id, quota: nil)
            }
            _ = try await store.share(note: notes[0].id, with: "vic", by: owner.id)
            try await store.moveToRecentlyDeleted(notes[0].id)
            #expect(!(try await store.notes(account: owner.id, folderID: nil).map(\.id)).contains(notes[0].id))
            #expect(try await store.notesShared(with: participant.id).isEmpty)
            let deleted = try await store.recentlyDeleted(account: owner.id)
            #expect(deleted.map(\.id) == [notes[0].id])
            #expect(deleted[0].deleted != nil)
            #expect(try await store.access(toNote: notes[0].id, for: owner.id, includingDeleted: true) == .owner)
            guard case .invalid = await failure({ _ = try await store.access(toNote: notes[0].id, for: owner.id, includingDeleted: false) }) else {
                Issue.record("a deleted note is restored first")
                return
            }
            guard case .notFound = await failure({ _ = try await store.access(toNote: notes[0].id, for: participant.id, includingDeleted: true) })
            else {
                Issue.record("a deleted note is its owner's alone")
                return
            }
            guard case .invalid = await failure({ try await store.moveToRecentlyDeleted(notes[0].id) }) else {
                Issue.record("moved twice")
                return
            }
            guard case .invalid = await failure({ try await store.deleteForGood(notes[1].id) }) else {
                Issue.record("a note not in Recently Deleted was deleted for good")
                return
            }
            let restored = try await store.restoreNote(notes[0].id)
            #expect(restored.deleted == nil)
            #expect(restored.sharing?.participants == ["vic"])
            #expect(try await store.notesShared(with: participant.id).map(\.id) == [notes[0].id])
            guard case .invalid = await failure({ _ = try await store.restoreNote(notes[0].id) }) else {
                Issue.record("restored twice")
                return
            }
            try await store.moveToRecentlyDeleted(notes[0].id)
            try await store.deleteForGood(notes[0].id)
            guard case .notFound = await failure({ _ = try await store.summary(ofNote: notes[0].id) }) else {
                Issue.record("a note deleted for good is still there")
                return
            }
            try await store.moveToRecentlyDeleted(notes[1].id)
            try await store.moveToRecentlyDeleted(notes[2].id)
            #expect(try await store.emptyRecentlyDeleted(account: owner.id) == 2)
            #expect(try await store.recentlyDeleted(account: owner.id).isEmpty)
            #expect(try await store.notes(account: owner.id, folderID: nil).map(\.id) == [notes[3].id])
            try await store.moveToRecentlyDeleted(notes[3].id)
            clock.advance(by: 29 * 86_400)
            #expect(try await store.deleteExpiredNotes() == 0)
            #expect(try await store.recentlyDeleted(account: owner.id).map(\.id) == [notes[3].id])
            clock.advance(by: 2 * 86_400)
            #expect(try await store.deleteExpiredNotes() == 1)
            #expect(try await store.recentlyDeleted(account: owner.id).isEmpty)
            let counts = try await store.widgetCounts(account: owner.id)
            #expect(counts.notes == 0 && counts.locked == 0)
        }
    ]

    static let sharing: [WebStoreCheck] = [
        WebStoreCheck(name: "sharing: a participant reads and edits, cannot remove others, leaves; an unshared note is not found") { store, _ in
            let owner = try await registered(store, "wes")
            let first = try await registered(store, "xia")
            let second = try await registered(store, "yan")
            let stranger = try await registered(store, "zed")
            let note = try await store.createNote(NoteDraft(title: "Trip", body: "tickets"), account: owner.id, quota: nil)
            guard case .notFound = await failure({ _ = try await store.share(note: note.id, with: "nobody-here", by: owner.id) }) else {
                Issue.record("shared with an unknown name")
                return
            }
            guard case .invalid = await failure({ _ = try await store.share(note: note.id, with: "wes", by: owner.id) }) else {
                Issue.record("shared with its owner")
                return
            }
            _ = try await store.share(note: note.id, with: "xia", by: owner.id)
            let info = try await store.share(note: note.id, with: "yan", by: owner.id)
            #expect(info.owner == "wes")
            #expect(Set(info.participants) == ["xia", "yan"])
            #expect(try await store.access(toNote: note.id, for: first.id, includingDeleted: false) == .participant)
            guard case .forbidden = await failure({ _ = try await store.share(note: note.id, with: "zed", by: first.id) }) else {
                Issue.record("a participant shared the note")
                return
            }
            _ = try await store.saveNote(note.id, NoteChanges(body: "tickets\nhotel"), by: first.id, quota: nil)
            #expect(try await store.openNote(note.id).body == "tickets\nhotel")
            guard case .forbidden = await failure({ try await store.unshare(note: note.id, participant: "yan", by: first.id) }) else {
                Issue.record("a participant removed another")
                return
            }
            guard case .notFound = await failure({ try await store.unshare(note: note.id, participant: "xia", by: stranger.id) }) else {
                Issue.record("a stranger reached the note")
                return
            }
            // A participant leaves.
            try await store.unshare(note: note.id, participant: "xia", by: first.id)
            guard case .notFound = await failure({ _ = try await store.access(toNote: note.id, for: first.id, includingDeleted: false) }) else {
                Issue.record("a participant who left still sees the note")
                return
            }
            #expect(try await store.notesShared(with: first.id).isEmpty)
            guard case .notFound = await failure({ try await store.unshare(note: note.id, participant: "xia", by: owner.id) }) else {
                Issue.record("removed twice")
                return
            }
            // The owner removes the last one: the note is no one's but the owner's.
            try await store.unshare(note: note.id, participant: "yan", by: owner.id)
            guard case .notFound = await failure({ _ = try await store.access(toNote: note.id, for: second.id, includingDeleted: false) }) else {
                Issue.record("an unshared participant still sees the note")
                return
            }
            #expect(try await store.summary(ofNote: note.id).sharing == nil)
        }
    ]

    static let folders: [WebStoreCheck] = [
        WebStoreCheck(name: "folders: one per name, counted, and deleting one moves its notes out") { store, _ in
            let owner = try await registered(store, "ada")
            let other = try await registered(store, "bea")
            let work = try await store.createFolder(named: "Work", account: owner.id)
            #expect(try await store.createFolder(named: "Work", account: owner.id).id == work.id)
            let note = try await store.createNote(NoteDraft(title: "Plan", body: "q3", folder: "Work"), account: owner.id, quota: nil)
            let loose = try await store.createNote(NoteDraft(title: "Loose", body: ""), account: owner.id, quota: nil)
            #expect(try await store.folders(account: owner.id) == [Folder(id: work.id, name: "Work", noteCount: 1)])
            #expect(try await store.folders(account: other.id).isEmpty)
            #expect(try await store.notes(account: owner.id, folderID: work.id).map(\.id) == [note.id])
            guard case .notFound = await failure({ try await store.deleteFolder(id: work.id, account: other.id) }) else {
                Issue.record("another account deleted the folder")
                return
            }
            guard case .notFound = await failure({ _ = try await store.notes(account: other.id, folderID: work.id) }) else {
                Issue.record("another account listed the folder")
                return
            }
            try await store.deleteFolder(id: work.id, account: owner.id)
            #expect(try await store.folders(account: owner.id).isEmpty)
            #expect(try await store.summary(ofNote: note.id).folder == nil)
            #expect(Set(try await store.notes(account: owner.id, folderID: nil).map(\.id)) == [note.id, loose.id])
            guard case .notFound = await failure({ try await store.deleteFolder(id: work.id, account: owner.id) }) else {
                Issue.record("deleted twice")
                return
            }
            // A folder named in an edit is made; moving out is `.some(nil)`.
            _ = try await store.saveNote(loose.id, NoteChanges(folder: .some("Home")), by: owner.id, quota: nil)
            #expect(try await store.summary(ofNote: loose.id).folder == "Home")
            _ = try await store.saveNote(loose.id, NoteChanges(folder: .some(nil)), by: owner.id, quota: nil)
            #expect(try await store.summary(ofNote: loose.id).folder == nil)
            #expect(try await store.folders(account: owner.id).map(\.noteCount) == [0])
        },
        WebStoreCheck(name: "pinning and moving a note leave its modified time (and the list's order) as they were; an edit changes it") {
            store, clock in
            let owner = try await registered(store, "cy")
            let older = try await store.createNote(NoteDraft(title: "Older", body: "a"), account: owner.id, quota: nil)
            clock.advance(by: 60)
            let newer = try await store.createNote(NoteDraft(title: "Newer", body: "b"), account: owner.id, quota: nil)
            clock.advance(by: 60)
            let modified = try await store.summary(ofNote: older.id).modified
            _ = try await store.saveNote(older.id, NoteChanges(folder: .some("Archive")), by: owner.id, quota: nil)
            _ = try await store.saveNote(older.id, NoteChanges(isPinned: true), by: owner.id, quota: nil)
            _ = try await store.saveNote(older.id, NoteChanges(isPinned: false), by: owner.id, quota: nil)
            let moved = try await store.summary(ofNote: older.id)
            #expect(moved.folder == "Archive" && !moved.isPinned)
            #expect(moved.modified == modified, "pinning or moving counted as an edit")
            #expect(try await store.notes(account: owner.id, folderID: nil).map(\.id) == [newer.id, older.id])
            let edited = try await store.saveNote(older.id, NoteChanges(body: "a, again"), by: owner.id, quota: nil)
            #expect(edited.note.modified > modified)
            #expect(try await store.notes(account: owner.id, folderID: nil).map(\.id) == [older.id, newer.id])
        },
        WebStoreCheck(name: "locking a note leaves its modified time, and its place in the list, as they were") { store, clock in
            let owner = try await registered(store, "dee")
            let proof = Data(repeating: 0x33, count: 32)
            try await store.setPassphrase(try material(store, proof: proof, seed: 6), hint: nil, account: owner.id)
            let record = try #require(try await store.passphraseRecord(account: owner.id))
            let older = try await store.createNote(NoteDraft(title: "Older", body: "a"), account: owner.id, quota: nil)
            clock.advance(by: 60)
            let newer = try await store.createNote(NoteDraft(title: "Newer", body: "b"), account: owner.id, quota: nil)
            clock.advance(by: 60)
            let modified = try await store.summary(ofNote: older.id).modified
            try await store.lockNote(older.id, sealedBy: lockedBody(record.id, key: 0x43), proof: proof, quota: nil)
            let locked = try await store.summary(ofNote: older.id)
            #expect(locked.lock != nil)
            #expect(locked.modified == modified, "locking counted as an edit")
            #expect(try await store.notes(account: owner.id, folderID: nil).map(\.id) == [newer.id, older.id])
        },
    ]

    /// Passphrase material as a browser makes it, for proof `proof`.
    static func material(_ store: any WebStore, proof: Data, seed: UInt8) throws -> PassphraseMaterial {
        try PassphraseMaterial(
            salt: Data(repeating: seed, count: 16), iterations: store.minimumIterations, verifier: Data(repeating: seed &+ 1, count: 24),
            proofHash: LockedNoteShape.proofHash(proof))
    }

    static let passphrases: [WebStoreCheck] = [
        WebStoreCheck(name: "a passphrase: set once, wrong entries counted with the hint from the third and a wait from the fifth") {
            store, clock in
            let account = try await registered(store, "cai")
            #expect(try await store.passphraseStatus(account: account.id).isSet == false)
            #expect(try await store.passphraseRecord(account: account.id) == nil)
            guard case .noPassphrase = await failure({ _ = try await store.passphraseHint(account: account.id) }) else {
                Issue.record("a hint without a passphrase")
                return
            }
            let proof = Data(repeating: 0x11, count: 32), wrong = Data(repeating: 0x22, count: 32)
            try await store.setPassphrase(try material(store, proof: proof, seed: 1), hint: "the usual", account: account.id)
            guard
                case .passphraseAlreadySet = await failure({
                    try await store.setPassphrase(try material(store, proof: proof, seed: 2), hint: nil, account: account.id)
                })
            else {
                Issue.record("set twice")
                return
            }
            let record = try #require(try await store.passphraseRecord(account: account.id))
            #expect(record.hasProof && record.verifier == nil && record.hasHint && record.generation == 1)
            #expect(record.salt == Data(repeating: 1, count: 16))
            #expect(try await store.passphraseHint(account: account.id) == "the usual")
            let right = PassphraseProof(passphraseID: record.id, proof: proof), bad = PassphraseProof(passphraseID: record.id, proof: wrong)
            #expect(try await store.enterPassphrase(right, establish: false, account: account.id).failedAttempts == 0)
            var answers: [NotesError?] = []
            for _ in 0..<5 { answers.append(await failure({ _ = try await store.enterPassphrase(bad, establish: false, account: account.id) })) }
            #expect(answers[0] == .wrongPassphrase(failedAttempts: 1, hint: nil, retryAfterSeconds: nil))
            #expect(answers[1] == .wrongPassphrase(failedAttempts: 2, hint: nil, retryAfterSeconds: nil))
            #expect(answers[2] == .wrongPassphrase(failedAttempts: 3, hint: "the usual", retryAfterSeconds: nil))
            #expect(answers[3] == .wrongPassphrase(failedAttempts: 4, hint: "the usual", retryAfterSeconds: nil))
            #expect(answers[4] == .wrongPassphrase(failedAttempts: 5, hint: "the usual", retryAfterSeconds: 60))
            // While the wait runs, even the right passphrase is not checked.
            guard
                case .throttled(let wait, let hint) = await failure({
                    _ = try await store.enterPassphrase(right, establish: false, account: account.id)
                })
            else {
                Issue.record("an entry during the wait was checked")
                return
            }
            #expect((1...60).contains(wait))
            #expect(hint == "the usual")
            let status = try await store.passphraseStatus(account: account.id)
            #expect(status.failedAttempts == 5)
            #expect(status.retryAfterSeconds != nil)
            clock.advance(by: 61)
            #expect(try await store.enterPassphrase(right, establish: false, account: account.id).failedAttempts == 0)
            #expect(try await store.passphraseStatus(account: account.id).failedAttempts == 0)
            // Another account's passphrase is nobody's.
            let other = try await registered(store, "dov")
            guard case .notFound = await failure({ _ = try await store.enterPassphrase(right, establish: false, account: other.id) }) else {
                Issue.record("another account's passphrase answered")
                return
            }
            // A reset makes generation 2, current from now on.
            try await store.resetPassphrase(to: try material(store, proof: wrong, seed: 3), hint: nil, account: account.id)
            let reset = try #require(try await store.passphraseRecord(account: account.id))
            #expect(reset.generation == 2 && reset.id != record.id && !reset.hasHint)
        },
        WebStoreCheck(name: "of eight concurrent wrong entries, five are checked and counted one by one, and the rest wait") { store, _ in
            let account = try await registered(store, "cora")
            let proof = Data(repeating: 0x18, count: 32)
            try await store.setPassphrase(try material(store, proof: proof, seed: 10), hint: nil, account: account.id)
            let record = try #require(try await store.passphraseRecord(account: account.id))
            let bad = PassphraseProof(passphraseID: record.id, proof: Data(repeating: 0x19, count: 32))
            let answers = await withTaskGroup(of: NotesError?.self) { group in
                for _ in 0..<8 {
                    group.addTask { await failure({ _ = try await store.enterPassphrase(bad, establish: false, account: account.id) }) }
                }
                return await group.reduce(into: [NotesError?]()) { $0.append($1) }
            }
            var counted: [Int] = [], waited = 0
            for answer in answers {
                switch answer {
                case .wrongPassphrase(let failures, _, _)?: counted.append(failures)
                case .throttled?: waited += 1
                default: Issue.record("unexpected answer \(String(describing: answer))")
                }
            }
            #expect(counted.sorted() == [1, 2, 3, 4, 5])
            #expect(waited == 3)
            #expect(try await store.passphraseStatus(account: account.id).failedAttempts == 5)
        },
        WebStoreCheck(name: "a passphrase change re-wraps every locked note's key in one step, or nothing") { store, _ in
            let account = try await registered(store, "eli")
            let proof = Data(repeating: 0x31, count: 32), newProof = Data(repeating: 0x32, count: 32)
            try await store.setPassphrase(try material(store, proof: proof, seed: 4), hint: "old hint", account: account.id)
            let record = try #require(try await store.passphraseRecord(account: account.id))
            let note = try await store.createNote(NoteDraft(title: "Vault", body: "combination"), account: account.id, quota: nil)
            try await store.lockNote(note.id, sealedBy: lockedBody(record.id, key: 0x41), proof: proof, quota: nil)
            let current = PassphraseProof(passphraseID: record.id, proof: proof)
            let newMaterial = try material(store, proof: newProof, seed: 5)
            let rewrapped = Data(repeating: 0x51, count: 24)
            guard
                case .conflict = await failure({
                    try await store.changePassphrase(
                        proof: current, to: newMaterial, hint: .some("new hint"), rewrappedKeys: [:], account: account.id)
                })
            else {
                Issue.record("a change left a locked note out")
                return
            }
            guard
                case .wrongPassphrase(1, _, _) = await failure({
                    try await store.changePassphrase(
                        proof: PassphraseProof(passphraseID: record.id, proof: newProof), to: newMaterial, hint: nil,
                        rewrappedKeys: [note.id: rewrapped],
                        account: account.id)
                })
            else {
                Issue.record("a change with a wrong proof was not counted")
                return
            }
            #expect(try await store.wrappedKey(ofNote: note.id, proof: current, account: account.id) == Data(repeating: 0x41, count: 24))
            try await store.changePassphrase(
                proof: current, to: newMaterial, hint: .some("new hint"), rewrappedKeys: [note.id: rewrapped], account: account.id)
            let changed = try #require(try await store.passphraseRecord(account: account.id))
            #expect(changed.id == record.id && changed.salt == newMaterial.salt)
            #expect(try await store.passphraseHint(account: account.id) == "new hint")
            let now = PassphraseProof(passphraseID: record.id, proof: newProof)
            #expect(try await store.wrappedKey(ofNote: note.id, proof: now, account: account.id) == rewrapped)
            #expect(try await store.lockedRecord(ofNote: note.id).salt == newMaterial.salt)
            guard case .wrongPassphrase = await failure({ _ = try await store.wrappedKey(ofNote: note.id, proof: current, account: account.id) })
            else {
                Issue.record("the old passphrase still opens the note")
                return
            }
        },
    ]

    /// A body (and no attachments) as a browser seals it: the note key wrapped to `key`s bytes.
    /// A new account `name` with a passphrase whose proof is `proof`, and its passphrase record.
    static func registeredWithPassphrase(_ store: any WebStore, _ name: String, proof: Data, seed: UInt8) async throws -> (
        WebAccount, PassphraseRecord
    ) {
        let account = try await registered(store, name)
        try await store.setPassphrase(try material(store, proof: proof, seed: seed), hint: nil, account: account.id)
        return (account, try #require(try await store.passphraseRecord(account: account.id)))
    }

    static func lockedBody(_ passphraseID: Int64, key: UInt8, noteProof: Data = Data(repeating: 0x61, count: 32)) -> ClientLockedNote {
        ClientLockedNote(
            passphraseID: passphraseID, wrappedKey: Data(repeating: key, count: 24), noteProofHash: LockedNoteShape.proofHash(noteProof),
            iv: Data(repeating: 0x71, count: 12), tag: Data(repeating: 0x72, count: 16), ciphertext: pattern(300, seed: key),
            attachmentChunks: [:])
    }

    static let lockedNotes: [WebStoreCheck] = [
        WebStoreCheck(name: "a note locked in the browser: its plaintext goes, its body is replaced only from the current revision") { store, _ in
            let account = try await registered(store, "fay")
            let proof = Data(repeating: 0x13, count: 32), noteProof = Data(repeating: 0x61, count: 32)
            try await store.setPassphrase(try material(store, proof: proof, seed: 6), hint: nil, account: account.id)
            let record = try #require(try await store.passphraseRecord(account: account.id))
            let note = try await store.createNote(NoteDraft(title: "Secret", body: "pin 1234\nmore"), account: account.id, quota: nil)
            guard
                case .wrongPassphrase = await failure({
                    try await store.lockNote(note.id, sealedBy: lockedBody(record.id, key: 0x42), proof: Data(repeating: 0x14, count: 32), quota: nil)
                })
            else {
                Issue.record("locked with a wrong proof")
                return
            }
            #expect(try await store.openNote(note.id).body == "pin 1234\nmore")
            let client = lockedBody(record.id, key: 0x42)
            try await store.lockNote(note.id, sealedBy: client, proof: proof, quota: nil)
            let locked = try await store.summary(ofNote: note.id)
            #expect(locked.isLocked && locked.lock?.passphraseID == record.id && locked.lock?.isCurrent == true)
            #expect(locked.revision > note.revision)
            guard case .wrongLockState = await failure({ _ = try await store.openNote(note.id) }) else {
                Issue.record("a locked note opened on the server")
                return
            }
            let lockedRecord = try await store.lockedRecord(ofNote: note.id)
            #expect(lockedRecord.ciphertext == client.ciphertext && lockedRecord.iv == client.iv && lockedRecord.tag == client.tag)
            #expect(lockedRecord.hasProof && lockedRecord.wrappedKey == nil)
            #expect(try await store.previews(ofNotes: [note.id], matching: []).isEmpty)
            #expect(try await store.search("pin", account: account.id).isEmpty)
            #expect(try await store.search("secret", account: account.id).map(\.id) == [note.id])
            let counts = try await store.widgetCounts(account: account.id)
            #expect(counts.notes == 1 && counts.locked == 1)
            guard
                case .passphraseRequired = await failure({
                    _ = try await store.saveNote(note.id, NoteChanges(body: "plain"), by: account.id, quota: nil)
                })
            else {
                Issue.record("a locked note's body was saved in the clear")
                return
            }
            let other = try await registered(store, "gil")
            guard case .wrongLockState = await failure({ _ = try await store.share(note: note.id, with: other.name, by: account.id) }) else {
                Issue.record("a locked note was shared")
                return
            }
            let saved = try await store.replaceLockedBody(
                ofNote: note.id, iv: Data(repeating: 0x73, count: 12), tag: Data(repeating: 0x74, count: 16), ciphertext: pattern(310),
                noteProof: noteProof, passphraseProof: nil, baseRevision: locked.revision, quota: nil)
            #expect(saved.revision > locked.revision)
            #expect(try await store.lockedRecord(ofNote: note.id).ciphertext == pattern(310))
            // An edit of the older revision: the browser must merge.
            #expect(
                await failure({
                    _ = try await store.replaceLockedBody(
                        ofNote: note.id, iv: Data(repeating: 0x75, count: 12), tag: Data(repeating: 0x76, count: 16), ciphertext: pattern(320),
                        noteProof: noteProof, passphraseProof: nil, baseRevision: locked.revision, quota: nil)
                }) == .staleRevision(current: saved.revision))
            #expect(try await store.lockedRecord(ofNote: note.id).ciphertext == pattern(310))
            guard
                case .wrongPassphrase(1, _, _) = await failure({
                    _ = try await store.replaceLockedBody(
                        ofNote: note.id, iv: Data(repeating: 0x75, count: 12), tag: Data(repeating: 0x76, count: 16), ciphertext: pattern(320),
                        noteProof: Data(repeating: 0x62, count: 32), passphraseProof: nil, baseRevision: saved.revision, quota: nil)
                })
            else {
                Issue.record("a body replaced without the note's proof")
                return
            }
            // Both versions kept: the browser's edit as the locked conflict copy.
            let copy = try await store.saveLockedConflictCopy(
                ofNote: note.id, iv: Data(repeating: 0x77, count: 12), tag: Data(repeating: 0x78, count: 16), ciphertext: pattern(330),
                noteProof: noteProof, passphraseProof: nil, by: account.id, quota: nil)
            #expect(copy.isLocked && copy.title == "Secret (conflict copy from fay)")
            #expect(try await store.lockedRecord(ofNote: copy.id).ciphertext == pattern(330))
            #expect(try await store.lockedRecord(ofNote: note.id).ciphertext == pattern(310))
            #expect(
                try await store.wrappedKey(ofNote: copy.id, proof: PassphraseProof(passphraseID: record.id, proof: proof), account: account.id)
                    == client.wrappedKey)
        },
        WebStoreCheck(name: "locking takes every attachment's sealed chunks, refuses a kind that cannot be locked and a shared note") { store, _ in
            let proof = Data(repeating: 0x15, count: 32)
            let (account, record) = try await registeredWithPassphrase(store, "gus", proof: proof, seed: 7)
            let note = try await store.createNote(NoteDraft(title: "Photos", body: "two"), account: account.id, quota: nil)
            let plaintext = pattern((1 << 20) + 500_000)
            let image = try await store.beginAttachment(to: note.id, kind: .image, name: "photo.jpg")
            try await image.append(plaintext)
            let info = try await image.finish(quota: nil)
            let document = try await store.beginAttachment(to: note.id, kind: .file, name: "notes.txt")
            try await document.append(Data("plain".utf8))
            let file = try await document.finish(quota: nil)
            // The browser seals each chunk: 1 MiB + 28 bytes, then the rest + 28.
            let chunks = [pattern((1 << 20) + 28, seed: 1), pattern(500_000 + 28, seed: 2)]
            var client = lockedBody(record.id, key: 0x43)
            client.attachmentChunks = [info.id: chunks, file.id: [pattern(5 + 28)]]
            #expect(
                await failure({ try await store.lockNote(note.id, sealedBy: client, proof: proof, quota: nil) })
                    == .attachmentNotLockable(name: "notes.txt", kind: .file))
            try await store.removeAttachment(file.id, of: note.id, by: .browser(noteProof: nil, passphraseProof: nil))
            client.attachmentChunks = [info.id: [chunks[0]]]
            guard case .invalid = await failure({ try await store.lockNote(note.id, sealedBy: client, proof: proof, quota: nil) }) else {
                Issue.record("chunks of the wrong count were taken")
                return
            }
            client.attachmentChunks = [:]
            guard case .conflict = await failure({ try await store.lockNote(note.id, sealedBy: client, proof: proof, quota: nil) }) else {
                Issue.record("an attachment was left out of the lock")
                return
            }
            let other = try await registered(store, "hed")
            _ = try await store.share(note: note.id, with: other.name, by: account.id)
            client.attachmentChunks = [info.id: chunks]
            guard case .wrongLockState = await failure({ try await store.lockNote(note.id, sealedBy: client, proof: proof, quota: nil) }) else {
                Issue.record("a shared note was locked")
                return
            }
            try await store.unshare(note: note.id, participant: other.name, by: account.id)
            try await store.lockNote(note.id, sealedBy: client, proof: proof, quota: nil)
            let reader = try await store.readAttachment(info.id, of: note.id)
            #expect(reader.byteCount == chunks[0].count + chunks[1].count)
            var read = Data()
            while let piece = try await reader.next() { read.append(piece) }
            #expect(read == chunks[0] + chunks[1])
            #expect(try await store.listedAttachments(ofNote: note.id).map(\.name) == ["photo.jpg"])
        },
        WebStoreCheck(name: "a locked note's attachment is removed only with a proof of the note key") { store, _ in
            let proof = Data(repeating: 0x18, count: 32)
            let (account, record) = try await registeredWithPassphrase(store, "gwen", proof: proof, seed: 8)
            let note = try await store.createNote(NoteDraft(title: "Scan", body: "one"), account: account.id, quota: nil)
            let image = try await store.beginAttachment(to: note.id, kind: .image, name: "scan.jpg")
            try await image.append(pattern(500))
            let info = try await image.finish(quota: nil)
            var client = lockedBody(record.id, key: 0x46)
            client.attachmentChunks = [info.id: [pattern(500 + 28, seed: 3)]]
            try await store.lockNote(note.id, sealedBy: client, proof: proof, quota: nil)
            let noProof = await failure { try await store.removeAttachment(info.id, of: note.id, by: .browser(noteProof: nil, passphraseProof: nil)) }
            guard case .invalid = noProof else {
                Issue.record("a locked note's attachment removed without a proof: \(String(describing: noProof))")
                return
            }
            let wrongProof = Data(repeating: 0x62, count: 32)
            let wrong = await failure {
                try await store.removeAttachment(info.id, of: note.id, by: .browser(noteProof: wrongProof, passphraseProof: nil))
            }
            guard case .wrongPassphrase(1, _, _) = wrong else {
                Issue.record("a locked note's attachment removed with a wrong proof: \(String(describing: wrong))")
                return
            }
            #expect(try await store.listedAttachments(ofNote: note.id).map(\.name) == ["scan.jpg"])
            let rightProof = Data(repeating: 0x61, count: 32)
            try await store.removeAttachment(info.id, of: note.id, by: .browser(noteProof: rightProof, passphraseProof: nil))
            #expect(try await store.listedAttachments(ofNote: note.id).isEmpty)
        },
        WebStoreCheck(name: "a note of an earlier passphrase is re-wrapped under the current one with both proofs") { store, _ in
            let account = try await registered(store, "ida")
            let first = Data(repeating: 0x16, count: 32), second = Data(repeating: 0x17, count: 32), noteProof = Data(repeating: 0x61, count: 32)
            try await store.setPassphrase(try material(store, proof: first, seed: 8), hint: "first hint", account: account.id)
            let old = try #require(try await store.passphraseRecord(account: account.id))
            let note = try await store.createNote(NoteDraft(title: "Old lock", body: "x"), account: account.id, quota: nil)
            try await store.lockNote(note.id, sealedBy: lockedBody(old.id, key: 0x44, noteProof: noteProof), proof: first, quota: nil)
            try await store.resetPassphrase(to: try material(store, proof: second, seed: 9), hint: nil, account: account.id)
            let current = try #require(try await store.passphraseRecord(account: account.id))
            let before = try #require(try await store.summary(ofNote: note.id).lock)
            #expect(before.passphraseID == old.id && !before.isCurrent && before.generation == 1 && before.hint == "first hint")
            let proof = PassphraseProof(passphraseID: current.id, proof: second)
            guard
                case .wrongPassphrase = await failure({
                    try await store.rewrap(
                        note.id, proof: proof, wrappedKey: Data(repeating: 0x45, count: 24), noteProof: Data(repeating: 0x62, count: 32),
                        earlierProof: nil, quota: nil)
                })
            else {
                Issue.record("re-wrapped without the note's proof")
                return
            }
            guard
                case .conflict = await failure({
                    try await store.rewrap(
                        note.id, proof: PassphraseProof(passphraseID: old.id, proof: first), wrappedKey: Data(repeating: 0x45, count: 24),
                        noteProof: noteProof, earlierProof: nil, quota: nil)
                })
            else {
                Issue.record("re-wrapped under a passphrase that is not current")
                return
            }
            try await store.rewrap(
                note.id, proof: proof, wrappedKey: Data(repeating: 0x45, count: 24), noteProof: noteProof, earlierProof: nil, quota: nil)
            let after = try #require(try await store.summary(ofNote: note.id).lock)
            #expect(after.passphraseID == current.id && after.isCurrent && after.generation == 2)
            #expect(try await store.wrappedKey(ofNote: note.id, proof: proof, account: account.id) == Data(repeating: 0x45, count: 24))
            #expect(try await store.lockedRecord(ofNote: note.id).salt == Data(repeating: 9, count: 16))
        },
    ]

    static let widget: [WebStoreCheck] = [
        WebStoreCheck(name: "the widget: counts, the five most recent and the pinned; previews skip the title") { store, clock in
            let owner = try await registered(store, "jay")
            var ids: [String] = []
            for index in 0..<7 {
                clock.advance(by: 1)
                ids.append(
                    try await store.createNote(
                        NoteDraft(title: "Note \(index)", body: "Note \(index)\n\nline \(index)", isPinned: index < 2), account: owner.id, quota: nil
                    ).id)
            }
            clock.advance(by: 1)
            try await store.moveToRecentlyDeleted(ids[6])
            let widget = try await store.widget(account: owner.id)
            #expect(widget.noteCount == 6 && widget.lockedNoteCount == 0)
            #expect(widget.recent.map(\.title) == ["Note 5", "Note 4", "Note 3", "Note 2", "Note 1"])
            #expect(widget.pinned.map(\.title) == ["Note 1", "Note 0"])
            #expect(
                try await store.notes(account: owner.id, folderID: nil).map(\.title) == ["Note 1", "Note 0", "Note 5", "Note 4", "Note 3", "Note 2"])
            #expect(try await store.previews(ofNotes: [ids[0], ids[3]], matching: []) == [ids[0]: "line 0", ids[3]: "line 3"])
        }
    ]

    static let attachments: [WebStoreCheck] = [
        WebStoreCheck(name: "an attachment of several chunks reads back byte for byte, and goes when removed") { store, _ in
            let owner = try await registered(store, "hal")
            let note = try await store.createNote(NoteDraft(title: "Scans", body: ""), account: owner.id, quota: nil)
            let bytes = pattern(3 * (1 << 20) + 123_457)
            let writer = try await store.beginAttachment(to: note.id, kind: .pdf, name: "scan.pdf")
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 200_003, bytes.count)
                try await writer.append(bytes[offset..<end])
                offset = end
            }
            let info = try await writer.finish(quota: nil)
            #expect(info.byteCount == bytes.count && info.name == "scan.pdf" && info.kind == .pdf)
            let reader = try await store.readAttachment(info.id, of: note.id)
            #expect(reader.byteCount == bytes.count)
            var read = Data()
            while let piece = try await reader.next() { read.append(piece) }
            #expect(read == bytes)
            #expect(try await store.summary(ofNote: note.id).attachmentCount == 1)
            #expect(try await store.openNote(note.id).attachments.map(\.id) == [info.id])
            // An opened note's summary is the note's own (the count from the attachments it lists).
            #expect(try await store.openNote(note.id).summary == (try await store.summary(ofNote: note.id)))
            try await store.removeAttachment(info.id, of: note.id, by: .browser(noteProof: nil, passphraseProof: nil))
            #expect(try await store.openNote(note.id).summary.attachmentCount == 0)
            #expect(try await store.listedAttachments(ofNote: note.id).isEmpty)
            guard case .notFound = await failure({ _ = try await store.readAttachment(info.id, of: note.id) }) else {
                Issue.record("a removed attachment reads")
                return
            }
            guard
                case .notFound = await failure({
                    try await store.removeAttachment(info.id, of: note.id, by: .browser(noteProof: nil, passphraseProof: nil))
                })
            else {
                Issue.record("removed twice")
                return
            }
        },
        WebStoreCheck(name: "an attachment left out of backups is listed so, and put back in") { store, _ in
            let owner = try await registered(store, "kit")
            let note = try await store.createNote(NoteDraft(title: "Statements", body: ""), account: owner.id, quota: nil)
            let writer = try await store.beginAttachment(to: note.id, kind: .file, name: "statement.bin")
            try await writer.append(pattern(1_000))
            let info = try await writer.finish(quota: nil)
            #expect(info.excludedFromBackup == nil, "in backups unless said otherwise")
            #expect(try await store.setExcludedFromBackup(info.id, of: note.id, excluded: true).excludedFromBackup == true)
            #expect(try await store.listedAttachments(ofNote: note.id).map(\.excludedFromBackup) == [true])
            #expect(try await store.openNote(note.id).attachments.map(\.excludedFromBackup) == [true])
            #expect(try await store.setExcludedFromBackup(info.id, of: note.id, excluded: false).excludedFromBackup == nil)
            #expect(try await store.listedAttachments(ofNote: note.id).map(\.excludedFromBackup) == [nil])
            guard case .notFound = await failure({ _ = try await store.setExcludedFromBackup("no-such-attachment", of: note.id, excluded: true) })
            else {
                Issue.record("a flag set on no attachment")
                return
            }
        },
        WebStoreCheck(name: "an abandoned upload leaves nothing, and a name that walks out of a folder is refused") { store, _ in
            let owner = try await registered(store, "ivy")
            let note = try await store.createNote(NoteDraft(title: "Drafts", body: ""), account: owner.id, quota: nil)
            let writer = try await store.beginAttachment(to: note.id, kind: .file, name: "big.bin")
            try await writer.append(pattern((1 << 20) + 5))
            try await writer.append(pattern(500_000))
            await writer.abandon()
            #expect(try await store.listedAttachments(ofNote: note.id).isEmpty)
            #expect(try await store.summary(ofNote: note.id).attachmentCount == 0)
            guard case .invalid = await failure({ _ = try await store.beginAttachment(to: note.id, kind: .file, name: "../etc") }) else {
                Issue.record("a name with a separator was taken")
                return
            }
        },
    ]

    static let quotas: [WebStoreCheck] = [
        WebStoreCheck(name: "a write that would pass the account's quota is refused and writes nothing") { store, _ in
            let owner = try await registered(store, "jon")
            guard
                case .quotaExceeded = await failure({
                    _ = try await store.createNote(
                        NoteDraft(title: "Big", body: "x"), account: owner.id, quota: StorageQuota(limitBytes: 100, addingBytes: 101))
                })
            else {
                Issue.record("a note past the quota was made")
                return
            }
            #expect(try await store.notes(account: owner.id, folderID: nil).isEmpty)
            let note = try await store.createNote(
                NoteDraft(title: "Small", body: "x"), account: owner.id, quota: StorageQuota(limitBytes: 100_000, addingBytes: 10))
            guard
                case .quotaExceeded = await failure({
                    _ = try await store.saveNote(
                        note.id, NoteChanges(body: String(repeating: "y", count: 5_000)), by: owner.id,
                        quota: StorageQuota(limitBytes: 2_000, addingBytes: 5_000))
                })
            else {
                Issue.record("a save past the quota was kept")
                return
            }
            #expect(try await store.openNote(note.id).body == "x")
            let writer = try await store.beginAttachment(to: note.id, kind: .file, name: "large.bin")
            try await writer.append(pattern(20_000))
            guard case .quotaExceeded = await failure({ _ = try await writer.finish(quota: StorageQuota(limitBytes: 10_000, addingBytes: 0)) }) else {
                Issue.record("an attachment past the quota was added")
                return
            }
            #expect(try await store.listedAttachments(ofNote: note.id).isEmpty)
            let fits = try await store.beginAttachment(to: note.id, kind: .file, name: "small.bin")
            try await fits.append(pattern(2_000))
            #expect(try await fits.finish(quota: StorageQuota(limitBytes: 10_000, addingBytes: 0)).byteCount == 2_000)
        },
        concurrentQuota,
    ]

    static let concurrentQuota = WebStoreCheck(name: "of two concurrent attachments that fit the quota one at a time only, exactly one is added") {
        store, _ in
        let owner = try await registered(store, "kit")
        let note = try await store.createNote(NoteDraft(title: "Room", body: ""), account: owner.id, quota: nil)
        let quota = StorageQuota(limitBytes: 150_000, addingBytes: 0)
        let added = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<2 {
                group.addTask {
                    let writer = try await store.beginAttachment(to: note.id, kind: .file, name: "part\(index).bin")
                    try await writer.append(pattern(100_000, seed: UInt8(index)))
                    do {
                        _ = try await writer.finish(quota: quota)
                        return true
                    } catch NotesError.quotaExceeded {
                        return false
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(added.filter { $0 }.count == 1)
        #expect(try await store.listedAttachments(ofNote: note.id).count == 1)
    }

    static let search: [WebStoreCheck] = [
        WebStoreCheck(name: "search: every word as a word prefix, case and diacritics ignored, the account's own notes only") { store, _ in
            let owner = try await registered(store, "kai")
            let other = try await registered(store, "lou")
            let cafe = try await store.createNote(NoteDraft(title: "Café au lait", body: "Morning coffee recipe"), account: owner.id, quota: nil)
            let groceries = try await store.createNote(
                NoteDraft(title: "Groceries", body: "milk, eggs\nCrème fraîche"), account: owner.id, quota: nil)
            let travel = try await store.createNote(NoteDraft(title: "Travel", body: "passport"), account: owner.id, quota: nil)
            _ = try await store.createNote(NoteDraft(title: "Café elsewhere", body: "not kai's"), account: other.id, quota: nil)
            #expect(try await store.search("cafe", account: owner.id).map(\.id) == [cafe.id])
            #expect(try await store.search("CRÈME", account: owner.id).map(\.id) == [groceries.id])
            #expect(try await store.search("cre fra", account: owner.id).map(\.id) == [groceries.id])
            #expect(try await store.search("morn cof", account: owner.id).map(\.id) == [cafe.id])
            #expect(try await store.search("milk passport", account: owner.id).isEmpty)
            #expect(try await store.search("offee", account: owner.id).isEmpty)
            #expect(try await store.search("pass", account: owner.id).map(\.id) == [travel.id])
            _ = try await store.saveNote(travel.id, NoteChanges(body: "visa"), by: owner.id, quota: nil)
            #expect(try await store.search("pass", account: owner.id).isEmpty)
            #expect(try await store.search("visa", account: owner.id).map(\.id) == [travel.id])
            try await store.moveToRecentlyDeleted(cafe.id)
            #expect(try await store.search("cafe", account: owner.id).isEmpty)
            guard case .invalid = await failure({ _ = try await store.search("", account: owner.id) }) else {
                Issue.record("an empty search was run")
                return
            }
        },
        WebStoreCheck(name: "a search's preview is the line the note matches on, from a little before the word, not the note's start") { store, _ in
            let owner = try await registered(store, "mo")
            let long = String(repeating: "filler words here ", count: 5) + "the Crème brûlée recipe, then more words"
            let note = try await store.createNote(
                NoteDraft(title: "Desserts", body: "Desserts\nShopping first\n\n" + long), account: owner.id, quota: nil)
            let found = try await store.search("creme", account: owner.id).map(\.id)
            #expect(found == [note.id])
            let preview = try #require(try await store.previews(ofNotes: found, matching: SearchWords.query("creme"))[note.id])
            #expect(preview.hasPrefix("…") && preview.contains("Crème brûlée"), "\(preview)")
            #expect(preview.count <= NoteRules.previewLength)
            // Outside a search, and when only the title matches, the first line after the title.
            #expect(try await store.previews(ofNotes: [note.id], matching: [])[note.id] == "Shopping first")
            #expect(try await store.previews(ofNotes: [note.id], matching: SearchWords.query("dessert"))[note.id] == "Shopping first")
        },
    ]
}

extension Sequence {
    /// `map` with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
