import Foundation
import Synchronization
import Testing
import TresorKit

extension Harness {
    /// Registers this test runner as application `id` of `team`, so the test's own TresorKit
    /// calls are an application's; then makes one request, so the daemon hashes the (large)
    /// runner once rather than once per concurrent client.
    func registerTestRunner(id: String, team: String, groups: [String] = [], passcode: String) throws {
        let runner = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let registered = try tresor(
            ["app", "register", "--id", id, "--team", team, "--exe", runner, "--passcode-stdin"] + groups.flatMap { ["--group", $0] },
            input: passcode + "\n")
        try #require(registered.succeeded, "\(registered.stderr)")
        _ = try TresorKitClient.connect(self).status()
    }

    /// Runs `tresor approve --once --passcode-stdin`, answering `answer`, and meanwhile calls
    /// `attempt` (every 25 ms, at most 400 times) until it says it is done — a request made
    /// before the approver waits is not put to it — or the approver has finished.
    /// `arguments` go to `tresor approve` too (`--for-session 1h`).
    /// - Returns: what `tresor approve` printed.
    func approving(answer: String, arguments: [String] = [], _ attempt: () throws -> Bool) throws -> Result {
        let approver = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        let environment = self.environment
        DispatchQueue.global().async {
            let result = try? Harness.execute(
                Harness.binaries.appendingPathComponent("tresor"), ["approve", "--once", "--passcode-stdin"] + arguments, input: answer + "\n",
                environment: environment, timeout: 60)
            approver.withLock { $0 = result?.result }
            done.signal()
        }
        for _ in 0..<400 {
            if try attempt() || approver.withLock({ $0 != nil }) { break }
            usleep(25_000)
        }
        done.wait()
        return try #require(approver.withLock { $0 })
    }
}

/// A TresorKit client of a harness's daemon, never starting one.
enum TresorKitClient {
    static func connect(_ harness: Harness) throws -> TresorClient {
        try TresorClient.connect(paths: harness.paths, startDaemon: false)
    }
}
