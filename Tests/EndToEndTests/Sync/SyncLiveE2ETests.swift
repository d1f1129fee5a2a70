import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// The daemon's background sync (docs/SYNC.md, "Background sync"): two device homes whose
/// `tresord` sync by themselves — no `tresor sync now` — through real server instances. Arrival
/// is polled with a generous deadline; how fast it is, the benchmark harness measures.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncLiveE2ETests {
    static func status(_ device: Harness) throws -> SyncStatusAnswer {
        try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"])
    }

    /// Waits until both daemons hold the server's live-events stream open.
    static func waitUntilLive(_ devices: Harness...) throws {
        try waitUntil("the live-events streams open") { try devices.allSatisfy { try status($0).live == true } }
        for device in devices {
            let shown = try device.tresor(["sync", "status"]).stdout
            #expect(shown.contains("Live:     listening to the server"), "tresor sync status says so too: \(shown)")
        }
    }

    @Test func anItemAddedOnOneDeviceIsOnTheOtherWithoutSyncNow() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try Self.waitUntilLive(laptop, phone)

        try SyncNowTests.add(laptop, service: "live.example.com", secret: "e2e-live-secret")
        try await waitUntil("the laptop's item on the phone") {
            try SyncNowTests.secret(phone, service: "live.example.com") == "e2e-live-secret"
        }
        // And back: the phone's update reaches the laptop.
        try SyncNowTests.update(phone, service: "live.example.com", secret: "e2e-live-secret-2")
        try await waitUntil("the phone's update on the laptop") {
            try SyncNowTests.secret(laptop, service: "live.example.com") == "e2e-live-secret-2"
        }
        // An item that does not sync stays.
        try SyncNowTests.add(laptop, service: "local.example.com", secret: "e2e-live-stays-here", synchronizable: false)
        try SyncNowTests.add(laptop, service: "marker.example.com", secret: "e2e-live-marker")
        try await waitUntil("the marker after it on the phone") {
            try SyncNowTests.secret(phone, service: "marker.example.com") == "e2e-live-marker"
        }
        #expect(try SyncNowTests.secret(phone, service: "local.example.com", synchronizable: false) == nil)
        // `tresor sync now` while the daemons sync by themselves: each sync waits for the one running.
        for n in 0..<3 {
            try SyncNowTests.add(laptop, service: "race\(n).example.com", secret: "e2e-race-\(n)")
            _ = try SyncNowTests.syncNow(phone)
            _ = try SyncNowTests.syncNow(laptop)
        }
        try await waitUntil("the last of them on the phone") {
            try SyncNowTests.secret(phone, service: "race2.example.com") == "e2e-race-2"
        }

        for device in [laptop, phone] {
            let status = try Self.status(device)
            #expect(status.lastError == nil, "\(status.lastError ?? "")")
            #expect(status.counters?.changesWaiting == 0)
            #expect(!device.daemonLog.contains("e2e-live-secret"))
        }
    }

    @Test func anItemArrivingWhileTheKeybagIsLockedIsAppliedAtTheUnlock() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try Self.waitUntilLive(laptop, phone)
        #expect(try phone.tresor(["lock"]).succeeded)

        // `always` opens while the keybag is locked: were the item applied, it would show.
        let added = try laptop.tresor(
            [
                "item", "add", "--service", "locked.example.com", "--account", "ada", "--readable-by-scripts", "--secret-stdin",
                "--synchronizable", "--accessible", "always",
            ],
            input: "e2e-while-locked\n")
        #expect(added.succeeded, "\(added.stderr)")
        try await waitUntil("the laptop sent it") { try Self.status(laptop).counters?.changesWaiting == 0 }
        // The phone heard of it (its stream is open) but applies nothing while locked.
        try await waitUntil("the phone still listening") { try Self.status(phone).live == true }
        usleep(1_500_000)
        #expect(try SyncNowTests.secret(phone, service: "locked.example.com") == nil)

        #expect(try phone.tresor(["unlock", "--passcode-stdin"], input: SyncE2E.passcode + "\n").succeeded)
        try await waitUntil("the item on the phone after the unlock") {
            try SyncNowTests.secret(phone, service: "locked.example.com") == "e2e-while-locked"
        }
        #expect(try Self.status(phone).lastError == nil)
    }

    @Test func devicesOnTwoServerInstancesStillSyncLive() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true, instances: 2)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        #expect(try Self.status(laptop).server != (try Self.status(phone).server), "each device on its own instance")
        try Self.waitUntilLive(laptop, phone)

        try SyncNowTests.add(laptop, service: "a.example.com", secret: "e2e-instance-a")
        try await waitUntil("the laptop's item on the phone, through the other instance") {
            try SyncNowTests.secret(phone, service: "a.example.com") == "e2e-instance-a"
        }
        try SyncNowTests.add(phone, service: "b.example.com", secret: "e2e-instance-b")
        try await waitUntil("the phone's item on the laptop") {
            try SyncNowTests.secret(laptop, service: "b.example.com") == "e2e-instance-b"
        }
    }

    @Test func aFailedBackgroundSyncIsInSyncStatusAndTheChangeWaits() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try Self.waitUntilLive(laptop, phone)
        let server = try #require(Self.status(laptop).server)
        let live = try laptop.tresor(["status"]).stdout
        #expect(live.contains("Sync:       ada on \(server), live") && !live.contains("last sync failed"), "\(live)")
        cluster.harnesses[0].stopDaemon()
        try SyncNowTests.add(laptop, service: "offline.example.com", secret: "e2e-offline-secret")
        try await waitUntil("the failure in sync status") {
            let status = try Self.status(laptop)
            return status.lastError != nil && status.live == false
        }
        let status = try Self.status(laptop)
        #expect(status.lastError?.contains("cannot be reached") == true, "\(status.lastError ?? "")")
        #expect(status.lastErrorAt != nil && status.counters?.changesWaiting == 1)
        #expect(!(status.lastError ?? "").contains("e2e-offline") && !laptop.daemonLog.contains("e2e-offline-secret"))
        // `tresor status` says so too, and where to look.
        let shown = try laptop.tresor(["status"]).stdout
        #expect(shown.contains("Sync:       ada on \(server), not listening now"), "\(shown)")
        #expect(shown.contains("last sync failed: the sync server cannot be reached") && shown.contains("1 change waiting to go out"), "\(shown)")
    }

    @Test func aRemovedDeviceLearnsItAndStopsListening() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try Self.waitUntilLive(laptop, phone)
        _ = try SyncE2E.sync(laptop, SyncDeviceInfo.self, ["remove", "phone", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        // No command on the phone: its stream (an event, or the keep-alive's deviceRemoved) tells it.
        try await waitUntil("the phone knows it was removed and stopped listening") {
            let status = try Self.status(phone)
            return status.state == .removed && status.live == false
        }
        try SyncNowTests.add(laptop, service: "after.example.com", secret: "e2e-after-removal")
        try await waitUntil("the laptop sent it") { try Self.status(laptop).counters?.changesWaiting == 0 }
        #expect(try Self.status(laptop).lastError == nil)
    }

    @Test func leavingStopsTheBackgroundSync() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices(background: true)
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try Self.waitUntilLive(laptop, phone)
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["leave"]).joined == false)
        try SyncNowTests.add(laptop, service: "after.example.com", secret: "e2e-after-leave")
        try await waitUntil("the laptop sent it") { try Self.status(laptop).counters?.changesWaiting == 0 }
        usleep(1_500_000)
        #expect(try SyncNowTests.secret(phone, service: "after.example.com") == nil, "a device that left receives nothing")
        #expect(try Self.status(phone).joined == false)
    }
}
