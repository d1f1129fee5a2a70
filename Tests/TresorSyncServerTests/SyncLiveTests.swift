import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// A push's change notice, across two instances on one database.
@Suite("Sync live updates", .enabled(if: TestPostgres.shouldRun))
struct SyncLiveTests {
    @Test func aPushIsAnnouncedToThatAccountsDevicesOnEveryInstanceAndNoOtherAccount() async throws {
        let url = try await TestPostgres.freshDatabase()
        let listening = Gate()
        let pushing = try await SyncInstance.open(url: url)
        let watching = try await SyncInstance.open(url: url, listening: { listening.open() })
        await listening.wait()
        let ada = try await pushing.account("ada"), bob = try await pushing.account("bob")
        // Streams of both accounts on the other instance.
        let (adaID, adaStream) = try #require(watching.relay.live.open(account: ada.id))
        let (bobID, bobStream) = try #require(watching.relay.live.open(account: bob.id))
        #expect(watching.relay.live.count(account: ada.id) == 1)

        try await pushing.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            #expect(try await device.push(client, [device.upload("one"), device.upload("two")]).status == .ok)
        }
        let first = try await withTimeout(.seconds(10)) {
            var events = adaStream.makeAsyncIterator()
            return await events.next()
        }
        #expect(first == .records(counter: 2))

        // Bob's stream got nothing: a resync or keep-alive reaches every stream, so send one
        // and see it arrive first.
        watching.relay.live.keepAlive()
        let bobFirst = try await withTimeout(.seconds(10)) {
            var events = bobStream.makeAsyncIterator()
            return await events.next()
        }
        #expect(bobFirst == .keepAlive, "bob's devices hear nothing of ada's records")
        watching.relay.live.close(adaID, account: ada.id)
        watching.relay.live.close(bobID, account: bob.id)
        #expect(watching.relay.live.count(account: ada.id) == 0)
        await pushing.storage.close()
        await watching.storage.close()
    }

    @Test func aRemovedDevicesStreamEndsAtTheNextKeepAlive() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let account = try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var laptop = TestDevice(account: "ada"), phone = TestDevice(account: "ada")
            try await laptop.join(client)
            let request = try #require(try await phone.join(client).joinRequest)
            let approval = SyncApproval(
                deviceList: SyncDeviceListUpdate(expectedVersion: 0, version: 1, blob: Data("list".utf8)),
                envelope: SyncKeyEnvelope(deviceID: phone.id, epoch: 1, blob: Data("wrapped".utf8)))
            let approved = try await client.send(.post, "/v1/sync/join-requests/\(request.requestID)/approve", approval, headers: laptop.bearer)
            #expect(approved.status == .noContent)
            let headers = phone.bearer
            let streamed = Task { try await client.execute(uri: "/v1/sync/events", method: .get, headers: headers) }
            for _ in 0..<500 where instance.relay.live.count(account: account.id) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(instance.relay.live.count(account: account.id) == 1)
            #expect(try await client.execute(uri: "/v1/sync/devices/\(phone.id)", method: .delete, headers: laptop.bearer).status == .noContent)
            instance.relay.live.keepAlive()
            let answer = try await withTimeout(.seconds(20)) { try? await streamed.value }
            let text = try #require(answer).text
            #expect(text.hasPrefix("retry: 2000\n: sync live updates") && text.hasSuffix("event: deviceRemoved\ndata: {}\n\n"), "\(text)")
            #expect(instance.relay.live.count(account: account.id) == 0)
        }
    }

    /// `body`'s value, or a failure after `limit`.
    private func withTimeout<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw CancellationError()
            }
            let value = try await group.next()!
            group.cancelAll()
            return value
        }
    }
}
