import Foundation
import Testing
import TresorCrypto
import TresorKeychain
import TresorSyncEngine
import TresorSyncProtocol
import TresorTestSupport

@testable import TresorSync
@testable import TresorSyncServer

/// A record a trusted device signed and sealed whose payload this version cannot read — a newer
/// Tresor's item format, or a device's bug — is set aside, never applied, and the records after
/// it apply (docs/SYNC.md, "Conflicts and deletions"): one such record does not stall sync.
@Suite("Sync engine: an unreadable record", .enabled(if: TestPostgres.shouldRun))
struct UnreadableRecordTests {
    @Test func anUnreadableRecordOfATrustedDeviceIsSetAsideAndTheRestApplies() async throws {
        let world = try await SyncWorld.make(["laptop", "desktop", "tablet"])
        let laptop = world.devices[0], desktop = world.devices[1], tablet = world.devices[2]
        try laptop.add("before", "1")
        try await laptop.engine.sync()
        // The tablet — trusted, its signature good — sends a body that opens to no keychain item.
        let unreadable = try SealedRecord.seal(
            RecordContent(payload: Data(#"{"formatVersion": 99, "item": "from a later Tresor"}"#.utf8)), recordID: UUID().uuidString,
            deviceSequence: 1, baseCounter: 0, account: SyncWorld.accountName, key: world.circleKey, device: tablet.local)
        let stored = try await world.relay.store.push([unreadable], account: world.accountID, device: tablet.local.deviceID)
        try laptop.add("after", "2")
        try await laptop.engine.sync()

        let pulled = try await desktop.engine.sync()
        #expect(try desktop.items() == ["before": "1", "after": "2"], "the records around it applied")
        #expect(pulled.held == 0, "nothing waits for an unlock or the user")
        let counts = try SyncEngine.counts(in: desktop.keychain)
        #expect(counts.changesHeld == 0)
        #expect(counts.setAside.map(\.recordID) == [unreadable.recordID])
        #expect(counts.setAside.first?.deviceID == tablet.local.deviceID)
        #expect(counts.setAside.first?.reason.contains("never applied") == true)

        // The next syncs move on past it, and never apply it; a later readable change of the
        // same record applies as usual.
        try laptop.add("later", "3")
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        #expect(try desktop.items() == ["before": "1", "after": "2", "later": "3"])
        #expect(try desktop.engine.applyHeld().applied == 0)
        #expect(try SyncEngine.counts(in: desktop.keychain).setAside.count == 1)

        var attributes = TestDevice.attributes("fixed")
        attributes.accessGroup = "A.app"
        let readable = try SealedRecord.seal(
            RecordContent(payload: try SyncedItem(itemClass: .genericPassword, attributes: attributes, secret: Data("4".utf8)).encoded()),
            recordID: unreadable.recordID, deviceSequence: 2, baseCounter: try #require(stored.records.first?.counter),
            account: SyncWorld.accountName, key: world.circleKey, device: tablet.local)
        _ = try await world.relay.store.push([readable], account: world.accountID, device: tablet.local.deviceID)
        try await desktop.engine.sync()
        #expect(try desktop.secret("fixed") == "4")
    }

    @Test func aBadlyPaddedRecordOfATrustedDeviceIsSetAsideAndTheRestOfItsPageApplies() async throws {
        let world = try await SyncWorld.make(["laptop", "desktop", "tablet"])
        let laptop = world.devices[0], desktop = world.devices[1], tablet = world.devices[2]
        // The tablet seals and signs a record whose plaintext is not laid out as a sealing device
        // pads it (non-zero bytes past the payload); the laptop writes after it, in the same page.
        var attributes = TestDevice.attributes("padded")
        attributes.accessGroup = "A.app"
        var plaintext = try RecordPadding.pad(
            RecordContent(payload: try SyncedItem(itemClass: .genericPassword, attributes: attributes, secret: Data("5".utf8)).encoded()))
        plaintext[plaintext.count - 1] = 1
        let fields = SealedRecord.Fields(
            account: SyncWorld.accountName, recordID: UUID().uuidString, deviceID: tablet.local.deviceID, deviceSequence: 1, baseCounter: 0,
            epoch: world.circleKey.epoch)
        let envelope = try Envelope.seal(plaintext, using: fields.recordKey(world.circleKey), authenticating: fields.associatedData)
        let unsigned = SealedRecord(fields: fields, envelope: envelope, signature: Data())
        let signed = SealedRecord(fields: fields, envelope: envelope, signature: try tablet.local.sign(unsigned.signedBytes))
        _ = try await world.relay.store.push(
            [SyncUpload(recordID: fields.recordID, deviceID: fields.deviceID, deviceSequence: 1, baseCounter: 0, body: signed.body)],
            account: world.accountID, device: tablet.local.deviceID)
        try laptop.add("after", "2")
        try await laptop.engine.sync()

        try await desktop.engine.sync()
        #expect(try desktop.items() == ["after": "2"], "the record after it applied; the badly padded one did not")
        let counts = try SyncEngine.counts(in: desktop.keychain)
        #expect(counts.setAside.map(\.recordID) == [fields.recordID] && counts.setAside.first?.reason.contains("padding") == true)
        #expect(try desktop.engine.applyHeld().applied == 0)
        #expect(try desktop.secret("padded") == nil, "never applied")
    }
}
