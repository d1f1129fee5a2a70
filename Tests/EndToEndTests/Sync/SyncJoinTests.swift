import Foundation
import Testing
import TresorProtocol
import TresorSync
import TresorTestSupport

/// Joining where it is not straightforward (docs/SYNC.md, "Devices"): a server that registers
/// accounts by invite, and a first join cut off half-way by the server's death.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncJoinTests {
    static let password = "the web account's password"

    func join(_ device: Harness, _ server: WebServerAddress, invite: String?) throws -> Harness.Result {
        try device.tresor(
            ["sync", "join", server.origin, "--account", "ada", "--password-stdin", "--device-name", "laptop", "--no-wait", "--json"]
                + (invite == nil ? [] : ["--invite-stdin"]),
            input: (invite.map { $0 + "\n" } ?? "") + Self.password + "\n")
    }

    @Test func anInviteRegistersTheAccountFirstAndWithoutOneNothingIsStored() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "invite"])
        let server = cluster.servers[0]
        cluster.declareSecret(Self.password)
        let laptop = try SyncE2E.device(Self.password)

        // Without an invite, or with a wrong one: a clear refusal, and nothing anywhere.
        let without = try join(laptop, server, invite: nil)
        #expect(!without.succeeded && (without.stdout + without.stderr).contains("--invite"), "\(without.stdout)\(without.stderr)")
        let wrong = try join(laptop, server, invite: "not-the-owners-invite")
        #expect(!wrong.succeeded && (wrong.stdout + wrong.stderr).contains("valid invite"), "\(wrong.stdout)\(wrong.stderr)")
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).joined == false)
        for file in ["sync-account", "sync-device-identity"] {
            #expect(!FileManager.default.fileExists(atPath: laptop.paths.home.appendingPathComponent(file).path), "\(file)")
        }
        #expect(try await TestPostgres.texts("SELECT login_name FROM accounts", database: cluster.databaseName).isEmpty)
        #expect(try await TestPostgres.texts("SELECT id FROM sync_devices", database: cluster.databaseName).isEmpty)

        // The owner's invite (read from standard input, never on a command line) registers it.
        let invite = try cluster.harnesses[0].tresor(["web", "invite", "ada", "--json"])
        #expect(invite.succeeded, "\(invite.stderr)")
        let code = try CLIJSON.decode(WebInvite.self, from: Data(invite.stdout.utf8)).code
        // The owner's daemon prints it (to the owner); the device never writes it anywhere.
        laptop.secrets.append(code)
        let joined = try join(laptop, server, invite: code)
        #expect(joined.succeeded, "\(joined.stderr)")
        let answer = try CLIJSON.decode(SyncJoinAnswer.self, from: Data(joined.stdout.utf8))
        #expect(answer.state == .trusted && answer.recoveryKey != nil)
        #expect(try await TestPostgres.texts("SELECT login_name FROM accounts", database: cluster.databaseName) == ["ada"])
        #expect(!laptop.daemonLog.contains(code) && !cluster.harnesses[0].daemonLog.contains(code))
        #expect(try laptop.homeFiles().allSatisfy { $0.1.range(of: Data(code.utf8)) == nil })

        // The invite is used up: a second device joins with the password alone.
        let phone = try SyncE2E.device(Self.password)
        #expect(try SyncE2E.join(phone, server, name: "phone", password: Self.password).state == .waiting)
    }

    @Test func aFirstJoinCutOffAfterEnrollingFinishesWhenRetried() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let (_, password) = try cluster.registered("ada", on: cluster.servers[0])
        let laptop = try SyncE2E.device(password)
        nonisolated(unsafe) let instance = cluster.harnesses[0]
        // The server dies the moment the enrolled device signs in to store its circle.
        let proxy = try CuttingProxy(upstream: cluster.servers[0].port, trigger: "/v1/sync/challenges") { instance.killDaemon() }
        let cut = try laptop.tresor(
            ["sync", "join", proxy.address.origin, "--account", "ada", "--password-stdin", "--device-name", "laptop", "--no-wait"],
            input: password + "\n")
        #expect(!cut.succeeded && proxy.hasCut, "\(cut.stderr)")
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).joined == false)
        let halfMade = try await TestPostgres.texts("SELECT state FROM sync_devices", database: cluster.databaseName)
        #expect(halfMade == ["trusted"], "the device enrolled before the server died")

        // The server back, the same join makes the circle again, and the account works.
        let server = try instance.startWebDaemon(
            passcode: ServerInstances.passcode, extraArguments: ["--database", cluster.databaseURL, "--server-key-file", cluster.keyFile.path])
        let retried = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        #expect(retried.state == .trusted)
        // The same device finished the circle, with a recovery key of its own that the server now names.
        let recoveryKey = try RecoveryKey(text: try #require(retried.recoveryKey))
        let expected = recoveryKey.identity.identity.signingKey.map { String(format: "%02x", $0) }.joined()
        #expect(try await TestPostgres.texts("SELECT id FROM sync_devices", database: cluster.databaseName) == [retried.deviceID])
        #expect(try await TestPostgres.texts("SELECT encode(recovery_key, 'hex') FROM sync_circles", database: cluster.databaseName) == [expected])
        let phone = try SyncE2E.device(password)
        try SyncE2E.joinApproved(phone, server, name: "phone", password: password, by: laptop)
        #expect(try SyncE2E.sync(phone, SyncDevicesAnswer.self, ["devices"]).devices.map(\.name) == ["laptop", "phone"])
    }

    /// The last step of a first join — storing the circle's first list — reaches the server, and
    /// its answer is lost: the retried join takes the circle up as the device that made it, and
    /// shows the recovery key the circle names (kept sealed until the join finished).
    @Test func aFirstJoinWhoseListWasStoredButItsAnswerLostFinishesWhenRetried() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password)
        let proxy = try CuttingProxy(upstream: server.port, trigger: "PUT /v1/sync/device-list", dropsAnswer: true) {}
        let cut = try laptop.tresor(
            ["sync", "join", proxy.address.origin, "--account", "ada", "--password-stdin", "--device-name", "laptop", "--no-wait"],
            input: password + "\n")
        #expect(!cut.succeeded && proxy.hasCut, "\(cut.stderr)")
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).joined == false)
        #expect(try await SyncDevicesE2ETests.latestList(cluster).version == 1, "the server holds the circle's first list")
        let unfinished = laptop.paths.home.appendingPathComponent("sync-unfinished-join")
        #expect(FileManager.default.fileExists(atPath: unfinished.path), "the recovery key kept, sealed, for the retry")

        let retried = try SyncE2E.join(laptop, proxy.address, name: "laptop", password: password)
        #expect(retried.state == .trusted)
        let recoveryKey = try RecoveryKey(text: try #require(retried.recoveryKey, "the recovery key is shown"))
        let circle = try await SyncDevicesE2ETests.latestList(cluster)
        #expect(circle.version == 1 && circle.recovery == recoveryKey.identity.identity, "the circle the first try made, and its recovery key")
        #expect(try await TestPostgres.texts("SELECT id FROM sync_devices", database: cluster.databaseName) == [retried.deviceID])
        #expect(!FileManager.default.fileExists(atPath: unfinished.path), "forgotten once the join finished")

        // The account works: another device joins with the laptop's approval.
        let phone = try SyncE2E.device(password)
        try SyncE2E.joinApproved(phone, server, name: "phone", password: password, by: laptop)
        try SyncNowTests.add(laptop, service: "first.example.com", secret: "e2e-after-a-retried-first-join")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        #expect(try SyncNowTests.syncNow(phone).applied == 1)
        #expect(try SyncNowTests.secret(phone, service: "first.example.com") == "e2e-after-a-retried-first-join")
    }
}
