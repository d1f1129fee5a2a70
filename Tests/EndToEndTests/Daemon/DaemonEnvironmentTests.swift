import Foundation
import Testing
import TresorSystem
import TresorTestSupport

/// Nobody can pre-load the daemon, and a crash writes no registers or memory into its log.
@Suite(.blocksItsThread) struct DaemonEnvironmentTests {
    @Test func tresordStartedWithALoaderVariableRefusesToRun() throws {
        let harness = try Harness()
        for variable in DaemonEnvironment.loaderVariables {
            // A harmless library: the point is that tresord will not start with the variable at all.
            let environment = harness.environment.merging([variable: "/lib/x86_64-linux-gnu/libm.so.6"]) { $1 }
            let result = try harness.run(Harness.binaries.appendingPathComponent("tresord"), [], environment: environment, timeout: 30)
            #expect(result.status == 2, "\(variable): \(result.stderr)")
            #expect(result.stderr.contains("refusing to start: \(variable) is set"))
        }
        #expect(!SecureFiles.exists(harness.paths.socket), "no daemon listened")
    }

    @Test func theCLIStartsTheDaemonWithoutItsLoaderVariables() throws {
        let harness = try Harness()
        // The CLI starts tresord itself (none is running); LD_PRELOAD set for the CLI must not
        // reach the daemon, or the daemon would refuse to start and `status` would fail.
        let environment = harness.environment.merging(["LD_PRELOAD": "/lib/x86_64-linux-gnu/libm.so.6", "SOME_SECRET_TOKEN": "x"]) { $1 }
        let result = try harness.run(Harness.binaries.appendingPathComponent("tresor"), ["status", "--json"], environment: environment, timeout: 60)
        #expect(result.succeeded, "\(result.stderr)")
        let status = try harness.status()
        let daemonEnvironment = try String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(status.pid)/environ")), as: UTF8.self)
            .split(separator: "\0").map { String($0.prefix { $0 != "=" }) }
        #expect(!daemonEnvironment.contains("LD_PRELOAD"))
        #expect(!daemonEnvironment.contains("SOME_SECRET_TOKEN"), "only the allowed variables reach the daemon")
        #expect(daemonEnvironment.contains("SWIFT_BACKTRACE"))
        kill(pid_t(status.pid), SIGTERM)
    }

    @Test func aCrashWritesNoRegistersOrMemoryIntoTheLog() throws {
        let harness = try Harness()
        try harness.startDaemon()
        let pid = try harness.status().pid
        kill(pid_t(pid), SIGSEGV)
        let deadline = Date().addingTimeInterval(20)
        while kill(pid_t(pid), 0) == 0 && Date() < deadline { usleep(20_000) }
        let log = harness.daemonLog
        for sign in ["Program crashed", "Registers", "Backtrace", "rip 0x", "Thread 0 crashed"] {
            #expect(!log.contains(sign), "the log shows \(sign)")
        }
    }
}
