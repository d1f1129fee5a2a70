import Foundation
import Testing
import TresorKit
import TresorTestSupport

/// The daemon closes a connection left unused (`socketIdleSeconds`, here 2; docs/API.md,
/// "Connections"): a client idle for half of that opens a new one for its next call, unless it
/// holds auto-lock off — that one the daemon keeps, and the client keeps using it.
@Suite struct IdleConnectionTests {
    @Test func aClientIdleLongerThanTheDaemonKeepsAConnectionCallsOnANewOne() async throws {
        let daemon = try TresordFixture(passcode: "idle-passcode", configuration: #"{"socketIdleSeconds": 2}"#)
        let client = try TresorClient.connect(paths: daemon.paths, startDaemon: false)
        #expect(try client.status().keybag == .unlocked)
        // A connection the daemon closed while the client was not looking: its next call fails
        // unless the client knew to open a new one.
        try await Task.sleep(for: .seconds(3))
        #expect(try client.status().keybag == .unlocked)
        // The same through `Keychain`'s connections.
        try daemon.register(id: "TESTI.idle", team: "TESTI")
        let keychain = try daemon.keychain()
        let item = ItemQuery.genericPassword(service: "idle.example.com", account: "ada")
        try await keychain.add(item, secret: Data("s3cret-idle".utf8))
        try await Task.sleep(for: .seconds(3))
        #expect(try await keychain.secret(item) == Data("s3cret-idle".utf8))
    }

    @Test func aClientHoldingAutoLockOffKeepsItsConnection() async throws {
        let daemon = try TresordFixture(passcode: "idle-hold-passcode", configuration: #"{"socketIdleSeconds": 2}"#)
        let client = try TresorClient.connect(paths: daemon.paths, startDaemon: false)
        let hold = try client.holdAutoLock(reason: "a long job")
        try await Task.sleep(for: .seconds(3))
        let observer = try TresorClient.connect(paths: daemon.paths, startDaemon: false)
        #expect(try observer.status().holds.map(\.id) == [hold.id], "the hold ended with its connection")
        // Only the connection that made a hold may end it: this is still that connection.
        try client.releaseHold(hold)
        #expect(try observer.status().holds.isEmpty)
        // With no hold left, the client goes back to opening a new connection after a while.
        try await Task.sleep(for: .seconds(3))
        #expect(try client.status().keybag == .unlocked)
    }
}
