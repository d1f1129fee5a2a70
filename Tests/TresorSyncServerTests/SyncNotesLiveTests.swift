import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorNotesDomain
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// A note change — a browser's or a device's — is told to the streams of the accounts that may
/// see the note, on every instance, and to no other account's, nor to the device that made it;
/// so is a change of the account's folders or notes passphrase (docs/SYNC.md, "Live updates").
@Suite("Sync notes live updates", .enabled(if: TestPostgres.shouldRun))
struct SyncNotesLiveTests {
    @Test func aNoteChangeOnAnyInstanceReachesItsAccountsStreamsOnly() async throws {
        let url = try await TestPostgres.freshDatabase()
        let listening = Gate()
        let writing = try await SyncInstance.open(url: url)
        let watching = try await SyncInstance.open(url: url, listening: { listening.open() })
        await listening.wait()
        let ada = try await writing.account("ada"), bob = try await writing.account("bob")
        let (adaID, adaStream) = try #require(watching.relay.live.open(account: ada.id, device: TestDevice.unknownID()))
        let (bobID, bobStream) = try #require(watching.relay.live.open(account: bob.id, device: TestDevice.unknownID()))
        let pusher = TestDevice(account: "ada")
        let (ownID, ownStream) = try #require(watching.relay.live.open(account: ada.id, device: pusher.id))

        // A browser's new note (the web store's own write) on the other instance.
        _ = try await writing.storage.store.createNote(NoteDraft(title: "Web", body: "Web\nnote"), account: ada.id, quota: nil)
        #expect(try await Self.next(adaStream) == .notes)
        #expect(try await Self.next(ownStream) == .notes, "a browser's note wakes every device")
        // A device's push, through the batch route.
        try await writing.application.test(.router) { client in
            var device = pusher
            try await device.join(client)
            let answers = try await device.sendBatch(client, [SyncNoteChange.new("Device", "Device\nnote")])
            #expect(answers.first?.result?.outcome == .created)
        }
        #expect(try await Self.next(adaStream) == .notes)
        #expect(try await watching.relay.store.notesCounter(account: ada.id) == 2)
        // A folder made, and a passphrase set, in the web client: the notes' settings.
        _ = try await writing.storage.store.createFolder(named: "Web folder", account: ada.id)
        #expect(try await Self.next(adaStream) == .notes)
        let material = try PassphraseMaterial(
            salt: Data(repeating: 1, count: 16), iterations: writing.storage.store.minimumIterations, verifier: Data(repeating: 2, count: 24),
            proofHash: LockedNoteShape.proofHash(Data(repeating: 3, count: 32)))
        try await writing.storage.store.setPassphrase(material, hint: "a hint", account: ada.id)
        #expect(try await Self.next(adaStream) == .notes)

        // The pushing device heard the web's folder and passphrase. Both are read before the
        // keep-alive is sent: an event reaches an account's streams one after the other, so
        // ada's may have it while the device's has yet to.
        #expect(try await Self.next(ownStream) == .notes)
        #expect(try await Self.next(ownStream) == .notes)
        // Bob's stream heard nothing, and the pushing device nothing of its own note: the
        // keep-alive, which reaches every stream, comes first.
        watching.relay.live.keepAlive()
        #expect(try await Self.next(bobStream) == .keepAlive, "bob's devices hear nothing of ada's notes")
        #expect(try await Self.next(ownStream) == .keepAlive, "the pushing device is not told of its own note")
        watching.relay.live.close(ownID, account: ada.id)
        watching.relay.live.close(adaID, account: ada.id)
        watching.relay.live.close(bobID, account: bob.id)
        await writing.storage.close()
        await watching.storage.close()
    }

    /// The stream's next event, or a failure after ``liveUpdateWait``.
    static func next(_ stream: AsyncStream<SyncLiveUpdates.Event>) async throws -> SyncLiveUpdates.Event? {
        try await withTimeout {
            var events = stream.makeAsyncIterator()
            return await events.next()
        }
    }
}

extension TestDevice {
    func sendBatch(_ client: some TestClientProtocol, _ changes: [SyncNoteChange]) async throws -> [SyncNoteChangeAnswer] {
        let response = try await client.send(.post, "/v1/sync/notes/batch", SyncNoteBatch(changes: changes), headers: bearer)
        try #require(response.status == .ok, "\(response.text)")
        return try response.decode(SyncNoteBatchAnswer.self).answers
    }
}
