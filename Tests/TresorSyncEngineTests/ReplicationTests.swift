import Foundation
import Synchronization
import Testing
import TresorKeychain
import TresorSync
import TresorSyncEngine
import TresorSyncProtocol
import TresorTestSupport

/// Changes of one device reaching the others through a real relay on PostgreSQL, and the
/// conflict rules (docs/SYNC.md, "Conflicts and deletions").
@Suite("Sync engine: replication", .enabled(if: TestPostgres.shouldRun))
struct ReplicationTests {
    @Test func anAddAnUpdateAndADeleteReachTheOtherDevice() async throws {
        let world = try await SyncWorld.make()
        let laptop = world.devices[0], desktop = world.devices[1]
        try laptop.add("mail", "one")
        try laptop.add("bank", "pin", accessible: .afterFirstUnlock)
        try await laptop.engine.sync()
        #expect(try laptop.keychain.pendingSyncChanges() == 0)
        try await desktop.engine.sync()
        #expect(try desktop.items() == ["mail": "one", "bank": "pin"])

        try desktop.update("mail", "two")
        try await desktop.engine.sync()
        try await laptop.engine.sync()
        #expect(try laptop.secret("mail") == "two")

        try laptop.delete("bank")
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        #expect(try desktop.items() == ["mail": "two"])
        #expect(try laptop.conflicts().isEmpty && desktop.conflicts().isEmpty)
        // The relay holds what the devices sent, opaque: no secret or service in the clear.
        for record in try await world.serverRecords() {
            let body = String(decoding: record.upload.body, as: UTF8.self)
            #expect(!body.contains("mail") && !body.contains("two") && !body.contains("pin"))
        }
    }

    /// A deletion is padded as the version it deletes, whether that was sent from here or
    /// arrived: the server cannot tell it from a change by its size (docs/SYNC.md, "What the
    /// server learns").
    @Test func aDeletionIsAsLargeAsTheVersionItDeletes() async throws {
        let world = try await SyncWorld.make()
        let laptop = world.devices[0], desktop = world.devices[1]
        try laptop.add("small", "x")
        try laptop.add("typical", String(repeating: "p", count: 300))
        try laptop.add("large", String(repeating: "k", count: 3000))
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        try desktop.delete("typical")
        try laptop.delete("large")
        try laptop.delete("small")
        try await desktop.engine.sync()
        try await laptop.engine.sync()
        let records = try await world.serverRecords()
        let byRecord = Dictionary(grouping: records, by: \.upload.recordID)
        #expect(byRecord.count == 3 && records.count == 6, "\(records.count) records")
        for versions in byRecord.values {
            #expect(Set(versions.map(\.upload.body.count)).count == 1, "a version and its deletion differ: \(versions.map(\.upload.body.count))")
        }
        #expect(Set(records.map(\.upload.body.count)).count == 3, "three sizes of items")
        try await desktop.engine.sync()
        #expect(try laptop.items().isEmpty && desktop.items().isEmpty, "the padded deletions apply")
    }

    /// Every class × synchronizable: only the three shared classes with `synchronizable` go out;
    /// nothing of a *ThisDeviceOnly* class, of a non-synchronizable item or of a created keychain.
    @Test func nothingOfTheNeverKindsIsEverPushed() async throws {
        let world = try await SyncWorld.make()
        let laptop = world.devices[0], desktop = world.devices[1]
        for protectionClass in ProtectionClass.allCases {
            // A *ThisDeviceOnly* class cannot be synchronizable: adding one so is refused.
            for synchronizable in [true, false, nil] as [Bool?] where synchronizable != true || !protectionClass.isThisDeviceOnly {
                try laptop.keychain.add(
                    .genericPassword,
                    attributes: TestDevice.attributes(
                        "\(protectionClass.rawValue)-\(String(describing: synchronizable))", accessible: protectionClass,
                        synchronizable: synchronizable),
                    secret: Data("secret".utf8), caller: testCaller)
            }
        }
        let work = try KeychainStore(file: laptop.root.appendingPathComponent("work.keychain.db"), keybag: laptop.keybag, name: "work")
        // A created keychain's items cannot be synchronizable (KeychainSyncOutboxTests): its others stay too.
        try work.add(
            .genericPassword, attributes: TestDevice.attributes("created-keychain", synchronizable: false), secret: Data("x".utf8), caller: testCaller
        )
        try await laptop.engine.sync()
        #expect(try await world.serverRecords().count == 3)
        try await desktop.engine.sync()
        #expect(Set(try desktop.items().keys) == ["whenUnlocked-Optional(true)", "afterFirstUnlock-Optional(true)", "always-Optional(true)"])
    }

