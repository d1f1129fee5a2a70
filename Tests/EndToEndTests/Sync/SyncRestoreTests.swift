import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// A `tresor backup restore` feeds the sync outbox (docs/SYNC.md, "What syncs"): the synced items
/// it restores wait to go out at once, recorded with their rows, not found later.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncRestoreTests {
    @Test func restoredSynchronizableItemsGoOutWithTheNextSync() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }
        // An old machine, in no sync account, backs up one synchronizable item and one that is not.
        let old = try SyncE2E.device("e2e-no-account-password")
        try SyncNowTests.add(old, service: "restored.example.com", secret: "e2e-restored-secret")
        try SyncNowTests.add(old, service: "local.example.com", secret: "e2e-restored-local", synchronizable: false)
        let passphrase = "e2e-restore-backup-passphrase"
        old.secrets.append(passphrase)
        phone.secrets.append(passphrase)
        let file = old.root.appendingPathComponent("old.tresor-backup").path
        let created = try old.tresor(
            ["backup", "create", "--out", file, "--work-factor", "14", "--passcode-stdin"],
            input: "\(SyncE2E.passcode)\n\(passphrase)\n\(passphrase)\n")
        #expect(created.succeeded, "\(created.stderr)")

        let restored = try phone.tresor(["backup", "restore", file, "--passcode-stdin"], input: "\(SyncE2E.passcode)\n\(passphrase)\n")
        #expect(restored.succeeded, "\(restored.stderr)")
        // Waiting already: recorded by the restore, not by the sync's late catch-up.
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).counters?.changesWaiting == 1)
        let sent = try SyncNowTests.syncNow(phone)
        #expect(sent.recorded == 0 && sent.pushed == 1, "\(sent)")
        #expect(try SyncNowTests.syncNow(laptop).applied == 1)
        #expect(try SyncNowTests.secret(laptop, service: "restored.example.com") == "e2e-restored-secret")
        #expect(try SyncNowTests.secret(laptop, service: "local.example.com", synchronizable: false) == nil)
    }
}
