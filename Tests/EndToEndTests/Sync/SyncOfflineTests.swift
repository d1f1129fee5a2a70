import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Offline first (docs/SYNC.md, "Crashes and a stopped server"): two synced devices change
/// items and notes while the server is stopped — the same item edited on both, an item deleted
/// on one and edited on the other, a note edited on both in different lines, a note deleted on
/// one and edited on the other — `tresor sync now` fails saying why and loses nothing, and once
/// the server is back both devices end identical by the conflict rules; meanwhile `tresor sync
/// devices` lists the devices of the list each holds.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncOfflineTests {
    static func delete(_ device: Harness, service: String) throws {
        let deleted = try device.tresor(["item", "delete", "--service", service, "--synchronizable"])
        #expect(deleted.succeeded, "\(deleted.stderr)")
    }

    @Test func changesMadeOnBothDevicesWhileTheServerIsStoppedConverge() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let instance = cluster.harnesses[0], port = cluster.servers[0].port
        for name in ["both", "edited", "deleted", "kept"] {
            try SyncNowTests.add(laptop, service: "\(name).example.com", secret: "e2e-offline-\(name)")
        }
        let list = try SyncNotesE2ETests.newNote(laptop, "List\none\ntwo\nthree")
        let trip = try SyncNotesE2ETests.newNote(laptop, "Trip\npassport")
        let old = try SyncNotesE2ETests.newNote(laptop, "Old\ne2e-offline-old")
        _ = try SyncNowTests.syncNow(laptop)
        _ = try SyncNowTests.syncNow(phone)
        let onPhone = try SyncNotesE2ETests.notes(phone)
        let (phoneList, phoneTrip) = (try #require(onPhone["List"]).id, try #require(onPhone["Trip"]).id)
        #expect(try SyncE2E.contents(of: phone) == SyncE2E.contents(of: laptop))

        instance.stopDaemon()
        // The laptop: edits "both", deletes "edited" and "deleted", adds one; edits a line of
        // List, deletes Trip and Old, writes a note.
        try SyncNowTests.update(laptop, service: "both.example.com", secret: "e2e-offline-both-laptop")
        try Self.delete(laptop, service: "edited.example.com")
        try Self.delete(laptop, service: "deleted.example.com")
        try SyncNowTests.add(laptop, service: "laptop.example.com", secret: "e2e-offline-laptop")
        try SyncNotesE2ETests.edit(laptop, list.id, body: "List\nONE\ntwo\nthree")
        for note in [trip, old] { #expect(try laptop.tresor(["note", "delete", note.id]).succeeded) }
        _ = try SyncNotesE2ETests.newNote(laptop, "Laptop offline\ne2e-offline-laptop-note")
        // The phone: edits "both" and "edited", adds one; edits another line of List, edits Trip,
        // writes a note.
        try SyncNowTests.update(phone, service: "both.example.com", secret: "e2e-offline-both-phone")
        try SyncNowTests.update(phone, service: "edited.example.com", secret: "e2e-offline-edited-phone")
        try SyncNowTests.add(phone, service: "phone.example.com", secret: "e2e-offline-phone")
        try SyncNotesE2ETests.edit(phone, phoneList, body: "List\none\ntwo\nTHREE")
        try SyncNotesE2ETests.edit(phone, phoneTrip, body: "Trip\npassport\ntickets")
        _ = try SyncNotesE2ETests.newNote(phone, "Phone offline\ne2e-offline-phone-note")

        // Offline: the sync fails saying why, and every change still waits, nothing lost.
        for (device, items, notes) in [(laptop, 4, 4), (phone, 3, 3)] {
            let before = try SyncE2E.contents(of: device)
            let failed = try device.tresor(["sync", "now"])
            #expect(failed.status == 1 && failed.stderr.contains("the sync server cannot be reached"), "\(failed.stderr)")
            let status = try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"])
            #expect(status.counters?.changesWaiting == items && status.notesWaiting == notes, "\(String(describing: status.counters))")
            #expect(try SyncE2E.contents(of: device) == before)
        }
        // The devices are still listed: those of the list this device holds, said so.
        let listed = try laptop.tresor(["sync", "devices"])
        #expect(listed.succeeded && listed.stdout.contains("laptop") && listed.stdout.contains("phone"), "\(listed.stdout) \(listed.stderr)")
        #expect(listed.stderr.contains("this is the list this device holds"), "\(listed.stderr)")
        #expect(try SyncE2E.sync(laptop, SyncDevicesAnswer.self, ["devices"]).serverUnreachable != nil)

        _ = try instance.startWebDaemon(
            passcode: ServerInstances.passcode, extraArguments: ["--database", cluster.databaseURL, "--server-key-file", cluster.keyFile.path],
            port: port)
        for _ in 0..<2 {
            _ = try SyncNowTests.syncNow(laptop)
            _ = try SyncNowTests.syncNow(phone)
        }

        // The phone's edit of "both" reached the server later: it wins, the laptop's is kept; the
        // phone's edit of "edited" outlives the laptop's deletion; List merged; Trip back, edited.
        let expected = SyncE2E.Contents(
            items: [
                "both.example.com: e2e-offline-both-phone", "edited.example.com: e2e-offline-edited-phone", "kept.example.com: e2e-offline-kept",
                "laptop.example.com: e2e-offline-laptop", "phone.example.com: e2e-offline-phone",
            ],
            notes: [
                "Laptop offline\ne2e-offline-laptop-note", "List\nONE\ntwo\nTHREE", "Phone offline\ne2e-offline-phone-note",
                "Trip\npassport\ntickets",
            ])
        for (device, name) in [(laptop, "laptop"), (phone, "phone")] {
            let contents = try SyncE2E.contents(of: device)
            #expect(contents == expected, "\(name): \(contents)")
            let status = try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"])
            #expect(status.counters?.changesWaiting == 0 && status.notesWaiting == 0, "\(name): \(String(describing: status.counters))")
            let kept = try SyncE2E.sync(device, SyncConflictsAnswer.self, ["conflicts"]).conflicts
            #expect(kept.map(\.attributes?.service) == ["both.example.com"], "\(name): \(kept)")
            #expect(status.counters?.conflictsKept == 1, "\(name)")
        }
        // The laptop's version of "both" is the one kept: restored, it is the item again.
        let id = try #require(try SyncE2E.sync(laptop, SyncConflictsAnswer.self, ["conflicts"]).conflicts.first?.id)
        _ = try SyncE2E.sync(laptop, SyncConflictsAnswer.self, ["conflicts", "restore", id])
        #expect(try SyncNowTests.secret(laptop, service: "both.example.com") == "e2e-offline-both-laptop")
    }
}
