import Foundation
import Synchronization
import Testing
import TresorKeychain
import TresorSync
import TresorSyncEngine
import TresorSyncProtocol
import TresorTestSupport

/// A server in front of the real relay that alters the pages it serves.
final class HostileTransport: SyncRecordTransport, Sendable {
    let base: any SyncRecordTransport
    /// Applied to the next page served, then cleared.
    let tamper = Mutex<(@Sendable ([SyncRecord]) -> [SyncRecord])?>(nil)

    init(base: any SyncRecordTransport) { self.base = base }

    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse { try await base.push(request) }

    func page(after cursor: UInt64, limit: Int) async throws -> SyncPage {
        var page = try await base.page(after: cursor, limit: limit)
        if let tamper = tamper.withLock({ current in
            defer { current = nil }
            return current
        }) {
            page.records = tamper(page.records)
        }
        return page
    }
}

/// A hostile server cannot make a device apply a forged, replayed, reordered, dropped or
/// swapped record (docs/SYNC.md, "What a hostile server can and cannot do"): the page is
/// refused whole, nothing of it is applied, and the next honest page applies everything.
@Suite("Sync engine: a hostile server", .enabled(if: TestPostgres.shouldRun))
struct HostileTransportTests {
    /// Three records of the laptop on the server, the desktop's pull tampered by `tamper`.
    func expectRefused(
        _ reason: @escaping @Sendable (RecordRefusal) -> Bool, tamper: @escaping @Sendable ([SyncRecord], SyncWorld) -> [SyncRecord],
        appliedBefore: Int = 0
    ) async throws {
        let hostile = Mutex<[String: HostileTransport]>([:])
        var index = 0
        let world = try await SyncWorld.make { base in
            defer { index += 1 }
            let transport = HostileTransport(base: base)
            hostile.withLock { $0["\(index)"] = transport }
            return transport
        }
        let laptop = world.devices[0], desktop = world.devices[1]
        try laptop.add("a", "1")
        try laptop.add("b", "2")
        try laptop.add("c", "3")
        try await laptop.engine.sync()
        let desktopServer = try #require(hostile.withLock { $0["1"] })
        desktopServer.tamper.withLock { current in current = { records in tamper(records, world) } }
        do {
            try await desktop.engine.pull()
            Issue.record("a tampered page was applied")
        } catch SyncError.pageRefused(_, _, let why) {
            #expect(reason(why), "refused for \(why)")
        }
        #expect(try desktop.items().isEmpty)
        // The next honest page applies everything, once.
        try await desktop.engine.pull()
        #expect(try desktop.items() == ["a": "1", "b": "2", "c": "3"])
    }

    @Test func aReplayedRecordIsRefused() async throws {
        try await expectRefused({ if case .replayed = $0 { true } else { false } }) { records, _ in
            // The first record served again after the others, under a counter of its own.
            records + [SyncRecord(counter: records.last!.counter + 1, upload: records[0].upload)]
        }
    }

    @Test func aReorderedPageIsRefused() async throws {
        try await expectRefused({ if case .sequenceGap = $0 { true } else { false } }) { records, _ in
            // The server's counters in order, the uploads not.
            zip(records, [records[1], records[0], records[2]]).map { SyncRecord(counter: $0.counter, upload: $1.upload) }
        }
    }

    @Test func aDroppedRecordIsRefused() async throws {
        try await expectRefused({ if case .sequenceGap = $0 { true } else { false } }) { records, _ in
            Array(records.dropFirst())
        }
    }

    @Test func twoRecordsWithTheirBodiesSwappedAreRefused() async throws {
        try await expectRefused({ if case .outerFieldDiffers = $0 { true } else { false } }) { records, _ in
            var swapped = records
            swapped[0].upload.body = records[1].upload.body
            swapped[1].upload.body = records[0].upload.body
            return swapped
        }
    }

    @Test func aRecordOfAnUnknownDeviceIsRefused() async throws {
        try await expectRefused({ if case .unknownDevice = $0 { true } else { false } }) { records, world in
            let mallory = try! LocalDevice.create(name: "mallory")
            var attributes = TestDevice.attributes("evil")
            attributes.accessGroup = "A.app"
            let payload = try! SyncedItem(itemClass: .genericPassword, attributes: attributes, secret: Data("x".utf8)).encoded()
            let forged = try! SealedRecord.seal(
                RecordContent(payload: payload), recordID: UUID().uuidString, deviceSequence: 1, baseCounter: 0, account: world.list.account,
                key: CircleKey.generate(epoch: 1), device: mallory)
            return records + [SyncRecord(counter: records.last!.counter + 1, upload: forged)]
        }
    }
}
