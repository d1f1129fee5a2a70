import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorNotesDomain
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// A lock removed on a device from a note with attachments (docs/SYNC.md, "Notes"), through the
/// routes on a real PostgreSQL: the server holds each attachment sealed under the note key, which
/// it never has; the device's plaintext of each, sent first, is kept as its unlocked copy, and
/// the lock's removal takes the copies in its own transaction — refused, changing nothing, while
/// one is missing.
@Suite("Sync: unlocked copies of a locked note's attachments", .enabled(if: TestPostgres.shouldRun))
struct SyncUnlockedCopiesTests {
    /// A locked note made by `device`, with one attachment of `plaintext` bytes sent as its sealed
    /// chunk (the server never opens it); the note as the device pulls it then.
    static func lockedNoteWithAttachment(
        _ client: some TestClientProtocol, _ device: TestDevice, title: String, id: String, plaintext: Int
    ) async throws -> (made: SyncNoteChange, note: SyncNote) {
        var made = SyncNoteChange.new(title, "")
        made.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 5)
        let note = try #require(try await device.send(client, made).note)
        var headers = device.attachmentHeaders(name: "deed.png", kind: "image", length: plaintext + 28)
        headers.append(.init(name: .init(SyncAttachment.sealedHeader)!, value: "true"))
        let sealed = try await client.execute(
            uri: "/v1/sync/notes/\(note.id)/attachments/\(id)", method: .put, headers: headers,
            body: ByteBuffer(bytes: Data(repeating: 0xEE, count: plaintext + 28)))
        #expect(sealed.status == .created, "\(sealed.text)")
        let pulled = try #require(try await device.notes(client).entries.first { $0.noteID == note.id }?.note)
        return (made, pulled)
    }

    /// The lock's removal of `note` from the device that made it as `made`.
    static func removal(of note: SyncNote, _ made: SyncNoteChange, body: String) -> SyncNoteChange {
        var removal = SyncNoteChange.edit(note, body: body, base: note.base)
        removal.localID = made.localID
        return removal
    }

    @Test func aLockRemovalWaitsForEachUnlockedCopyThenTakesThemInOneStep() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        _ = try await instance.account("ada")
        let store = instance.storage.store
        let id = UUID().uuidString.lowercased()
        let plaintext = Data((0..<1_000).map { _ in UInt8.random(in: 0...255) })
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let (made, note) = try await Self.lockedNoteWithAttachment(client, device, title: "Deed", id: id, plaintext: plaintext.count)
            let removal = Self.removal(of: note, made, body: "Deed\nopened")

            // Without the copy: refused, and the note keeps its lock and its sealed attachment.
            let early = try await client.send(.post, "/v1/sync/notes", removal, headers: device.bearer)
            #expect(early.status == .conflict && early.code == .conflict, "\(early.text)")
            #expect(try await store.summary(ofNote: note.id).isLocked)
            #expect(try await #require(store as? any LockedNoteSyncStore).sealedAttachmentIDs(ofNote: note.id) == [id])

            // A copy of another size than the attachment is refused and kept as nothing whole.
            let short = try await device.putAttachment(client, note: note.id, id: id, name: "deed.png", kind: "image", plaintext.dropLast())
            #expect(short.status == .badRequest && short.code == .invalid, "\(short.text)")
            #expect(try await SyncAttachmentsTests.rows("attachment_unlocked_copies", instance) == 0)

            // The plaintext is kept beside the sealed chunk; a retry finds it whole.
            let copy = try await device.putAttachment(client, note: note.id, id: id, name: "deed.png", kind: "image", plaintext)
            #expect(copy.status == .created, "\(copy.text)")
            let again = try await device.putAttachment(client, note: note.id, id: id, name: "deed.png", kind: "image", plaintext)
            #expect(again.status == .ok, "\(again.text)")
            #expect(try await store.summary(ofNote: note.id).isLocked)
            let stillSealed = try await client.execute(uri: "/v1/sync/notes/\(note.id)/attachments/\(id)", method: .get, headers: device.bearer)
            #expect(Data(buffer: stillSealed.body) == Data(repeating: 0xEE, count: plaintext.count + 28), "served sealed until the removal")

            // The removal goes: the note unlocked, the attachment its plaintext, the copy gone.
            let removed = try await device.send(client, removal)
            #expect(removed.outcome == .saved && removed.note?.isLocked == false, "\(removed.outcome)")
            #expect(
                removed.note?.attachments == [
                    SyncAttachment(
                        id: id, kind: "image", name: "deed.png", byteCount: plaintext.count, isSealed: false, excludedFromBackup: false,
                        created: removed.note?.attachments?.first?.created)
                ])
            let reader = try await store.readAttachment(id, of: note.id)
            var stored = Data()
            while let piece = try await reader.next() { stored.append(piece) }
            #expect(stored == plaintext)
            #expect(try await SyncAttachmentsTests.rows("attachment_chunks", instance) == 1)
            for table in ["attachment_unlocked_copies", "attachment_unlocked_chunks"] {
                #expect(try await SyncAttachmentsTests.rows(table, instance) == 0, "\(table)")
            }
        }
        await instance.storage.close()
    }

    /// The plaintext stays on the server only on its way: a new locked version of the note (the
    /// device locked it again) drops its copies.
    @Test func aNewLockedVersionDropsTheUnlockedCopies() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        _ = try await instance.account("ada")
        let id = UUID().uuidString.lowercased()
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let (made, note) = try await Self.lockedNoteWithAttachment(client, device, title: "Relock", id: id, plaintext: 500)
            let copy = try await device.putAttachment(client, note: note.id, id: id, name: "deed.png", kind: "image", Data(count: 500))
            #expect(copy.status == .created, "\(copy.text)")
            #expect(try await SyncAttachmentsTests.rows("attachment_unlocked_chunks", instance) == 1)
            var relocked = made
            relocked.noteID = note.id
            relocked.base = note.base
            relocked.locked = SyncNotesQuotaTests.lockedRecord(100, fill: 6)
            #expect(try await device.send(client, relocked).outcome == .saved)
            for table in ["attachment_unlocked_copies", "attachment_unlocked_chunks"] {
                #expect(try await SyncAttachmentsTests.rows(table, instance) == 0, "\(table)")
            }
        }
        await instance.storage.close()
    }
}
