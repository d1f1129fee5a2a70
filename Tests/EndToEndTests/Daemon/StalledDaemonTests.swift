import Foundation
import Testing
import TresorKit
import TresorTestSupport

/// A daemon that accepts a connection and never answers — stopped with SIGSTOP, stuck, or not
/// tresord at all — makes TresorKit and the CLI fail with a clear error, not wait forever.
@Suite(.blocksItsThread) struct StalledDaemonTests {
    @Test func aStoppedDaemonMakesTheCLIGiveUpWithAClearError() throws {
        let harness = try Harness()
        try harness.startDaemon()
        let pid = try harness.status().pid
        kill(pid_t(pid), SIGSTOP)
        defer { kill(pid_t(pid), SIGCONT) }
        let environment = harness.environment.merging(["TRESOR_TIMEOUT": "1"]) { $1 }
        // Bounded by the harness too: without the client's own timeout this would hang.
        let result = try harness.run(Harness.binaries.appendingPathComponent("tresor"), ["status"], environment: environment, timeout: 30)
        #expect(!result.succeeded)
        #expect(result.stderr.contains("tresord did not answer for 1 s"), "\(result.stderr)")
        kill(pid_t(pid), SIGCONT)
        #expect(try harness.tresor(["status"]).succeeded, "the daemon answers again once it runs")
    }

    @Test func aListenerThatNeverAnswersTimesOutTresorKit() throws {
        let harness = try Harness()
        // Listening but never accepting: connect() succeeds from the backlog, nothing answers.
        let listener = try NeverAnsweringListener(at: harness.paths.socket)
        defer { listener.close() }
        let client = try TresorClient.connect(paths: harness.paths, startDaemon: false, timeout: .seconds(1))
        #expect(throws: TresorClientError.daemonNotAnswering(seconds: 1)) { try client.status() }
    }

    /// A daemon that stopped accepting (stuck, or at its connection limit) fills its backlog;
    /// the next client's connect(2) then waits for room, and gives up like a read does.
    @Test func aListenerWithAFullBacklogTimesOutTresorKitsConnect() throws {
        let harness = try Harness()
        let listener = try NeverAnsweringListener(at: harness.paths.socket, backlog: 0)
        // Closing the listener frees a connect that still waits, so a failing run ends too.
        defer { listener.close() }
        let first = try TresorClient.connect(paths: harness.paths, startDaemon: false, timeout: .seconds(1))
        let ended = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<TresorClient, any Error>?
        let paths = harness.paths
        Thread.detachNewThread {
            outcome = Result { try TresorClient.connect(paths: paths, startDaemon: false, timeout: .seconds(1)) }
            ended.signal()
        }
        try #require(ended.wait(timeout: .now() + 20) == .success, "connect(2) still waits for room in the backlog")
        #expect(throws: TresorClientError.daemonNotAnswering(seconds: 1)) { try outcome?.get() }
        withExtendedLifetime(first) {}
    }
}
