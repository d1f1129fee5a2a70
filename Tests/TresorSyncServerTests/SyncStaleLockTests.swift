import Foundation
import HummingbirdTesting
import Testing
import TresorNotesDomain
import TresorSyncProtocol
import TresorTestSupport

@testable import TresorSyncServer

/// A lock a device puts on a note whose server version moved on since the device last had it
/// (docs/SYNC.md, "Notes"): the server has no key to merge with, so whether the lock goes on
/// the note depends on what moved.
@Suite("Sync: a lock made from an older version", .enabled(if: TestPostgres.shouldRun))
struct SyncStaleLockTests {
    /// Only an attachment and a pin moved the note on: the lock goes on it — never a locked
    /// conflict copy beside a note left unlocked — and the pin made elsewhere stays.
    @Test func aLockOnTextTheServerStillHasGoesOnTheNote() async throws {
        try await SyncInstance.withJoinedDevice { client, device, instance, ada in
            let store = instance.storage.store
            let note = try #require(try await device.send(client, SyncNoteChange.new("Deeds", "Deeds\nthe safe's code")).note)
            let upload = try await device.putAttachment(client, note: note.id, name: "plan.png", kind: "image", Data([1, 2, 3]))
            #expect(upload.status == .created, "\(upload.text)")
            #expect(
                try upload.decode(SyncAttachmentChanged.self).step == SyncNoteRevisionStep(revisionBefore: note.revision, revision: note.revision + 1)
            )
            _ = try await store.saveNote(note.id, NoteChanges(isPinned: true), by: ada.id, quota: nil)

            var lock = SyncNoteChange.edit(note, body: "", base: note.base)
            lock.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 5)
            let locked = try await device.send(client, lock)
            #expect(locked.outcome == .saved && locked.conflictCopyID == nil, "\(locked.outcome)")
            #expect(locked.note?.locked != nil && locked.note?.isPinned == true, "locked, and the pin made elsewhere kept")
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 1, "no copy")
        }
    }

    /// A locked note pinned, moved or renamed on a device that did not change its locked text,
    /// while another device did: the pin, move and title go, the note keeps the newer locked
    /// text, and no copy of the older text is made. A locked text changed on both sides is still
    /// kept as a copy.
    @Test func aLockedNotePinnedWhereItsTextDidNotChangeKeepsTheNewerText() async throws {
        try await SyncInstance.withJoinedDevice { client, laptop, instance, ada in
            let store = instance.storage.store
            var new = SyncNoteChange.new("Vault", "")
            let first = SyncNotesQuotaTests.lockedRecord(100, fill: 5)
            new.locked = first
            let note = try #require(try await laptop.send(client, new).note)
            // Another device's edit of the locked text.
            var edit = SyncNoteChange.edit(note, body: "", base: note.base)
            edit.locked = SyncNotesQuotaTests.lockedRecord(120, fill: 6)
            let edited = try await laptop.send(client, edit)
            #expect(edited.outcome == .saved)

            // The laptop pinned, moved and renamed it from the first version, its text untouched.
            var base = note.base
            base.lockedDigest = try first.record().textDigest
            var pin = SyncNoteChange.edit(note, body: "", base: base)
            (pin.locked, pin.isPinned, pin.folder, pin.title) = (first, true, "Safe", "Vault (old house)")
            let pinned = try await laptop.send(client, pin)
            #expect(pinned.outcome == .merged || pinned.outcome == .saved, "\(pinned.outcome)")
            #expect(pinned.conflictCopyID == nil)
            let after = try #require(pinned.note)
            #expect(after.isPinned && after.folder == "Safe" && after.title == "Vault (old house)")
            #expect(after.locked?.ciphertext == Data(repeating: 6, count: 120), "the newer locked text stays")
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 1, "no copy")

            // Its locked text changed too: no key here to merge, a copy.
            var both = SyncNoteChange.edit(note, body: "", base: base)
            both.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 7)
            let copied = try await laptop.send(client, both)
            #expect(copied.outcome == .conflictCopy && copied.conflictCopyID != nil, "\(copied.outcome)")
        }
    }

    /// The text moved on (an edit in the browser): the note keeps it, unlocked — the device's
    /// locked version is kept whole beside it, as its conflict copy.
    @Test func aLockOnTextEditedSinceIsKeptAsACopy() async throws {
        try await SyncInstance.withJoinedDevice { client, device, instance, ada in
            let store = instance.storage.store
            let note = try #require(try await device.send(client, SyncNoteChange.new("Deeds", "Deeds\nthe safe's code")).note)
            _ = try await store.saveNote(
                note.id, NoteChanges(body: "Deeds\nthe safe's new code", base: NoteBase(revision: note.revision)), by: ada.id, quota: nil)

            var lock = SyncNoteChange.edit(note, body: "", base: note.base)
            lock.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 5)
            let kept = try await device.send(client, lock)
            #expect(kept.outcome == .conflictCopy && kept.conflictCopyID != nil, "\(kept.outcome)")
            #expect(kept.note?.locked == nil && kept.note?.body == "Deeds\nthe safe's new code")
        }
    }

    /// The other way round: a device's unlocked edit made from a version that was not locked, of
    /// a note locked since. Sent with `refuseIfLockedSince`, nothing of it is stored — no unlocked
    /// copy, the locked note untouched — and the device is told the note is locked now. From an
    /// older device (no such field) it is still kept as an unlocked conflict copy.
    @Test func anUnlockedEditOfANoteLockedSinceIsNotKeptUnlocked() async throws {
        try await SyncInstance.withJoinedDevice { client, device, instance, ada in
            let store = instance.storage.store
            let note = try #require(try await device.send(client, SyncNoteChange.new("Bank", "Bank\nPIN 1234")).note)
            var lock = SyncNoteChange.edit(note, body: "", base: note.base)
            lock.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 5)
            let locked = try #require(try await device.send(client, lock).note)

            var edit = SyncNoteChange.edit(note, body: "Bank\nPIN 5678", base: note.base)
            edit.refuseIfLockedSince = true
            let held = try await device.send(client, edit)
            #expect(held.outcome == .lockedSince && held.conflictCopyID == nil, "\(held.outcome)")
            #expect(held.note?.revision == locked.revision && held.note?.locked?.ciphertext == Data(repeating: 5, count: 100))
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 1, "no copy")

            edit.refuseIfLockedSince = nil
            let copied = try await device.send(client, edit)
            #expect(copied.outcome == .conflictCopy, "an older device's edit: \(copied.outcome)")
            #expect(try await store.openNote(try #require(copied.conflictCopyID)).body == "Bank\nPIN 5678", "kept unlocked")
        }
    }
}
