import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorNotesDomain
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// Notes sync through the routes, on a real PostgreSQL: what a device reads of its account's
/// notes after a cursor, and what the server makes of each change it sends — by the same
/// operations (revisions, merge, conflict copy) as the web client's edits.
@Suite("Sync notes", .enabled(if: TestPostgres.shouldRun))
struct SyncNotesTests {
    @Test func aDeviceReadsTheWebNotesAndItsNewNoteIsTheWebAccounts() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let ada = try await instance.account("ada")
        let store = instance.storage.store
        let web = try await store.createNote(NoteDraft(title: "Groceries", body: "Groceries\nmilk", folder: "Home"), account: ada.id, quota: nil)
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let page = try await device.notes(client)
            #expect(page.entries.map(\.noteID) == [web.id] && !page.more)
            let note = try #require(page.entries.first?.note)
            #expect(note.body == "Groceries\nmilk" && note.folder == "Home" && note.title == "Groceries" && note.revision == web.revision)
            // Nothing after its cursor.
            #expect(try await device.notes(client, after: page.cursor).entries.isEmpty)

            let made = try await device.send(client, SyncNoteChange.new("Plans", "Plans\nsail"))
            #expect(made.outcome == .created)
            let created = try #require(made.note)
            #expect(try await store.openNote(created.id).body == "Plans\nsail")
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 2)
            // A creation retried after a lost answer finds the note it made: no second note.
            let again = try await device.send(client, SyncNoteChange.new("Plans", "Plans\nsail"))
            #expect(again.outcome == .created && again.note?.id == created.id)
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 2)
            // It is the next change after the cursor.
            let next = try await device.notes(client, after: page.cursor)
            #expect(next.entries.map(\.noteID) == [created.id])
        }
        await instance.storage.close()
    }

    @Test func lateEditsMergeOrBecomeAConflictCopy() async throws {
        try await SyncInstance.withJoinedDevice { client, device, instance, ada in
            let store = instance.storage.store
            let note = try #require(try await device.send(client, SyncNoteChange.new("List", "List\none\ntwo\nthree")).note)
            let base = note.base
            // The web client edits the first line meanwhile; the device the last: merged.
            _ = try await store.saveNote(
                note.id, NoteChanges(body: "List\nONE\ntwo\nthree", base: NoteBase(revision: note.revision, body: note.body)), by: ada.id,
                quota: nil)
            var edit = SyncNoteChange.edit(note, body: "List\none\ntwo\nTHREE", base: base)
            let merged = try await device.send(client, edit)
            #expect(merged.outcome == .merged)
            #expect(merged.note?.body == "List\nONE\ntwo\nTHREE")

            // Both change the same line: the note keeps the web's, the device's is a conflict copy.
            let now = try #require(merged.note)
            _ = try await store.saveNote(
                now.id, NoteChanges(body: "List\nONE\nweb\nTHREE", base: NoteBase(revision: now.revision, body: now.body)), by: ada.id, quota: nil)
            edit = SyncNoteChange.edit(now, body: "List\nONE\ndevice\nTHREE", base: now.base)
            let copied = try await device.send(client, edit)
            #expect(copied.outcome == .conflictCopy)
            #expect(copied.note?.body == "List\nONE\nweb\nTHREE")
            let copyID = try #require(copied.conflictCopyID)
            #expect(try await store.openNote(copyID).body == "List\nONE\ndevice\nTHREE")
            // Named after the device it came from: two devices of one account are told apart.
            #expect(try await store.summary(ofNote: copyID).title == "List (conflict copy from Test device)")
        }
    }

    /// A note keeps the times it was made and edited on the device, not the time it synced — so
    /// a note edited offline does not jump to the top of every list — but the server never dates
    /// one in its future, nor moves a note's time back.
    @Test func aNoteKeepsTheDevicesDates() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        let now = Date().timeIntervalSince1970.rounded(.down)
        let (dayAgo, hourAgo, halfHourAgo) = (
            Date(timeIntervalSince1970: now - 86_400), Date(timeIntervalSince1970: now - 3_600), Date(timeIntervalSince1970: now - 1_800)
        )
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            var new = SyncNoteChange.new("Offline", "Offline\nwritten on a plane")
            (new.created, new.modified) = (dayAgo, hourAgo)
            let note = try #require(try await device.send(client, new).note)
            #expect(note.created == dayAgo && note.modified == hourAgo, "\(note.created) \(note.modified)")

            var edit = SyncNoteChange.edit(note, body: "Offline\nwritten on a plane, landed", base: note.base)
            edit.modified = halfHourAgo
            let edited = try #require(try await device.send(client, edit).note)
            #expect(edited.modified == halfHourAgo && edited.created == dayAgo)
            // An older time does not move the note back; a time in the server's future is now.
            edit = SyncNoteChange.edit(edited, body: "Offline\nclock behind", base: edited.base)
            edit.modified = dayAgo
            #expect(try await device.send(client, edit).note?.modified == halfHourAgo)
            let latest = try #require(try await device.notes(client).entries.last?.note)
            edit = SyncNoteChange.edit(latest, body: "Offline\nclock ahead", base: latest.base)
            edit.modified = Date(timeIntervalSince1970: now + 86_400)
            let ahead = try #require(try await device.send(client, edit).note)
            #expect(ahead.modified > halfHourAgo && ahead.modified <= Date())
        }
        await instance.storage.close()
    }

    /// A conflict copy of a device's edit is dated when the edit was made, not when it arrived:
    /// a device long offline does not put its copies at the top of every list.
    @Test func aConflictCopyIsDatedWhenItsEditWasMade() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let ada = try await instance.account("ada")
        let store = instance.storage.store
        let hourAgo = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down) - 3_600)
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let note = try #require(try await device.send(client, SyncNoteChange.new("Plans", "Plans\nMonday")).note)
            _ = try await store.saveNote(
                note.id, NoteChanges(body: "Plans\nTuesday", base: NoteBase(revision: note.revision, body: note.body)), by: ada.id, quota: nil)
            var late = SyncNoteChange.edit(note, body: "Plans\nWednesday", base: note.base)
            late.modified = hourAgo
            let kept = try await device.send(client, late)
            let copy = try #require(kept.conflictCopyID)
            let dated = try await store.summary(ofNote: copy).modified
            #expect(kept.outcome == .conflictCopy && dated == hourAgo, "\(dated)")
        }
        await instance.storage.close()
    }

    @Test func anEditOutlivesADeletionMadeBeforeIt() async throws {
        try await SyncInstance.withJoinedDevice { client, device, instance, ada in
            let store = instance.storage.store
            let note = try #require(try await device.send(client, SyncNoteChange.new("Keep", "Keep\nthis")).note)
            _ = try await store.saveNote(
                note.id, NoteChanges(body: "Keep\nthis, edited", base: NoteBase(revision: note.revision, body: note.body)), by: ada.id,
                quota: nil)
            // The device deletes the version it had: the web's edit survives.
            var deletion = SyncNoteChange.edit(note, body: note.body!, base: note.base)
            deletion.state = .deletedForGood
            let kept = try await device.send(client, deletion)
            #expect(kept.outcome == .keptAfterEdit && kept.note?.body == "Keep\nthis, edited" && kept.note?.deleted == nil)
            #expect(try await store.summary(ofNote: note.id).deleted == nil)

            // Deleted from the version it is now: gone, and the page says so.
            let current = try #require(kept.note)
            var later = SyncNoteChange.edit(current, body: current.body!, base: current.base)
            later.state = .deletedForGood
            #expect(try await device.send(client, later).outcome == .deleted)
            let page = try await device.notes(client)
            #expect(page.entries.map(\.noteID) == [note.id] && page.entries[0].note == nil)

            // An edit from a device that had not heard of the deletion comes back as a note.
            let edited = SyncNoteChange.edit(current, body: "Keep\nthis, edited\nmore", base: current.base)
            let back = try await device.send(client, edited)
            #expect(back.outcome == .created && back.note?.body == "Keep\nthis, edited\nmore")
        }
    }

    /// A write holds its account's row until it commits, so a note written by another instance
    /// meanwhile waits and takes the later counter: a device reading in between never moves its
    /// cursor past a change that commits late.
    @Test func aDeviceNeverSkipsANoteChangeCommittedLate() async throws {
        let url = try await TestPostgres.freshDatabase()
        let first = try await SyncInstance.open(url: url), second = try await SyncInstance.open(url: url)
        let ada = try await first.account("ada")
        let one = try await first.storage.store.createNote(NoteDraft(title: "One", body: "one"), account: ada.id, quota: nil)
        let two = try await first.storage.store.createNote(NoteDraft(title: "Two", body: "two"), account: ada.id, quota: nil)
        let page = try await first.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            return try await device.notes(client)
        }
        let entered = Gate(), release = Gate()
        let held = Task {
            try await first.storage.database.transaction { connection in
                try await connection.run("UPDATE notes SET pinned = TRUE WHERE id = \(one.id)", first.storage.database.logger)
                entered.open()
                await release.wait()
            }
        }
        await entered.wait()
        let next = Task {
            try await second.storage.store.saveNote(two.id, NoteChanges(body: "two, edited"), by: ada.id, quota: nil)
        }
        let database = TestPostgres.databaseName(of: url)
        var waiting = false
        for _ in 0..<200 where !waiting {
            let blocked = try await TestPostgres.texts(
                "SELECT count(*)::text FROM pg_stat_activity WHERE datname = '\(database)' AND wait_event_type = 'Lock'", database: database)
            waiting = blocked != ["0"]
            if !waiting { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(waiting, "the second write should wait for the first's account row")
        let between = try await second.relay.store.noteChanges(account: ada.id, after: page.cursor, limit: 100)
        #expect(between.changes.isEmpty)
        release.open()
        try await held.value
        _ = try await next.value
        let after = try await second.relay.store.noteChanges(account: ada.id, after: page.cursor, limit: 100)
        #expect(after.changes.map(\.noteID) == [one.id, two.id], "in commit order, none skipped")
        await first.storage.close()
        await second.storage.close()
    }

    /// A page is read for all its notes at once (`SyncedNotesReader`): each note comes as the
    /// store holds it — its folder, pin, place in Recently Deleted, body and its own attachments,
    /// no other note's — and a note deleted for good as gone.
    @Test func aPageReadTogetherCarriesEachNoteAsTheStoreHoldsIt() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let ada = try await instance.account("ada")
        let store = instance.storage.store
        var ids: [String] = []
        for index in 0..<12 {
            let draft = NoteDraft(
                title: "N\(index)", body: "N\(index)\nbody \(index)", folder: index % 3 == 0 ? nil : "Folder \(index % 3)", isPinned: index % 4 == 0)
            ids.append(try await store.createNote(draft, account: ada.id, quota: nil).id)
        }
        for (note, name) in [(ids[1], "a.txt"), (ids[1], "b.txt"), (ids[5], "c.txt")] {
            let writer = try await store.beginAttachment(to: note, kind: .file, name: name)
            try await writer.append(Data(name.utf8))
            _ = try await writer.finish(quota: nil)
        }
        try await store.moveToRecentlyDeleted(ids[7])
        try await store.moveToRecentlyDeleted(ids[9])
        try await store.deleteForGood(ids[9])
        try await instance.application.test(.router) { [ids] client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let page = try await device.notes(client, limit: 500)
            #expect(page.entries.count == 12 && !page.more)
            for entry in page.entries {
                guard entry.noteID != ids[9] else {
                    #expect(entry.note == nil, "deleted for good")
                    continue
                }
                let note = try #require(entry.note)
                let summary = try await store.summary(ofNote: entry.noteID)
                #expect(note.title == summary.title && note.folder == summary.folder && note.isPinned == summary.isPinned)
                #expect(note.revision == summary.revision && (note.deleted == nil) == (summary.deleted == nil) && !note.isLocked)
                #expect(note.body == (try await store.openNote(entry.noteID).body))
                let attachments = try await store.listedAttachments(ofNote: entry.noteID)
                #expect(note.attachments?.map(\.id) == attachments.map(\.id) && note.attachments?.map(\.name) == attachments.map(\.name))
            }
            let byID = Dictionary(uniqueKeysWithValues: page.entries.map { ($0.noteID, $0.note) })
            #expect(byID[ids[1]]??.attachments?.map(\.name) == ["a.txt", "b.txt"])
            #expect(byID[ids[5]]??.attachments?.map(\.name) == ["c.txt"])
            #expect(byID[ids[2]]??.folder == "Folder 2" && byID[ids[4]]??.isPinned == true)
            #expect(byID[ids[7]]??.deleted != nil)
        }
        await instance.storage.close()
    }

    /// The hint of the passphrase generation a locked note is locked under travels with its
    /// record: it fills a generation that has none — never the current one, whose hint travels
    /// on its own — and comes back in the record a device reads (docs/SYNC.md, "Notes").
    @Test func aLockedNotesRecordCarriesTheHintOfAnEarlierPassphrase() async throws {
        try await SyncInstance.withJoinedDevice { client, device, instance, _ in
            let store = instance.storage.store
            let current = SyncPassphrase(
                salt: Data(repeating: 9, count: 16), iterations: 1_000, verifier: Data(repeating: 8, count: 24), proofHash: nil, hint: "current hint")
            let put = try await client.send(.put, "/v1/sync/passphrase", SyncPassphraseChange(passphrase: current, base: nil), headers: device.bearer)
            #expect(put.status == .ok, "\(put.text)")

            var earlier = SyncNoteChange.new("Old letters", "")
            earlier.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 5)
            earlier.locked?.passphraseHint = "earlier hint"
            let old = try #require(try await device.send(client, earlier).note)
            #expect(old.locked?.passphraseHint == "earlier hint")
            #expect(try await store.summary(ofNote: old.id).lock?.hint == "earlier hint", "the web client shows it for that note")

            var stale = SyncNoteChange.new("New letters", "")
            stale.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 6)
            stale.locked?.passphraseSalt = current.salt
            stale.locked?.passphraseVerifier = current.verifier
            stale.locked?.passphraseHint = "stale hint"
            let new = try #require(try await device.send(client, stale).note)
            #expect(new.locked?.passphraseHint == "current hint", "the current generation keeps its own hint")

            // A hint of the wrong shape is refused with the note.
            var bad = SyncNoteChange.new("Bad hint", "")
            bad.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 7)
            bad.locked?.passphraseHint = String(repeating: "h", count: 10_000)
            let refused = try await client.send(.post, "/v1/sync/notes", bad, headers: device.bearer)
            #expect(refused.status == .badRequest && refused.code == .invalid, "\(refused.text)")
        }
    }

    /// A note locked with a passphrase imported from Apple Notes travels with its source and no
    /// verifier: the server says it keeps such passphrases (`appleNotesPassphrases` in its state),
    /// stores the note under an Apple passphrase that is never current, and gives the record back
    /// as it came. Without the source, a record with no verifier is refused — what an older
    /// server, which needs the verifier, does with it too: it never takes it for a Tresor one.
    @Test func anAppleNotesLockTravelsWithItsSourceAndNoVerifier() async throws {
        try await SyncInstance.withJoinedDevice { client, device, instance, ada in
            let store = instance.storage.store
            let state = try await client.execute(uri: "/v1/sync/state", method: .get, headers: device.bearer)
            #expect(try state.decode(SyncAccountState.self).appleNotesPassphrases == true, "\(state.text)")

            var apple = SyncNoteChange.new("Vault", "")
            apple.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 5)
            apple.locked?.passphraseSource = "apple-notes"
            apple.locked?.passphraseVerifier = nil
            apple.locked?.bodyFormat = "appleNotes"
            let wire = String(decoding: try SyncJSON.encoder.encode(apple), as: UTF8.self)
            #expect(!wire.contains("passphraseVerifier"), "an older peer, needing the verifier, refuses the record")
            let made = try #require(try await device.send(client, apple).note)
            #expect(made.locked == apple.locked)
            #expect(try await store.passphraseStatus(account: ada.id).isSet == false, "an Apple passphrase is never current")
            #expect(try await store.summary(ofNote: made.id).lock?.source == .appleNotes)
            let page = try await device.notes(client)
            #expect(page.entries.first { $0.noteID == made.id }?.note?.locked?.passphraseSource == "apple-notes")

            for (source, what) in [(String?.none, "a Tresor passphrase without a verifier"), ("bogus", "an unknown source")] {
                var bad = SyncNoteChange.new("Refused", "")
                bad.locked = apple.locked
                bad.locked?.passphraseSource = source
                let refused = try await client.send(.post, "/v1/sync/notes", bad, headers: device.bearer)
                #expect(refused.status == .badRequest && refused.code == .invalid, "\(what): \(refused.text)")
            }
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 1)
        }
    }

    @Test func aPageIsCutByCountBadChangesAreRefusedAndAPendingDeviceReadsNothing() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let ada = try await instance.account("ada")
        for index in 0..<5 {
            _ = try await instance.storage.store.createNote(NoteDraft(title: "N\(index)", body: "body \(index)"), account: ada.id, quota: nil)
        }
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let first = try await device.notes(client, limit: 3)
            #expect(first.entries.count == 3 && first.more)
            let rest = try await device.notes(client, after: first.cursor, limit: 3)
            #expect(rest.entries.count == 2 && !rest.more)
            #expect(Set((first.entries + rest.entries).compactMap(\.note?.title)) == Set((0..<5).map { "N\($0)" }))
            let bad = try await client.execute(uri: "/v1/sync/notes?limit=0", method: .get, headers: device.bearer)
            #expect(bad.status == .badRequest)
            let garbage = try await client.execute(
                uri: "/v1/sync/notes", method: .post, headers: device.bearer, body: ByteBuffer(string: #"{"localID":1}"#))
            #expect(garbage.status == .badRequest)
            #expect(try await instance.storage.store.notes(account: ada.id, folderID: nil).count == 5)
            // A change the notes' rules refuse (a NUL in the title, a locked record of the wrong
            // shape): 400, and nothing stored.
            var untitled = SyncNoteChange.new("x", "body")
            untitled.title = "a\u{0}b"
            let refusedTitle = try await client.send(.post, "/v1/sync/notes", untitled, headers: device.bearer)
            #expect(refusedTitle.status == .badRequest && refusedTitle.code == .invalid, "\(refusedTitle.text)")
            var badLock = SyncNoteChange.new("Locked", "")
            badLock.locked = SyncLockedNote(
                passphraseSalt: Data(count: 3), passphraseIterations: 1000, passphraseVerifier: Data(count: 24), passphraseProofHash: nil,
                wrappedKey: Data(count: 24), iv: Data(count: 12), tag: Data(count: 16), ciphertext: Data([1]), bodyFormat: "text",
                noteProofHash: nil)
            let refusedLock = try await client.send(.post, "/v1/sync/notes", badLock, headers: device.bearer)
            #expect(refusedLock.status == .badRequest && refusedLock.code == .invalid, "\(refusedLock.text)")
            #expect(try await instance.storage.store.notes(account: ada.id, folderID: nil).count == 5)

            var pending = TestDevice(account: "ada")
            try await pending.join(client)
            let refused = try await client.execute(uri: "/v1/sync/notes", method: .get, headers: pending.bearer)
            #expect(refused.status == .forbidden && refused.code == .devicePending)
        }
        await instance.storage.close()
    }
}

