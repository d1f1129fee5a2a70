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
        #expect(try harness.tresor(["daemon", "status"]).stdout.contains("tresord is not running"))

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
