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
/// see the note, on every instance, and to no other account's (docs/SYNC.md, "Live updates").
@Suite("Sync notes live updates", .enabled(if: TestPostgres.shouldRun))
struct SyncNotesLiveTests {
    @Test func aNoteChangeOnAnyInstanceReachesItsAccountsStreamsOnly() async throws {
        let url = try await TestPostgres.freshDatabase()
        let listening = Gate()
        let writing = try await SyncInstance.open(url: url)
        let watching = try await SyncInstance.open(url: url, listening: { listening.open() })
        await listening.wait()
        let ada = try await writing.account("ada"), bob = try await writing.account("bob")
        let (adaID, adaStream) = try #require(watching.relay.live.open(account: ada.id))
        let (bobID, bobStream) = try #require(watching.relay.live.open(account: bob.id))

        // A browser's new note (the web store's own write) on the other instance.
        _ = try await writing.storage.store.createNote(NoteDraft(title: "Web", body: "Web\nnote"), account: ada.id, quota: nil)
        #expect(try await Self.next(adaStream) == .notes)
        // A device's push, through the batch route.
        try await writing.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let answers = try await device.sendBatch(client, [SyncNoteChange.new("Device", "Device\nnote")])
            #expect(answers.first?.result?.outcome == .created)
        }
        #expect(try await Self.next(adaStream) == .notes)
        #expect(try await watching.relay.store.notesCounter(account: ada.id) == 2)

        // Bob's stream heard nothing: the keep-alive, which reaches every stream, comes first.
        watching.relay.live.keepAlive()
        #expect(try await Self.next(bobStream) == .keepAlive, "bob's devices hear nothing of ada's notes")
        watching.relay.live.close(adaID, account: ada.id)
        watching.relay.live.close(bobID, account: bob.id)
        await writing.storage.close()
        await watching.storage.close()
    }

    /// The stream's next event, or a failure after 10 s.
    static func next(_ stream: AsyncStream<SyncLiveUpdates.Event>) async throws -> SyncLiveUpdates.Event? {
        try await withThrowingTaskGroup(of: SyncLiveUpdates.Event?.self) { group in
            group.addTask {
                var events = stream.makeAsyncIterator()
                return await events.next()
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                throw CancellationError()
            }
            let value = try await group.next()!
            group.cancelAll()
            return value
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
