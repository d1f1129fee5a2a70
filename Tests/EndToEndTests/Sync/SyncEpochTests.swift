import Foundation
import Synchronization
import Testing
import TresorProtocol
import TresorTestSupport

@testable import TresorSync

/// After a removal rolls the circle's key (docs/SYNC.md, "Devices"), every remaining device
/// reads and writes in the new epoch: three device homes, each with its own `tresord`, joined to
/// a real server instance on a throwaway PostgreSQL.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncEpochTests {
    @Test func aRemainingDeviceLearnsTheNewEpochAtItsNextSyncAndStillReadsTheOldOne() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password), tablet = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        for (device, name) in [(phone, "phone"), (tablet, "tablet")] {
            try SyncE2E.joinApproved(device, server, name: name, password: password, by: laptop)
        }
        // The tablet writes in epoch 1 before it is removed: what it sent up to then stays readable.
        try SyncNowTests.add(tablet, service: "old.example.com", secret: "e2e-epoch-one-secret")
        #expect(try SyncNowTests.syncNow(tablet).pushed == 1)

        _ = try SyncE2E.sync(laptop, SyncDeviceInfo.self, ["remove", "tablet", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).epoch == 2)
        try SyncNowTests.add(laptop, service: "new.example.com", secret: "e2e-epoch-two-secret")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)

        // The phone never saw the removal: its sync meets list version 4 (epoch 2) and a record
        // sealed under epoch 2, fetches its envelope, and reads both epochs.
        #expect(try SyncDevicesE2ETests.keys(of: phone).1.epochs == [1])
        let received = try SyncNowTests.syncNow(phone)
        #expect(received.applied == 2, "\(received)")
        #expect(try SyncNowTests.secret(phone, service: "new.example.com") == "e2e-epoch-two-secret")
        #expect(try SyncNowTests.secret(phone, service: "old.example.com") == "e2e-epoch-one-secret")
        #expect(try SyncDevicesE2ETests.keys(of: phone).1.epochs == [1, 2], "the old epoch's key is kept")
        let status = try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"])
        #expect(status.epoch == 2 && status.trustedDevices.map(\.name) == ["laptop", "phone"], "\(status)")

        // What the phone writes now is sealed under epoch 2, and the laptop reads it.
        try SyncNowTests.add(phone, service: "phone.example.com", secret: "e2e-from-the-phone-in-epoch-two")
        #expect(try SyncNowTests.syncNow(phone).pushed == 1)
        let bodies = try await TestPostgres.texts(
            """
            SELECT encode(r.body, 'base64') FROM sync_records r
            JOIN sync_devices d ON d.account_id = r.account_id AND d.id = r.device_id WHERE d.name = 'phone'
            """, database: cluster.databaseName)
        let epochs = try bodies.map { try SealedRecord(body: try #require(Data(base64Encoded: $0, options: .ignoreUnknownCharacters))).epoch }
        #expect(epochs == [2], "the phone seals with the newest key it holds")
        #expect(try SyncNowTests.syncNow(laptop).applied == 1)
        #expect(try SyncNowTests.secret(laptop, service: "phone.example.com") == "e2e-from-the-phone-in-epoch-two")
        #expect(!phone.daemonLog.contains("e2e-epoch-two-secret") && !laptop.daemonLog.contains("e2e-from-the-phone-in-epoch-two"))

        // The removed tablet holds no envelope of epoch 2: its sync is refused, and it is told to leave.
        let refused = try tablet.tresor(["sync", "now"])
        #expect(!refused.succeeded && refused.stderr.contains("tresor sync leave"), "\(refused.stderr)")
        #expect(try SyncDevicesE2ETests.keys(of: tablet).1.epochs == [1])
        #expect(try SyncNowTests.secret(tablet, service: "new.example.com") == nil)
    }

    @Test func aKeyRollDuringASyncIsReadInThatSameSync() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        nonisolated(unsafe) let laptop = try SyncE2E.device(password)
        let phone = try SyncE2E.device(password), tablet = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        // The laptop removes the tablet and writes in epoch 2 just before the phone's first page
        // request reaches the server: the phone read the list of epoch 1 in that same sync.
        let steps = Mutex<[Bool]>([])
        let proxy = try CuttingProxy(upstream: server.port, trigger: "GET /v1/sync/records", forwardsAfterCut: true) {
            let done = [
                (try? laptop.tresor(["sync", "remove", "tablet", "--passcode-stdin"], input: SyncE2E.passcode + "\n"))?.succeeded ?? false,
                (try? laptop.tresor(
                    [
                        "item", "add", "--service", "rolled.example.com", "--account", "ada", "--readable-by-scripts", "--secret-stdin",
                        "--synchronizable",
                    ],
                    input: "e2e-written-during-the-sync\n"))?.succeeded ?? false,
                (try? laptop.tresor(["sync", "now"]))?.succeeded ?? false,
            ]
            steps.withLock { $0 = done }
        }
        for (device, name, address) in [(phone, "phone", proxy.address), (tablet, "tablet", server)] {
            try SyncE2E.joinApproved(device, address, name: name, password: password, by: laptop)
        }

        // A record of epoch 1 waits for the phone, so that its sync asks for records (a device
        // whose cursor is at the account's latest asks for none).
        try SyncNowTests.add(laptop, service: "before.example.com", secret: "e2e-written-before-the-sync")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        let received = try SyncNowTests.syncNow(phone)
        #expect(steps.withLock { $0 } == [true, true, true], "the laptop removed, added and synced while the phone synced")
        #expect(received.applied == 2, "\(received)")
        #expect(try SyncNowTests.secret(phone, service: "rolled.example.com") == "e2e-written-during-the-sync")
        #expect(try SyncDevicesE2ETests.keys(of: phone).1.epochs == [1, 2])
    }

    @Test func aDeviceThatMissedTwoRollsReadsBothThoughTheFirstRollerWasRemovedSince() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password)
        let tablet = try SyncE2E.device(password), desktop = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        for (device, name) in [(phone, "phone"), (tablet, "tablet"), (desktop, "desktop")] {
            try SyncE2E.joinApproved(device, server, name: name, password: password, by: laptop)
        }
        // The laptop rolls epoch 2 and writes in it; the desktop, which never synced since, removes
        // the laptop (epoch 3) and writes in that. Epoch 2's envelopes are signed by the laptop,
        // no longer in the newest list.
        _ = try SyncE2E.sync(laptop, SyncDeviceInfo.self, ["remove", "tablet", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        try SyncNowTests.add(laptop, service: "two.example.com", secret: "e2e-written-in-epoch-two")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        _ = try SyncE2E.sync(desktop, SyncDeviceInfo.self, ["remove", "laptop", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        #expect(try SyncDevicesE2ETests.keys(of: desktop).1.epochs == [1, 2, 3], "the remover learnt epoch 2 before rolling")
        try SyncNowTests.add(desktop, service: "three.example.com", secret: "e2e-written-in-epoch-three")
        #expect(try SyncNowTests.syncNow(desktop).pushed == 1)

        let received = try SyncNowTests.syncNow(phone)
        #expect(received.applied == 2, "\(received)")
        #expect(try SyncNowTests.secret(phone, service: "two.example.com") == "e2e-written-in-epoch-two")
        #expect(try SyncNowTests.secret(phone, service: "three.example.com") == "e2e-written-in-epoch-three")
        #expect(try SyncDevicesE2ETests.keys(of: phone).1.epochs == [1, 2, 3])
        // The recovery identity holds every epoch, each shared again by the last remover.
        let circle = try await SyncDevicesE2ETests.latestList(cluster)
        for epoch in 1...3 {
            let shares = try await SyncDevicesE2ETests.envelopes(cluster, epoch: epoch).filter { $0.recipientID == circle.recovery.deviceID }
            #expect(shares.count == 1 && shares.allSatisfy { circle.member($0.senderID) != nil }, "epoch \(epoch)")
        }
    }

    @Test func aDeviceThatMissedTheRollApprovesANewDeviceWithTheNewEpoch() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password)
        let tablet = try SyncE2E.device(password), desktop = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        for (device, name) in [(phone, "phone"), (tablet, "tablet")] {
            try SyncE2E.joinApproved(device, server, name: name, password: password, by: laptop)
        }
        _ = try SyncE2E.sync(laptop, SyncDeviceInfo.self, ["remove", "tablet", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        try SyncNowTests.add(laptop, service: "two.example.com", secret: "e2e-written-in-epoch-two")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)

        // The phone has not synced since the roll: it learns epoch 2 as it approves, and shares it.
        try SyncE2E.joinApproved(desktop, server, name: "desktop", password: password, by: phone)
        #expect(try SyncDevicesE2ETests.keys(of: desktop).1.epochs == [1, 2])
        #expect(try SyncNowTests.syncNow(desktop).applied == 1)
        #expect(try SyncNowTests.secret(desktop, service: "two.example.com") == "e2e-written-in-epoch-two")
    }

    /// A removal cut after the server stored the new list but before the new key's shares: the
    /// other devices are not stuck waiting for that key — the next one that syncs rolls anew —
    /// and the remover, back, shares the key it made and reads the newer one.
    @Test func aRemovalCutBeforeItsKeyWasSharedIsFinishedByTheNextDeviceThatSyncs() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password), tablet = try SyncE2E.device(password)
        // The laptop speaks through a relay that stops at its second key-envelopes store (its
        // first: the circle's creation) — the removal's shares.
        let proxy = try CuttingProxy(upstream: server.port, trigger: "PUT /v1/sync/key-envelopes", occurrence: 2) {}
        _ = try SyncE2E.join(laptop, proxy.address, name: "laptop", password: password)
        for (device, name) in [(phone, "phone"), (tablet, "tablet")] {
            try SyncE2E.joinApproved(device, server, name: name, password: password, by: laptop)
        }
        let removed = try laptop.tresor(["sync", "remove", "tablet", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        #expect(!removed.succeeded && proxy.hasCut, "\(removed.stderr)")
        #expect(try await SyncDevicesE2ETests.latestList(cluster).epoch == 2, "the server holds the list of epoch 2")
        #expect(try await SyncDevicesE2ETests.envelopes(cluster, epoch: 2).isEmpty, "and none of its key's shares")

        // The phone's sync finds no share of epoch 2 for it, and rolls epoch 3.
        let synced = try SyncNowTests.syncNow(phone)
        #expect(synced.pushed == 0, "\(synced)")
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).epoch == 3)
        #expect(try SyncDevicesE2ETests.keys(of: phone).1.epochs == [1, 3])

        // The laptop, back, shares epoch 2's key (it may have sealed with it), reads epoch 3's,
        // and writes in it; the phone reads that.
        proxy.relay(to: server.port)
        try SyncNowTests.add(laptop, service: "rolled.example.com", secret: "e2e-written-after-the-finished-roll")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        #expect(try SyncDevicesE2ETests.keys(of: laptop).1.epochs == [1, 2, 3])
        #expect(try await SyncDevicesE2ETests.envelopes(cluster, epoch: 2).count == 3, "the phone's, the laptop's and the recovery identity's")
        let received = try SyncNowTests.syncNow(phone)
        #expect(received.applied == 1, "\(received)")
        #expect(try SyncNowTests.secret(phone, service: "rolled.example.com") == "e2e-written-after-the-finished-roll")
        #expect(try SyncDevicesE2ETests.keys(of: tablet).1.epochs == [1], "the removed tablet holds neither new key")
    }

    /// A removal cut after the server refused the device but before the list without it was
    /// stored: the remover remembers it, and its next sync finishes it — the list without the
    /// device, a new epoch whose key reaches the others — so no list keeps naming a device the
    /// server refuses, and nothing written afterwards opens with what that device holds.
    @Test func aRemovalCutBeforeItsListWasStoredIsFinishedByTheRemoversNextSync() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password), tablet = try SyncE2E.device(password)
        // The laptop speaks through a relay that stops at its second list store (its first: the
        // circle's creation) — the removal's list.
        let proxy = try CuttingProxy(upstream: server.port, trigger: "PUT /v1/sync/device-list", occurrence: 2) {}
        _ = try SyncE2E.join(laptop, proxy.address, name: "laptop", password: password)
        for (device, name) in [(phone, "phone"), (tablet, "tablet")] {
            try SyncE2E.joinApproved(device, server, name: name, password: password, by: laptop)
        }
        let tabletID = try #require(try SyncE2E.sync(tablet, SyncStatusAnswer.self, ["status"]).deviceID)
        let removed = try laptop.tresor(["sync", "remove", "tablet", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        #expect(!removed.succeeded && proxy.hasCut, "\(removed.stderr)")
        let cut = try await SyncDevicesE2ETests.latestList(cluster)
        #expect(cut.epoch == 1 && cut.member(tabletID) != nil, "the server refuses the tablet, and its list still names it")

        proxy.relay(to: server.port)
        _ = try SyncNowTests.syncNow(laptop)
        let finished = try await SyncDevicesE2ETests.latestList(cluster)
        #expect(finished.epoch == 2 && finished.member(tabletID) == nil, "epoch \(finished.epoch)")
        #expect(try await SyncDevicesE2ETests.envelopes(cluster, epoch: 2).count == 3, "the laptop's, the phone's and the recovery identity's")

        // Written afterwards, it opens on the phone; the tablet holds no key of it.
        try SyncNowTests.add(laptop, service: "after-the-removal.example.com", secret: "e2e-written-after-the-finished-removal")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        #expect(try SyncNowTests.syncNow(phone).applied == 1)
        #expect(try SyncNowTests.secret(phone, service: "after-the-removal.example.com") == "e2e-written-after-the-finished-removal")
        #expect(try SyncDevicesE2ETests.keys(of: tablet).1.epochs == [1])
        // Finished once: the next sync rolls no more.
        _ = try SyncNowTests.syncNow(laptop)
        #expect(try await SyncDevicesE2ETests.latestList(cluster).epoch == 2)
    }
}
