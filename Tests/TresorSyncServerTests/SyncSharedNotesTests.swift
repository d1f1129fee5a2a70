import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorNotesDomain
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// Notes shared in the web client, through the sync routes on a real PostgreSQL: a note another
/// account shares with the device's account is in its feed, in counter order with its own notes,
/// while it is the account's to see; the device edits it as a participant and leaves it by
/// deleting it; a note the account shares tells its devices who it is shared with.
@Suite("Sync shared notes", .enabled(if: TestPostgres.shouldRun))
struct SyncSharedNotesTests {
    @Test func aNoteSharedWithTheAccountIsInItsFeedUntilItIsNoLongerItsToSee() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let store = instance.storage.store
        let bob = try await instance.account("bob")
        let alice = try await instance.account("alice")
        let own = try await store.createNote(NoteDraft(title: "Mine", body: "Mine\nalice's"), account: alice.id, quota: nil)
        let trip = try await store.createNote(
            NoteDraft(title: "Trip", body: "Trip\ntent", folder: "Bob's", isPinned: true), account: bob.id, quota: nil)
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "alice")
            try await device.join(client)
            let first = try await device.notes(client)
            #expect(first.entries.map(\.noteID) == [own.id], "not shared yet: Bob's note is not Alice's")

            _ = try await store.share(note: trip.id, with: "alice", by: bob.id)
            let state = try await client.execute(uri: "/v1/sync/state", method: .get, headers: device.bearer)
            #expect(try state.decode(SyncAccountState.self).notes > first.cursor, "Alice's devices are told: her notes counter moved")
            let shared = try await device.notes(client, after: first.cursor)
            #expect(shared.entries.map(\.noteID) == [trip.id])
            let note = try #require(shared.entries.first?.note)
            #expect(note.body == "Trip\ntent" && note.title == "Trip")
            #expect(note.folder == nil && !note.isPinned, "the folder and the pin are the owner's")
            #expect(note.sharing == SyncNoteSharing(owner: "bob", participants: ["alice"], isOwner: false))

            // Bob's edit and Alice's own come in the order they were made, on Alice's counter.
            _ = try await store.saveNote(trip.id, NoteChanges(body: "Trip\ntent\nstove"), by: bob.id, quota: nil)
            _ = try await store.saveNote(own.id, NoteChanges(body: "Mine\nedited"), by: alice.id, quota: nil)
            let edited = try await device.notes(client, after: shared.cursor)
            #expect(edited.entries.map(\.noteID) == [trip.id, own.id])
            #expect(edited.entries.map(\.counter) == edited.entries.map(\.counter).sorted() && edited.entries[0].counter > shared.cursor)
            #expect(edited.entries.first?.note?.body == "Trip\ntent\nstove")

            // In Bob's Recently Deleted it is gone for Alice; restored, it is back.
            try await store.moveToRecentlyDeleted(trip.id)
            let deleted = try await device.notes(client, after: edited.cursor)
            #expect(deleted.entries.map(\.noteID) == [trip.id] && deleted.entries.first?.note == nil)
            _ = try await store.restoreNote(trip.id)
            let restored = try await device.notes(client, after: deleted.cursor)
            #expect(restored.entries.map(\.noteID) == [trip.id] && restored.entries.first?.note?.body == "Trip\ntent\nstove")

            // Unshared: gone; shared again and deleted for good: gone.
            try await store.unshare(note: trip.id, participant: "alice", by: bob.id)
            let unshared = try await device.notes(client, after: restored.cursor)
            #expect(unshared.entries.map(\.noteID) == [trip.id] && unshared.entries.first?.note == nil)
            _ = try await store.share(note: trip.id, with: "alice", by: bob.id)
            try await store.moveToRecentlyDeleted(trip.id)
            try await store.deleteForGood(trip.id)
            let gone = try await device.notes(client, after: unshared.cursor)
            #expect(gone.entries.map(\.noteID) == [trip.id] && gone.entries.first?.note == nil)
            #expect(try await device.notes(client, after: gone.cursor).entries.isEmpty)
        }
        await instance.storage.close()
    }

    @Test func aDeviceEditsASharedNoteAsAParticipantAndLeavesItByDeletingIt() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let store = instance.storage.store
        let bob = try await instance.account("bob")
        _ = try await instance.account("alice")
        let trip = try await store.createNote(
            NoteDraft(title: "Trip", body: "Trip\ntent", folder: "Bob's", isPinned: true), account: bob.id, quota: nil)
        _ = try await store.share(note: trip.id, with: "alice", by: bob.id)
        let writer = try await store.beginAttachment(to: trip.id, kind: .file, name: "map.bin")
        try await writer.append(Data("the map".utf8))
        let map = try await writer.finish(quota: nil)
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "alice")
            try await device.join(client)
            let note = try #require(try await device.notes(client).entries.first?.note)
            #expect(note.attachments?.map(\.id) == [map.id])

            // Its title and body are saved as Alice's edit; a folder and a pin sent are ignored.
            var edit = SyncNoteChange.edit(note, body: "Trip\ntent\nrope", base: note.base)
            edit.folder = "Alice's"
            edit.isPinned = false
            let saved = try await device.send(client, edit)
            #expect(saved.outcome == .saved && saved.note?.body == "Trip\ntent\nrope")
            #expect(saved.note?.folder == nil && saved.note?.sharing?.isOwner == false)
            #expect(try await store.openNote(trip.id).body == "Trip\ntent\nrope")
            let kept = try await store.summary(ofNote: trip.id)
            #expect(kept.folder == "Bob's" && kept.isPinned, "Bob's folder and pin stay")

            // Its attachments are Bob's: Alice's device reads them, adds none.
            let read = try await client.execute(uri: "/v1/sync/notes/\(trip.id)/attachments/\(map.id)", method: .get, headers: device.bearer)
            #expect(read.status == .ok && read.text == "the map")
            let added = try await device.putAttachment(
                client, note: trip.id, id: UUID().uuidString.lowercased(), name: "extra.bin", Data("extra".utf8))
            #expect(added.status == .notFound)

            // Deleted on the device: Alice leaves the note, Bob keeps it.
            var leave = SyncNoteChange.edit(try #require(saved.note), body: "Trip\ntent\nrope", base: try #require(saved.note).base)
            leave.state = .recentlyDeleted
            let left = try await device.send(client, leave)
            #expect(left.outcome == .deleted && left.note == nil)
            let owners = try await store.summary(ofNote: trip.id)
            #expect(owners.sharing == nil && owners.deleted == nil && owners.title == "Trip")
            #expect(try await store.openNote(trip.id).body == "Trip\ntent\nrope")
            // Sent again (its answer lost), the leave holds.
            #expect(try await device.send(client, leave).outcome == .deleted)
        }
        await instance.storage.close()
    }

    /// A participant's edit made offline, of a note its owner deleted meanwhile: the edit is kept
    /// as the participant's own note, named as the conflict copy it is — never a second note of
    /// the same title beside the owner's, restored.
    @Test func aParticipantsEditOfANoteItsOwnerDeletedIsKeptAsANamedCopy() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let store = instance.storage.store
        let ada = try await instance.account("ada")
        let bob = try await instance.account("bob")
        let groceries = try await store.createNote(NoteDraft(title: "Groceries", body: "Groceries\nmilk"), account: ada.id, quota: nil)
        _ = try await store.share(note: groceries.id, with: "bob", by: ada.id)
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "bob")
            try await device.join(client)
            let note = try #require(try await device.notes(client).entries.first?.note)
            try await store.moveToRecentlyDeleted(groceries.id)

            let edit = SyncNoteChange.edit(note, body: "Groceries\nmilk\neggs", base: note.base)
            let kept = try await device.send(client, edit)
            #expect(kept.outcome == .created, "\(kept.outcome)")
            let copy = try #require(kept.note)
            #expect(copy.title.hasPrefix("Groceries (conflict copy from bob") && copy.body == "Groceries\nmilk\neggs", "\(copy.title)")
            let bobs = try await store.notes(account: bob.id, folderID: nil).map(\.id)
            #expect(copy.sharing == nil && bobs == [copy.id])
        }
        await instance.storage.close()
    }

    @Test func aNoteTheAccountSharesTellsItsDevicesWithWhom() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let store = instance.storage.store
        let bob = try await instance.account("bob")
        _ = try await instance.account("alice")
        let trip = try await store.createNote(NoteDraft(title: "Trip", body: "Trip", folder: "Bob's"), account: bob.id, quota: nil)
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "bob")
            try await device.join(client)
            let first = try await device.notes(client)
            #expect(first.entries.first?.note?.sharing == nil)
            _ = try await store.share(note: trip.id, with: "alice", by: bob.id)
            let shared = try #require(try await device.notes(client, after: first.cursor).entries.first?.note)
            #expect(shared.sharing == SyncNoteSharing(owner: "bob", participants: ["alice"], isOwner: true))
            #expect(shared.folder == "Bob's", "the owner's folder is its own")
        }
        await instance.storage.close()
    }
}
