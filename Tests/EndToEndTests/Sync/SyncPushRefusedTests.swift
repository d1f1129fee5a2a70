import Foundation
import GRDB
import Testing
import TresorProtocol
import TresorTestSupport

/// A push the sync server refuses — the changes, not the device — keeps nothing else from the
/// device: the other devices' changes are still fetched, and `tresor sync now` fails saying the
/// device's own wait (docs/SYNC.md, "Crashes and a stopped server").
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncPushRefusedTests {
    @Test func aRefusedPushStillFetchesTheOtherDevicesChanges() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        try SyncNowTests.add(laptop, service: "first.example.com", secret: "e2e-refused-first")
        _ = try SyncNowTests.syncNow(laptop)
        // The laptop's ledger skips ahead: its next change has a device sequence the server
        // does not expect, a refusal for good.
        laptop.stopDaemon()
        try await DatabaseQueue(path: laptop.paths.loginKeychain.path).write { db in
            try db.execute(sql: "UPDATE sync_state SET value = CAST('7' AS BLOB) WHERE name = 'device-sequence'")
            #expect(db.changesCount == 1)
        }
        try laptop.startDaemon(extraArguments: ["--no-background-sync"])
        #expect(try laptop.tresor(["unlock", "--passcode-stdin"], input: SyncE2E.passcode + "\n").succeeded)
        try SyncNowTests.add(laptop, service: "laptop.example.com", secret: "e2e-refused-laptop")

        try SyncNowTests.add(phone, service: "phone.example.com", secret: "e2e-refused-phone")
        let phoneNote = try SyncNotesE2ETests.newNote(phone, "From the phone\ne2e-refused-note")
        _ = try SyncNowTests.syncNow(phone)

        let refused = try laptop.tresor(["sync", "now"])
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("the sync server refused (409 conflict)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("this device's changes were not sent and stay waiting here"), "\(refused.stderr)")
        #expect(refused.stderr.contains("the other devices' were fetched (2 changes applied)"), "\(refused.stderr)")
        // What the phone sent is on the laptop; the laptop's change still waits there.
        #expect(try SyncNowTests.secret(laptop, service: "phone.example.com") == "e2e-refused-phone")
        #expect(try SyncNotesE2ETests.notes(laptop)[phoneNote.title] != nil)
        #expect(try SyncNowTests.secret(laptop, service: "laptop.example.com") == "e2e-refused-laptop")
        let status = try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"])
        #expect(status.counters?.changesWaiting == 1, "\(String(describing: status.counters))")
        #expect(try SyncNowTests.secret(phone, service: "laptop.example.com") == nil)
    }
}
