import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// A push's or a circle change's notice, across two instances on one database, to the account's
/// other devices (docs/SYNC.md, "Live updates").
@Suite("Sync live updates", .enabled(if: TestPostgres.shouldRun))
struct SyncLiveTests {
    @Test func aPushIsAnnouncedToThatAccountsOtherDevicesOnEveryInstanceAndNoOtherAccount() async throws {
        let url = try await TestPostgres.freshDatabase()
        let listening = Gate()
        let pushing = try await SyncInstance.open(url: url)
        let watching = try await SyncInstance.open(url: url, listening: { listening.open() })
        await listening.wait()
        let ada = try await pushing.account("ada"), bob = try await pushing.account("bob")
        // Streams of both accounts on the other instance, and the pushing device's own.
        let pusher = TestDevice(account: "ada")
        let (adaID, adaStream) = try #require(watching.relay.live.open(account: ada.id, device: TestDevice.unknownID()))
        let (bobID, bobStream) = try #require(watching.relay.live.open(account: bob.id, device: TestDevice.unknownID()))
        let (ownID, ownStream) = try #require(watching.relay.live.open(account: ada.id, device: pusher.id))
        #expect(watching.relay.live.count(account: ada.id) == 2)

        try await pushing.application.test(.router) { client in
            var device = pusher
            try await device.join(client)
            #expect(try await device.push(client, [device.upload("one"), device.upload("two")]).status == .ok)
        }
        let first = try await withTimeout {
            var events = adaStream.makeAsyncIterator()
            return await events.next()
        }
        #expect(first == .records(counter: 2))

        // Bob's stream got nothing: a resync or keep-alive reaches every stream, so send one
        // and see it arrive first.
        watching.relay.live.keepAlive()
        let bobFirst = try await withTimeout {
            var events = bobStream.makeAsyncIterator()
            return await events.next()
        }
        #expect(bobFirst == .keepAlive, "bob's devices hear nothing of ada's records")
        let ownFirst = try await withTimeout {
            var events = ownStream.makeAsyncIterator()
            return await events.next()
        }
        #expect(ownFirst == .keepAlive, "the pushing device is not told of its own push")
        watching.relay.live.close(adaID, account: ada.id)
        watching.relay.live.close(bobID, account: bob.id)
        watching.relay.live.close(ownID, account: ada.id)
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
            let answer = try await withTimeout { try? await streamed.value }
            let text = try #require(answer).text
            #expect(text.hasPrefix("retry: 2000\n: sync live updates") && text.hasSuffix("event: deviceRemoved\ndata: {}\n\n"), "\(text)")
            #expect(instance.relay.live.count(account: account.id) == 0)
        }
    }

    /// A change of the circle — a list stored, a device removed — is told at once to the
    /// account's other devices, not to the one that made it; the removed device's stream ends
    /// with no keep-alive needed.
    @Test func aCircleChangeIsToldToTheOtherDevicesAndARemovedDevicesStreamEndsAtOnce() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let account = try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var laptop = TestDevice(account: "ada"), phone = TestDevice(account: "ada")
            try await laptop.join(client)
            let (otherID, otherStream) = try #require(instance.relay.live.open(account: account.id, device: TestDevice.unknownID()))
            let (ownID, ownStream) = try #require(instance.relay.live.open(account: account.id, device: laptop.id))
            let list = SyncDeviceListUpdate(expectedVersion: 0, version: 1, blob: Data("list".utf8))
            #expect(try await client.send(.put, "/v1/sync/device-list", list, headers: laptop.bearer).status == .noContent)
            #expect(try await withTimeout { await otherStream.first { _ in true } } == .circle)
            instance.relay.live.keepAlive()
            #expect(try await withTimeout { await ownStream.first { _ in true } } == .keepAlive, "not told of its own list")
            instance.relay.live.close(otherID, account: account.id)
            instance.relay.live.close(ownID, account: account.id)

            let request = try #require(try await phone.join(client).joinRequest)
            let approval = SyncApproval(
                deviceList: SyncDeviceListUpdate(expectedVersion: 1, version: 2, blob: Data("list 2".utf8)),
                envelope: SyncKeyEnvelope(deviceID: phone.id, epoch: 1, blob: Data("wrapped".utf8)))
            let approved = try await client.send(.post, "/v1/sync/join-requests/\(request.requestID)/approve", approval, headers: laptop.bearer)
            #expect(approved.status == .noContent)
            let headers = phone.bearer
            let streamed = Task { try await client.execute(uri: "/v1/sync/events", method: .get, headers: headers) }
            for _ in 0..<500 where instance.relay.live.count(account: account.id) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(try await client.execute(uri: "/v1/sync/devices/\(phone.id)", method: .delete, headers: laptop.bearer).status == .noContent)
            // No keep-alive: the removal's own notice ends the stream.
            let answer = try await withTimeout { try? await streamed.value }
            let text = try #require(answer).text
            #expect(text.hasSuffix("event: deviceRemoved\ndata: {}\n\n"), "\(text)")
            #expect(instance.relay.live.count(account: account.id) == 0)
        }
    }
}