    /// Two devices edit one item from the same version: the change the server ordered later
    /// wins on both, the other is kept on both, and restoring it brings it back everywhere.
    @Test func ofTwoConcurrentEditsTheLaterWinsAndTheLoserIsKept() async throws {
        let world = try await SyncWorld.make()
        let laptop = world.devices[0], desktop = world.devices[1]
        try laptop.add("mail", "base")
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        try laptop.update("mail", "laptop's")
        try desktop.update("mail", "desktop's")
        try await laptop.engine.sync()  // ordered first
        try await desktop.engine.sync()  // ordered later: wins
        try await laptop.engine.sync()
        #expect(try laptop.secret("mail") == "desktop's")
        #expect(try desktop.secret("mail") == "desktop's")
        #expect(try laptop.conflicts().map(\.secret) == ["laptop's"])
        #expect(try desktop.conflicts().map(\.secret) == ["laptop's"])
        // The losing version is kept sealed, like an item.
        #expect(!laptop.filesContain("laptop's") && !desktop.filesContain("laptop's"))

        let kept = try #require(try laptop.conflicts().first)
        try laptop.engine.restoreConflict(kept.id, caller: testCaller)
        #expect(try laptop.conflicts().isEmpty)
        #expect(try laptop.secret("mail") == "laptop's")
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        #expect(try desktop.secret("mail") == "laptop's")
        // The desktop kept the same version: restored elsewhere, it is no longer a losing one there.
        #expect(try desktop.conflicts().isEmpty)
    }

    /// The same primary key added offline on two devices: one item on both, the loser kept.
    @Test func theSamePrimaryKeyAddedOnTwoDevicesEndsAsOneItem() async throws {
        let world = try await SyncWorld.make()
        let laptop = world.devices[0], desktop = world.devices[1]
        try laptop.add("mail", "laptop's")
        try desktop.add("mail", "desktop's")
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        try await laptop.engine.sync()
        #expect(try laptop.items() == ["mail": "desktop's"])
        #expect(try desktop.items() == ["mail": "desktop's"])
        #expect(try laptop.conflicts().map(\.secret) == ["laptop's"])
        #expect(try desktop.conflicts().map(\.secret) == ["laptop's"])
        // Later edits of the one item still reach the other device.
        try laptop.update("mail", "after")
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        #expect(try desktop.items() == ["mail": "after"])
    }

    /// Conflicts are kept where the losing version was held: a device catching up on the
    /// account's history afterwards (a new one) receives both versions one after the other and
    /// keeps neither as a conflict, for two edits of one item as for one key added twice.
    @Test func aDeviceCatchingUpKeepsNoConflictItNeverHeldAVersionOf() async throws {
        let world = try await SyncWorld.make(["laptop", "desktop", "phone"])
        let laptop = world.devices[0], desktop = world.devices[1], phone = world.devices[2]
        try laptop.add("mail", "base")
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        try laptop.update("mail", "laptop's")
        try desktop.update("mail", "desktop's")
        try laptop.add("bank", "laptop's pin")
        try desktop.add("bank", "desktop's pin")
        try await laptop.engine.sync()
        try await desktop.engine.sync()
        try await laptop.engine.sync()
        #expect(Set(try laptop.conflicts().map(\.secret)) == ["laptop's", "laptop's pin"])
        #expect(Set(try desktop.conflicts().map(\.secret)) == ["laptop's", "laptop's pin"])

        try await phone.engine.sync()
        #expect(try phone.items() == ["mail": "desktop's", "bank": "desktop's pin"])
        #expect(try phone.conflicts().isEmpty)
    }

