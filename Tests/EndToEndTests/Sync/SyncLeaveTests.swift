import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// `tresor sync leave` (docs/SYNC.md, "Devices"): the leaving device signs the list without
/// itself, so the others stop naming it with no one removing it.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncLeaveTests {
    @Test func aDeviceThatLeavesIsNoLongerInTheOthersList() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }
        try SyncNowTests.add(phone, service: "phone.example.com", secret: "e2e-written-before-leaving")
        #expect(try SyncNowTests.syncNow(phone).pushed == 1)
        let before = try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"])

        let left = try phone.tresor(["sync", "leave"])
        #expect(left.succeeded, "\(left.stderr)")
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).joined == false)
        #expect(try SyncNowTests.secret(phone, service: "phone.example.com") == "e2e-written-before-leaving", "its data stays")

        // The laptop accepts the list the phone signed as it left: only itself, the same epoch.
        #expect(try SyncE2E.sync(laptop, SyncDevicesAnswer.self, ["devices"]).devices.map(\.name) == ["laptop"])
        let after = try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"])
        #expect(after.listVersion == before.listVersion.map { $0 + 1 } && after.epoch == before.epoch, "\(after)")
        // What the phone wrote before it left still applies.
        #expect(try SyncNowTests.syncNow(laptop).applied == 1)
        #expect(try SyncNowTests.secret(laptop, service: "phone.example.com") == "e2e-written-before-leaving")
    }
}
