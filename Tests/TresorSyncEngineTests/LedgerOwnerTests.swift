import Foundation
import Testing
import TresorKeychain
import TresorSync
import TresorSyncEngine
import TresorSyncProtocol
import TresorTestSupport

@testable import TresorSyncServer

/// A device that leaves its account and joins again — a new identity, perhaps another account —
/// keeps its keychain and its sync ledger: ``SyncEngine/adoptLedger(in:account:deviceID:)``
/// makes the ledger the new identity's before it syncs (docs/SYNC.md, "Leaving").
@Suite("Sync engine: joining again", .enabled(if: TestPostgres.shouldRun))
struct LedgerOwnerTests {
    /// A server that cannot be reached: a push seals its changes, then fails.
    struct Unreachable: SyncRecordTransport {
        struct Down: Error {}
        func push(_ request: SyncPushRequest) async throws -> SyncPushResponse { throw Down() }
        func page(after cursor: UInt64, limit: Int) async throws -> SyncPage { throw Down() }
    }

    /// `keychain` joins `world`'s account as a new device of the circle, approved by its first
    /// device and given the circle key; the other devices' engines are made again with the
    /// list that names it.
    static func join(_ world: SyncWorld, keychain: KeychainStore, name: String) async throws -> (LocalDevice, SyncEngine) {
        let device = try LocalDevice.create(name: name)
        _ = try await world.relay.store.enroll(
            SyncEnrollment(
                account: SyncWorld.accountName, password: "correct horse battery", deviceID: device.deviceID, deviceName: name,
                credentialPublicKey: device.identity.signingKey, identity: Data()),
            account: world.accountID)
        let list = try world.list.accepting(try world.list.adding(device.identity).signed(by: world.devices[0].local))
        func engine(for local: LocalDevice, _ keychain: KeychainStore) throws -> SyncEngine {
            let share = try world.circleKey.share(to: local.identity, account: SyncWorld.accountName, from: world.devices[0].local)
            return SyncEngine(
                transport: RelayTransport(relay: world.relay, account: world.accountID, deviceID: local.deviceID), device: local,
                list: list, keys: CircleKeyring([try share.open(as: local, trusting: list)]), keychain: keychain, pageSize: 50)
        }
        for other in world.devices { other.engine = try engine(for: other.local, other.keychain) }
        return (device, try engine(for: device, keychain))
    }

    @Test func aChangeSealedBeforeLeavingGoesOutUnderTheNewIdentity() async throws {
        let world = try await SyncWorld.make()
        let laptop = world.devices[0], desktop = world.devices[1]
        let account = "https://sync.example ada"
        #expect(try SyncEngine.adoptLedger(in: laptop.keychain, account: account, deviceID: laptop.local.deviceID) == .unchanged)
        try laptop.add("mail", "one")
        try await laptop.engine.sync()
        // The server goes away while a change is sent: sealed under the laptop's identity, unanswered.
        try laptop.add("bank", "pin")
        let keys = CircleKeyring([
            try world.circleKey.share(to: laptop.local.identity, account: SyncWorld.accountName, from: laptop.local)
                .open(as: laptop.local, trusting: world.list)
        ])
        let cutOff = SyncEngine(transport: Unreachable(), device: laptop.local, list: world.list, keys: keys, keychain: laptop.keychain)
        await #expect(throws: Unreachable.Down.self) { try await cutOff.push() }

        // The laptop leaves and joins again: a new identity, whose first sequence is 1.
        let (again, engine) = try await Self.join(world, keychain: laptop.keychain, name: "laptop again")
        await #expect(throws: (any Error).self, "sealed under the old identity, the change is refused under the new one") {
            try await engine.push()
        }
        #expect(try SyncEngine.adoptLedger(in: laptop.keychain, account: account, deviceID: again.deviceID) == .newDevice(unsealed: 1))
        #expect(try SyncEngine.adoptLedger(in: laptop.keychain, account: account, deviceID: again.deviceID) == .unchanged)
        #expect(try await engine.push() == 1)
        try await desktop.engine.sync()
        #expect(try desktop.items() == ["mail": "one", "bank": "pin"])
        let sent = try await world.serverRecords().filter { $0.upload.deviceID == again.deviceID }
        #expect(sent.map(\.upload.deviceSequence) == [1])
    }

    /// Another account starts afresh: every item that syncs goes to it, and its records are
    /// read from its first — not from where the old account's cursor stood.
    @Test func anotherAccountGetsEveryItemAndGivesAllOfItsOwn() async throws {
        let first = try await SyncWorld.make(["laptop"])
        let laptop = first.devices[0]
        #expect(try SyncEngine.adoptLedger(in: laptop.keychain, account: "https://one.example ada", deviceID: laptop.local.deviceID) == .unchanged)
        for service in ["mail", "bank", "shop"] { try laptop.add(service, "\(service)-secret") }
        try await laptop.engine.sync()
        #expect(try SyncEngine.appliedCursor(in: laptop.keychain) >= 3)

        let second = try await SyncWorld.make(["phone"])
        let phone = second.devices[0]
        for service in ["chat", "game"] { try phone.add(service, "\(service)-secret") }
        try await phone.engine.sync()
        let (joined, engine) = try await Self.join(second, keychain: laptop.keychain, name: "laptop")
        #expect(
            try SyncEngine.adoptLedger(in: laptop.keychain, account: "https://two.example ada", deviceID: joined.deviceID) == .newAccount)
        #expect(try laptop.keychain.recordSyncingItemsWithoutRecord() == 3)
        try await engine.sync()
        #expect(Set(try laptop.items().keys) == ["mail", "bank", "shop", "chat", "game"])
        try await phone.engine.sync()
        #expect(Set(try phone.items().keys) == ["mail", "bank", "shop", "chat", "game"])
    }
}