    /// A deletion and an edit made from the same version: the edit survives, in either order.
    @Test func anEditConcurrentWithADeletionSurvivesIt() async throws {
        for deleteFirst in [true, false] {
            let world = try await SyncWorld.make()
            let laptop = world.devices[0], desktop = world.devices[1]
            try laptop.add("mail", "base")
            try await laptop.engine.sync()
            try await desktop.engine.sync()
            try laptop.delete("mail")
            try desktop.update("mail", "edited")
            if deleteFirst {
                try await laptop.engine.sync()
                try await desktop.engine.sync()
            } else {
                try await desktop.engine.sync()
                try await laptop.engine.sync()
            }
            try await laptop.engine.sync()
            try await desktop.engine.sync()
            #expect(try laptop.items() == ["mail": "edited"], "delete first: \(deleteFirst)")
            #expect(try desktop.items() == ["mail": "edited"], "delete first: \(deleteFirst)")
        }
    }

    /// The server stored a push but the device crashed before committing its answer: the retry
    /// sends the same sealed records, the server answers them again, and nothing is stored twice.
    @Test func aPushRetriedAfterACrashStoresNothingTwice() async throws {
        let crash = CrashAfterPush()
        let world = try await SyncWorld.make { CrashingTransport(base: $0, crash: crash) }
        let laptop = world.devices[0], desktop = world.devices[1]
        try laptop.add("mail", "one")
        try laptop.add("bank", "two")
        crash.armed.withLock { $0 = true }
        await #expect(throws: CrashAfterPush.self) { try await laptop.engine.push() }
        #expect(try await world.serverRecords().count == 2)
        #expect(try laptop.keychain.pendingSyncChanges() == 2)
        // A change made meanwhile goes after them.
        try laptop.update("mail", "three")
        try await laptop.engine.sync()
        #expect(try laptop.keychain.pendingSyncChanges() == 0)
        let stored = try await world.serverRecords()
        #expect(stored.map(\.upload.deviceSequence) == [1, 2, 3])
        try await desktop.engine.sync()
        #expect(try desktop.items() == ["mail": "three", "bank": "two"])
        #expect(try desktop.conflicts().isEmpty)
    }
}

/// What a crash after the server answered a push looks like to the engine.
final class CrashAfterPush: Error, Sendable {
    let armed = Mutex(false)
}

/// Passes calls to the relay; when armed, the push reaches the server and its answer is lost.
struct CrashingTransport: SyncRecordTransport {
    let base: any SyncRecordTransport
    let crash: CrashAfterPush

    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        let answer = try await base.push(request)
        if crash.armed.withLock({ armed in
            defer { armed = false }
            return armed
        }) {
            throw crash
        }
        return answer
    }

    func page(after cursor: UInt64, limit: Int) async throws -> SyncPage {
        try await base.page(after: cursor, limit: limit)
    }
}

/// Passes calls to the relay, but the `failing`-th page request fails, as a connection lost
/// (or a device killed) between two pages.
final class PageFailingTransport: SyncRecordTransport, Sendable {
    let base: any SyncRecordTransport
    let calls = Mutex(0)
    let failing: Int

    init(base: any SyncRecordTransport, failing: Int) {
        self.base = base
        self.failing = failing
    }

    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse { try await base.push(request) }

    func page(after cursor: UInt64, limit: Int) async throws -> SyncPage {
        let call = calls.withLock { calls in
            calls += 1
            return calls
        }
        if call == failing { throw CrashAfterPush() }
        return try await base.page(after: cursor, limit: limit)
    }
}

@Suite("Sync engine: interrupted pulls", .enabled(if: TestPostgres.shouldRun))
struct InterruptedPullTests {
    /// Each page is applied with the progress in one transaction: a pull cut between two pages
    /// keeps the pages before, and the next resumes after them — nothing lost, nothing twice.
    @Test func aPullCutBetweenPagesResumesWithoutLossOrDuplicate() async throws {
        var index = 0
        let world = try await SyncWorld.make { base in
            defer { index += 1 }
            return index == 1 ? PageFailingTransport(base: base, failing: 2) : base  // the desktop's
        }
        let laptop = world.devices[0], desktop = world.devices[1]
        for index in 0..<120 { try laptop.add("item\(index)", "s\(index)") }
        try await laptop.engine.sync()
        await #expect(throws: CrashAfterPush.self) { try await desktop.engine.pull() }
        #expect(try desktop.items().count == 50)  // the first page, committed
        let summary = try await desktop.engine.pull()
        #expect(summary.applied == 70)
        #expect(try desktop.items().count == 120)
        #expect(try desktop.conflicts().isEmpty)
    }
}
