import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Items a Secret Service client stored sync only once the user includes their owner
/// (docs/SYNC.md, "What syncs"): `secret-tool store` through the real bus on a device that is
/// the Secret Service provider, synced to a second device through a real server.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(if: TestPostgres.shouldRun && SecretService.toolsInstalled, "needs PostgreSQL and the Secret Service clients (scripts/test)"))
struct SyncSecretServiceTests {
    @Test func aSecretServiceItemSyncsOnlyOnceItsOwnerIsIncluded() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        // Syncs only at `sync now`, so each step's counts are its own (as SyncE2E's devices).
        let provider = try TresorProvider(daemonArguments: ["--secret-service", "--no-background-sync"])
        let laptop = provider.harness
        laptop.secrets.append(password)
        let phone = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        try SyncE2E.joinApproved(phone, server, name: "phone", password: password, by: laptop, approverPasscode: provider.passcode)

        let secret = provider.marker("synced-by-owner")
        phone.secrets.append(secret)
        try provider.secretTool.store(label: "E2E browser key", ["tresor-e2e": "sync-include"], secret: secret)
        let owner = try provider.item(labelled: "E2E browser key").owner
        #expect(try SyncE2E.sync(laptop, SyncOwnersAnswer.self, ["include", "--list"]).owners.isEmpty, "none by default")

        // Not included: nothing goes out, even once sync is on.
        let before = try SyncE2E.sync(laptop, SyncNowAnswer.self, ["now"])
        #expect(before.recorded == 0 && before.pushed == 0, "\(before)")
        #expect(try SyncE2E.sync(phone, SyncNowAnswer.self, ["now"]).applied == 0)

        // Included: its item goes out with the next sync, and the phone has it under that owner.
        #expect(try SyncE2E.sync(laptop, SyncOwnersAnswer.self, ["include", owner]).owners == [owner])
        #expect(try SyncE2E.sync(laptop, SyncNowAnswer.self, ["now"]).pushed == 1)
        #expect(try SyncE2E.sync(phone, SyncNowAnswer.self, ["now"]).applied == 1)
        let listed = try phone.tresor(["secret-service", "owners", "--json"])
        #expect(listed.succeeded && listed.stdout.contains(owner) && listed.stdout.contains("E2E browser key"), "\(listed.stdout)")

        // Excluded: it leaves the phone (a tombstone), and stays on the laptop.
        #expect(try SyncE2E.sync(laptop, SyncOwnersAnswer.self, ["exclude", owner]).owners.isEmpty)
        #expect(try SyncE2E.sync(laptop, SyncNowAnswer.self, ["now"]).pushed == 1)
        #expect(try SyncE2E.sync(phone, SyncNowAnswer.self, ["now"]).applied == 1)
        #expect(!(try phone.tresor(["secret-service", "owners", "--json"]).stdout.contains("E2E browser key")))
        #expect(try provider.secretTool.lookup(["tresor-e2e": "sync-include"], expecting: secret) == secret)
        withExtendedLifetime(cluster) {}
    }
}
