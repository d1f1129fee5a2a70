import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

@testable import TresorSync

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

    /// What waits to go out is sent before the device leaves, when the server answers; with the
    /// server gone, the device still leaves, and says what the others will not get and how one
    /// of them removes it.
    @Test func leavingSendsWhatWaitsOrSaysWhatStaysHere() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }
        try SyncNowTests.add(phone, service: "sent.example.com", secret: "e2e-sent-as-it-left")
        let left = try phone.tresor(["sync", "leave"])
        #expect(left.succeeded && !left.stderr.contains("never reached"), "\(left.stderr)")
        #expect(try SyncNowTests.syncNow(laptop).applied == 1)
        #expect(try SyncNowTests.secret(laptop, service: "sent.example.com") == "e2e-sent-as-it-left")

        try SyncNowTests.add(laptop, service: "kept.example.com", secret: "e2e-kept-here")
        for server in cluster.harnesses { server.stopDaemon() }
        let offline = try laptop.tresor(["sync", "leave"])
        #expect(offline.succeeded, "\(offline.stderr)")
        #expect(offline.stderr.contains("1 change made on this device never reached the sync server"), "\(offline.stderr)")
        #expect(offline.stderr.contains("`tresor sync remove laptop`"), "\(offline.stderr)")
        #expect(try SyncNowTests.secret(laptop, service: "kept.example.com") == "e2e-kept-here", "it stays here")
    }

    /// Three devices: the tablet leaves, and the laptop's next sync rolls the circle key — what
    /// the circle writes from then on opens with no key the tablet held — and the phone reads it.
    @Test func aDeviceThatLeavesHasTheKeyRolledByTheNextTrustedDeviceThatSyncs() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password), tablet = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        for (device, name) in [(phone, "phone"), (tablet, "tablet")] {
            try SyncE2E.joinApproved(device, server, name: name, password: password, by: laptop)
        }
        let left = try tablet.tresor(["sync", "leave"])
        #expect(left.succeeded, "\(left.stderr)")

        try SyncNowTests.add(laptop, service: "after.example.com", secret: "e2e-written-after-the-tablet-left")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        let status = try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"])
        #expect(status.epoch == 2 && status.trustedDevices.map(\.name) == ["laptop", "phone"], "\(status)")
        let bodies = try await TestPostgres.texts(
            """
            SELECT encode(r.body, 'base64') FROM sync_records r
            JOIN sync_devices d ON d.account_id = r.account_id AND d.id = r.device_id WHERE d.name = 'laptop'
            """, database: cluster.databaseName)
        let epochs = try bodies.map { try SealedRecord(body: try #require(Data(base64Encoded: $0, options: .ignoreUnknownCharacters))).epoch }
        #expect(epochs == [2], "sealed under the key rolled after the tablet left")
        // The new epoch's key went to the phone and the recovery identity only.
        let circle = try await SyncDevicesE2ETests.latestList(cluster)
        let shares = try await SyncDevicesE2ETests.envelopes(cluster, epoch: 2)
        #expect(circle.epoch == 2 && circle.members.map(\.name) == ["laptop", "phone"])
        #expect(Set(shares.map(\.recipientID)) == Set(circle.keyRecipients.map(\.deviceID)), "no share for the tablet")

        let received = try SyncNowTests.syncNow(phone)
        #expect(received.applied == 1, "\(received)")
        #expect(try SyncNowTests.secret(phone, service: "after.example.com") == "e2e-written-after-the-tablet-left")
        #expect(try SyncDevicesE2ETests.keys(of: phone).1.epochs == [1, 2])
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).epoch == 2)
    }
}
