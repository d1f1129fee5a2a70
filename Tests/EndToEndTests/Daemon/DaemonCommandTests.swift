import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorSystem
import TresorTestSupport

/// `tresor daemon status|stop|restart|logs`, whoever started the daemon.
@Suite(.blocksItsThread, .serialized) struct DaemonCommandTests {
    struct Report: Decodable {
        var running: Bool
        var pid: Int32?
        var startedBy: String?
        var arguments: [String]?
        var log: String?
        // What the daemon serves, as `tresor status --json` says it.
        var autoLockSeconds: Int?
        var idleSeconds: Int?
        var lastActivity: String?
        var lockReason: String?
        /// Seconds since 1970, as `CLIJSON` reads the CLI's ISO 8601 date.
        var lockedAt: Double?
        var serving: Serving?
    }

    /// `serving` in `tresor status --json` and `tresor daemon status --json`.
    struct Serving: Decodable {
        var web: String?
        var secretService: String?
    }

    /// The fields of `tresor status --json` that `tresor daemon status` repeats.
    struct Served: Decodable {
        var autoLockSeconds: Int
        var lastActivity: String?
        var lockReason: String?
        var lockedAt: Double?
        var unlockedBy: String?
        var unlockedAt: Double?
        var serving: Serving?
    }

    /// Whether `pid` is gone, or a zombie its parent has not reaped yet.
    static func hasEnded(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(close, offsetBy: 2)] == "Z"
    }

    func report(_ harness: Harness) throws -> (Report, Int32) {
        let result = try harness.tresor(["daemon", "status", "--json"])
        return (try CLIJSON.decode(Report.self, from: Data(result.stdout.utf8)), result.status)
    }

    @Test func statusStopRestartAndLogsOfADaemonTheCLIStarted() throws {
        let harness = try Harness()
        let (none, noneStatus) = try report(harness)
        #expect(!none.running && noneStatus == 3, "status starts no daemon")
        #expect(none.autoLockSeconds == nil && none.serving == nil && none.lastActivity == nil, "nothing is served: \(none)")
        let noDaemon = try harness.tresor(["daemon", "status"])
        #expect(noDaemon.stdout.contains("tresord is not running") && noDaemon.status == 3, "\(noDaemon.stdout)\(noDaemon.stderr)")
        #expect(!noDaemon.stdout.contains("Auto-lock:"), "\(noDaemon.stdout)")

        #expect(try harness.tresor(["status"]).succeeded, "any command starts it")
        let (started, status) = try report(harness)
        #expect(started.running && status == 0 && started.startedBy == "cli", "\(started)")
        #expect(started.log == harness.paths.daemonLog.path)
        let text = try harness.tresor(["daemon", "status"]).stdout
        #expect(text.contains("Started by: tresor") && text.contains("pid \(started.pid ?? -1)"), "\(text)")

        // A setting changed in config.json takes effect at a restart.
        try SecureFiles.writeAtomically(Data(#"{"autoLockSeconds": 4242}"#.utf8), to: harness.paths.config)
        let restarted = try harness.tresor(["daemon", "restart"])
        #expect(restarted.succeeded, "\(restarted.stderr)")
        let (after, _) = try report(harness)
        #expect(after.running && after.pid != started.pid && after.startedBy == "cli")
        #expect(try harness.status().autoLockSeconds == 4242, "the new daemon read config.json")

        let logs = try harness.tresor(["daemon", "logs", "-n", "5"])
        #expect(logs.succeeded && logs.stdout.contains("tresord listening"), "\(logs.stdout)")
        #expect(logs.stdout.split(separator: "\n").count <= 5)

        let stopped = try harness.tresor(["daemon", "stop"])
        #expect(stopped.stdout.contains("Stopped tresord (pid \(after.pid ?? -1))"), "\(stopped.stdout)\(stopped.stderr)")
        #expect(Self.hasEnded(after.pid ?? 0), "the process is gone")
        #expect(try report(harness).1 == 3)
        #expect(try harness.tresor(["daemon", "stop"]).stdout.contains("not running"))
        // A restart with none running starts one, and says so rather than "Restarted".
        let fresh = try harness.tresor(["daemon", "restart"])
        #expect(fresh.succeeded && fresh.stdout.hasPrefix("Started (none was running) tresord"), "\(fresh.stdout)")
        #expect(try harness.tresor(["daemon", "stop"]).succeeded)
    }

    /// Commands run at once with no daemon (logins at once, a desktop's programs) each start one:
    /// one serves them all, and the others leave quietly — no "tresord stopped" at `critical`.
    @Test func commandsStartingADaemonAtOnceAreServedByOneAndTheOthersLeaveQuietly() throws {
        let harness = try Harness()
        let commands = try (0..<4).map { _ in
            try BackgroundProcess(harness: harness, executable: Harness.binaries.appendingPathComponent("tresor"), arguments: ["status", "--json"])
        }
        let results = try commands.map { try $0.finish(timeout: 60) }
        #expect(results.filter { !$0.succeeded }.isEmpty, "\(results.map(\.stderr))")
        let pids = Set(try results.map { try CLIJSON.decode(DaemonStatus.self, from: Data($0.stdout.utf8)).pid })
        #expect(pids.count == 1, "one daemon served them all: \(pids)")
        usleep(500_000)
        #expect(!harness.daemonLog.contains("critical"), "\(harness.daemonLog)")
    }

    /// `tresor daemon status` shows what the daemon serves in `tresor status`'s own lines and
    /// fields: the web client's address, the auto-lock clock and what reset it last, and why the
    /// keybag is locked; `tresor status` shows the web client's address too.
    /// From an environment with another `XDG_RUNTIME_DIR` (cron, ssh), the daemon of the home
    /// is not at the socket looked at: every command says where it listens instead of going in
    /// circles ("already running" / "not running").
    @Test func aDaemonListeningAtAnotherRuntimeDirIsNamedWhereItListens() throws {
        let harness = try Harness.initialized(passcode: "e2e-elsewhere-passcode")
        let other = harness.root.appendingPathComponent("other-run")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var environment = harness.environment
        environment["XDG_RUNTIME_DIR"] = other.path
        let tresor = harness.binaries.appendingPathComponent("tresor")
        let listening = harness.paths.socket.path
        for arguments in [["status"], ["daemon", "status"], ["daemon", "stop"]] {
            let result = try harness.run(tresor, arguments, environment: environment)
            #expect(!result.succeeded, "\(arguments)")
            let said = result.stdout + result.stderr
            #expect(said.contains("listens at \(listening)") || said.contains("listening at \(listening)"), "\(arguments): \(said)")
            #expect(said.contains("XDG_RUNTIME_DIR"), "\(arguments): \(said)")
        }
        #expect(try harness.status().keybag == .unlocked, "the daemon was left as it was")
    }

    @Test func statusShowsWhatTheDaemonServesAsTresorStatusDoes() throws {
        let harness = try Harness()
        let passcode = "e2e-daemon-served-\(UUID().uuidString.prefix(6))"
        let web = try harness.startWebDaemon(passcode: passcode)
        let address = "http://127.0.0.1:\(web.port)/"

        // The web client's address, in both.
        let statusText = try harness.tresor(["status"]).stdout
        #expect(statusText.contains("\nWeb:        \(address)"), "\(statusText)")
        let status = try CLIJSON.decode(Served.self, from: Data(try harness.tresor(["status", "--json"]).stdout.utf8))
        #expect(status.serving?.web == address, "\(status)")
        let text = try harness.tresor(["daemon", "status"]).stdout
        #expect(text.contains("\nWeb:        \(address)"), "\(text)")
        let (served, _) = try report(harness)
        #expect(served.serving?.web == address, "\(served)")
        #expect(served.serving?.secretService == nil, "the Secret Service was not asked for")
        #expect(!text.contains("Secret Service:"), "\(text)")

        // The auto-lock clock and what reset it last: `tresor init`'s request.
        #expect(text.contains("\nAuto-lock:  after 5 min idle (idle "), "\(text)")
        #expect(text.contains("; last activity: a request of ") && text.contains("tresor (pid "), "\(text)")
        #expect(served.autoLockSeconds == 300 && served.idleSeconds != nil, "\(served)")
        #expect(served.lastActivity == status.lastActivity && served.lastActivity?.hasPrefix("a request of ") == true, "\(served)")
        #expect(!text.contains("Locked:") && served.lockReason == nil, "an unlocked keybag gives no lock reason")

        // Why the keybag is locked, once it is.
        #expect(try harness.tresor(["lock"]).succeeded)
        let lockedText = try harness.tresor(["daemon", "status"]).stdout
        #expect(lockedText.contains("\nLocked:     ") && lockedText.contains(" ago: asked by "), "\(lockedText)")
        // A locked keybag's idle clock would say nothing: there is nothing for it to lock.
        #expect(lockedText.contains("\nAuto-lock:  after 5 min idle\n"), "\(lockedText)")
        #expect(!lockedText.contains("last activity"), "\(lockedText)")
        let (locked, _) = try report(harness)
        #expect(locked.lockReason?.hasPrefix("asked by ") == true && locked.lockReason?.contains("tresor (pid ") == true, "\(locked)")
        let lockedJSON = try JSONTree(parsing: Data(try harness.tresor(["daemon", "status", "--json"]).stdout.utf8))
        #expect(lockedJSON["lockedAt"]?.string?.hasSuffix("Z") == true, "an ISO 8601 date: \(lockedJSON)")
        let lockedStatus = try CLIJSON.decode(Served.self, from: Data(try harness.tresor(["status", "--json"]).stdout.utf8))
        #expect(locked.lockReason == lockedStatus.lockReason && locked.lockedAt == lockedStatus.lockedAt, "the same as tresor status")

        // How it was unlocked, once it is: the passcode, from `tresor unlock`.
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let unlocked = try CLIJSON.decode(Served.self, from: Data(try harness.tresor(["daemon", "status", "--json"]).stdout.utf8))
        #expect(unlocked.lockReason == nil && unlocked.unlockedAt != nil, "\(unlocked)")
        #expect(unlocked.unlockedBy?.hasPrefix("the passcode, from ") == true && unlocked.unlockedBy?.contains("tresor (pid ") == true, "\(unlocked)")
        for command in [["status"], ["daemon", "status"]] {
            let text = try harness.tresor(command).stdout
            #expect(text.contains("\nUnlocked:   ") && text.contains(" ago: the passcode, from ") && !text.contains("Locked:"), "\(text)")
        }
        try harness.expectNoSecretLeaked()
    }

    /// A daemon started with nowhere to write — as the session bus starts it — writes its log
    /// where `tresor daemon logs` reads it, and `daemon status` says so.
    @Test func aDaemonGivenNowhereToWriteLogsToTheHome() throws {
        let harness = try Harness()
        try harness.startDaemon(discardingItsOutput: true)
        let text = try harness.tresor(["daemon", "status"]).stdout
        #expect(text.contains("Log:        \(harness.paths.daemonLog.path)"), "\(text)")
        let logs = try harness.tresor(["daemon", "logs", "-n", "50"])
        #expect(logs.stdout.contains("tresord listening"), "\(logs.stdout)")
        #expect(try harness.tresor(["daemon", "stop"]).succeeded)
    }

    /// A daemon started by hand with options is started again with the same options.
    @Test func restartKeepsTheOptionsADaemonRanWith() throws {
        let harness = try Harness()
        try harness.startDaemon(extraArguments: ["--auto-lock", "777"])
        let (before, _) = try report(harness)
        #expect(before.startedBy == "manual", "\(before)")
        #expect(try harness.tresor(["daemon", "restart"]).succeeded)
        let (after, _) = try report(harness)
        #expect(after.pid != before.pid && after.startedBy == "cli")
        #expect(after.arguments?.contains("777") == true && after.arguments?.contains("trace") == true, "\(after.arguments ?? [])")
        #expect(try harness.status().autoLockSeconds == 777)
        #expect(try harness.tresor(["daemon", "stop"]).succeeded)
    }
}
