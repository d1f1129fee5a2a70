import Foundation
import Synchronization
import Testing
import TresorKeychain
import TresorSync
import TresorSyncEngine
import TresorSyncProtocol
import TresorTestSupport

/// A user's first device sending everything (the seeding): the outbox is read a request at a
/// time, each record goes once, and a push cut midway resumes without loss or duplicate.
@Suite("Sync engine: seeding", .enabled(if: TestPostgres.shouldRun))
struct SeedingTests {
    static let items = 300

    /// 300 changes go in ⌈300 / 64⌉ = 5 requests, each record once, the device sequences
    /// 1…300 in order.
    @Test func theSeedingOfNRecordsMakesTheExpectedRequestsAndSendsEachRecordOnce() async throws {
        let counting = CountingTransport.Box()
        let world = try await SyncWorld.make { base in CountingTransport(base: base, box: counting) }
        let laptop = world.devices[0], desktop = world.devices[1]
        for index in 0..<Self.items { try laptop.add("item\(index)", "s\(index)") }
        #expect(try await laptop.engine.push() == Self.items)
        let pushes = counting.pushes.withLock { $0 }
        #expect(pushes.map(\.count) == [64, 64, 64, 64, 44])
        let sent = pushes.flatMap { $0 }
        #expect(sent.map(\.deviceSequence) == Array(1...UInt64(Self.items)))
        #expect(Set(sent.map(\.recordID)).count == Self.items)
        #expect(try laptop.keychain.pendingSyncChanges() == 0)
        #expect(try await world.serverRecords().count == Self.items)
        #expect(try await laptop.engine.push() == 0)
        #expect(counting.pushes.withLock { $0.count } == 5, "nothing left to send")
        try await desktop.engine.pull()
        let items = try desktop.items()
        #expect(items.count == Self.items)
        #expect(items["item299"] == "s299")
    }

    /// Records of a little over 256 KiB (a 128 KiB secret, padded, signed) go 15 to a request
    /// (4 MiB): the push seals all 40, sends 15; an item sealed but not sent yet changes
    /// meanwhile, and that change waits for the answer of the one sealed before — then goes in
    /// the same push, last.
    @Test func aChangeOfARecordSealedButNotAnsweredGoesAfterItsAnswerInTheSamePush() async throws {
        let counting = CountingTransport.Box()
        let world = try await SyncWorld.make { base in CountingTransport(base: base, box: counting) }
        let laptop = world.devices[0], desktop = world.devices[1]
        let large = String(repeating: "x", count: 128 * 1024)
        for index in 0..<40 { try laptop.add("big\(index)", "\(index) \(large)") }
        counting.onFirstPush.withLock { $0 = { try laptop.update("big39", "changed") } }
        #expect(try await laptop.engine.push() == 41)
        let pushes = counting.pushes.withLock { $0 }
        #expect(pushes.map(\.count) == [15, 15, 10, 1])
        let sent = pushes.flatMap { $0 }
        #expect(sent.map(\.deviceSequence) == Array(1...41))
        #expect(sent.last?.recordID == sent[39].recordID)
        #expect(sent.last?.baseCounter == (try await world.serverRecords())[39].counter)
        #expect(try laptop.keychain.pendingSyncChanges() == 0)
        try await desktop.engine.pull()
        #expect(try desktop.secret("big39") == "changed")
        #expect(try desktop.items().count == 40)
        #expect(try desktop.conflicts().isEmpty)
    }

    /// The seeding is cut after the server stored the second request and before the device
    /// heard: the next push sends that request again as it was, then the rest, and the server
    /// holds each record once.
    @Test func aSeedingCutMidwayResumesWithoutLossOrDuplicate() async throws {
        let counting = CountingTransport.Box()
        counting.losingAnswerOf.withLock { $0 = 2 }
        let world = try await SyncWorld.make { base in CountingTransport(base: base, box: counting) }
        let laptop = world.devices[0], desktop = world.devices[1]
        for index in 0..<Self.items { try laptop.add("item\(index)", "s\(index)") }
        await #expect(throws: CrashAfterPush.self) { try await laptop.engine.push() }
        #expect(try await world.serverRecords().count == 2 * SyncLimits.uploadsPerPush)
        #expect(try laptop.keychain.pendingSyncChanges() == Self.items - SyncLimits.uploadsPerPush)
        try await laptop.engine.push()
        let pushes = counting.pushes.withLock { $0 }
        #expect(pushes[2] == pushes[1], "the cut request goes again as it was")
        let stored = try await world.serverRecords()
        #expect(stored.map(\.upload.deviceSequence) == Array(1...UInt64(Self.items)))
        #expect(Set(stored.map(\.upload.recordID)).count == Self.items)
        try await desktop.engine.pull()
        #expect(try desktop.items().count == Self.items)
        #expect(try desktop.conflicts().isEmpty)
    }
}

/// Passes calls to the relay and keeps what each push sent; it may run something during the
/// first push, and lose the answer of one push (as a device killed after the server stored it).
struct CountingTransport: SyncRecordTransport {
    final class Box: Sendable {
        let pushes = Mutex<[[SyncUpload]]>([])
        let onFirstPush = Mutex<(@Sendable () throws -> Void)?>(nil)
        let losingAnswerOf = Mutex<Int?>(nil)
    }

    let base: any SyncRecordTransport
    let box: Box

    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        let number = box.pushes.withLock { pushes in
            pushes.append(request.uploads)
            return pushes.count
        }
        if number == 1, let during = box.onFirstPush.withLock({ $0 }) { try during() }
        let answer = try await base.push(request)
        if box.losingAnswerOf.withLock({ $0 }) == number { throw CrashAfterPush() }
        return answer
    }

    func page(after cursor: UInt64, limit: Int) async throws -> SyncPage {
        try await base.page(after: cursor, limit: limit)
    }
}
