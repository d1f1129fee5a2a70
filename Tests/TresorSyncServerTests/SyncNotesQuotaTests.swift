import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorNotesDomain
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// A device's write refused over the web account's quota changes nothing (docs/SYNC.md,
/// "Notes"): not the note's place in Recently Deleted, which an accepted edit would leave, nor a
/// locked note — new, edited, or its lock removed.
@Suite("Sync notes: quota refusals lose nothing", .enabled(if: TestPostgres.shouldRun))
struct SyncNotesQuotaTests {
    /// A locked record of the right shapes (the server never opens it) with `bytes` of ciphertext.
    static func lockedRecord(_ bytes: Int, fill: UInt8) -> SyncLockedNote {
        SyncLockedNote(
            passphraseSalt: Data(repeating: 7, count: 16), passphraseIterations: 1_000, passphraseVerifier: Data(repeating: 1, count: 24),
            passphraseProofHash: nil, wrappedKey: Data(repeating: 2, count: 24), iv: Data(repeating: 3, count: 12),
            tag: Data(repeating: 4, count: 16), ciphertext: Data(repeating: fill, count: bytes), bodyFormat: "text", noteProofHash: nil)
    }

    /// An edit over the quota of a note in Recently Deleted is refused and the note stays there;
    /// within the quota, the same edit restores it.
    @Test func anEditOverTheQuotaOfADeletedNoteLeavesItInRecentlyDeleted() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase(), accountQuotaBytes: 3_000)
        _ = try await instance.account("ada")
        let store = instance.storage.store
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let note = try #require(try await device.send(client, SyncNoteChange.new("Trip", "Trip\npassport")).note)
            try await store.moveToRecentlyDeleted(note.id)

            let big = try await client.send(
                .post, "/v1/sync/notes", SyncNoteChange.edit(note, body: "Trip\n" + String(repeating: "t", count: 4_000), base: note.base),
                headers: device.bearer)
            #expect(big.status == .contentTooLarge && big.code == .tooLarge, "\(big.status) \(big.text)")
            #expect(try await store.summary(ofNote: note.id).deleted != nil, "a refused edit restores nothing")
            #expect(try await store.openNote(note.id).body == "Trip\npassport")

            let small = try await device.send(client, SyncNoteChange.edit(note, body: "Trip\npassport\ntickets", base: note.base))
            #expect(small.outcome != .conflictCopy && small.note?.deleted == nil, "\(small.outcome)")
            #expect(try await store.openNote(note.id).body == "Trip\npassport\ntickets")
        }
        await instance.storage.close()
    }

    /// Locked notes' writes count their ciphertext: a new one over the quota is not stored, a
    /// new version over it leaves the note as it was (and in Recently Deleted when it was
    /// there), and a lock removed with a body over it leaves the note locked.
    @Test func aLockedNotesWritesOverTheQuotaChangeNothing() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase(), accountQuotaBytes: 3_000)
        let ada = try await instance.account("ada")
        let store = instance.storage.store
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            var tooBig = SyncNoteChange.new("Huge", "")
            tooBig.locked = Self.lockedRecord(4_000, fill: 9)
            let refused = try await client.send(.post, "/v1/sync/notes", tooBig, headers: device.bearer)
            #expect(refused.status == .contentTooLarge && refused.code == .tooLarge, "\(refused.status) \(refused.text)")
            #expect(try await store.notes(account: ada.id, folderID: nil).isEmpty)

            var made = SyncNoteChange.new("Bank", "")
            made.locked = Self.lockedRecord(100, fill: 5)
            let note = try #require(try await device.send(client, made).note)
            #expect(note.isLocked)
            try await store.moveToRecentlyDeleted(note.id)
            let deleted = try #require(try await device.notes(client).entries.last?.note)

            var grown = made
            grown.noteID = note.id
            grown.base = deleted.base
            grown.locked = Self.lockedRecord(4_000, fill: 6)
            let refusedEdit = try await client.send(.post, "/v1/sync/notes", grown, headers: device.bearer)
            #expect(refusedEdit.status == .contentTooLarge && refusedEdit.code == .tooLarge, "\(refusedEdit.text)")
            #expect(try await store.summary(ofNote: note.id).deleted != nil, "a refused locked edit restores nothing")
            #expect(
                try await #require(store as? any LockedNoteSyncStore).syncedLockedRecord(ofNote: note.id).ciphertext == Data(repeating: 5, count: 100)
            )

            var unlocked = SyncNoteChange.edit(deleted, body: "Bank\n" + String(repeating: "u", count: 4_000), base: deleted.base)
            unlocked.localID = made.localID
            let refusedUnlock = try await client.send(.post, "/v1/sync/notes", unlocked, headers: device.bearer)
            #expect(refusedUnlock.status == .contentTooLarge && refusedUnlock.code == .tooLarge, "\(refusedUnlock.text)")
            let kept = try await store.summary(ofNote: note.id)
            #expect(kept.isLocked && kept.deleted != nil && kept.revision == deleted.revision)

            // Within the quota the lock's removal goes, restoring the note.
            unlocked.body = "Bank\nopened on the device"
            let removed = try await device.send(client, unlocked)
            #expect(removed.outcome == .saved && removed.note?.isLocked == false && removed.note?.deleted == nil)
            #expect(try await store.openNote(note.id).body == "Bank\nopened on the device")
        }
        await instance.storage.close()
    }
}