extension TestDevice {
    func notes(_ client: some TestClientProtocol, after cursor: UInt64 = 0, limit: Int? = nil) async throws -> SyncNotesPage {
        let response = try await client.execute(
            uri: "/v1/sync/notes?after=\(cursor)" + (limit.map { "&limit=\($0)" } ?? ""), method: .get, headers: bearer)
        try #require(response.status == .ok, "\(response.text)")
        return try response.decode(SyncNotesPage.self)
    }

    func send(_ client: some TestClientProtocol, _ change: SyncNoteChange) async throws -> SyncNoteChangeResult {
        let response = try await client.send(.post, "/v1/sync/notes", change, headers: bearer)
        try #require(response.status == .ok, "\(response.text)")
        return try response.decode(SyncNoteChangeResult.self)
    }
}

extension SyncNote {
    var base: SyncNoteBase { SyncNoteBase(revision: revision, title: title, body: body ?? "", folder: folder, isPinned: isPinned) }
}

extension SyncNoteChange {
    /// A note new on the device (one local id per title, so a retry repeats it).
    static func new(_ title: String, _ body: String) -> SyncNoteChange {
        SyncNoteChange(
            localID: "local-\(title)", noteID: nil, base: nil, title: title, body: body, folder: nil, isPinned: false, state: .present)
    }

    static func edit(_ note: SyncNote, body: String, base: SyncNoteBase) -> SyncNoteChange {
        SyncNoteChange(
            localID: "local-\(note.title)", noteID: note.id, base: base, title: note.title, body: body, folder: note.folder,
            isPinned: note.isPinned, state: .present)
    }
}
