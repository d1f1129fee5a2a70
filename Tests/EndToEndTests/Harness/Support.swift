import Foundation
import Synchronization
import Testing
import TresorKit
import TresorSystem
import TresorTestSupport

extension Harness {
    /// Registers this test runner as application `id` of `team`, so the test's own TresorKit
    /// calls are an application's; then makes one request, so the daemon hashes the (large)
    /// runner once rather than once per concurrent client.
    func registerTestRunner(id: String, team: String, groups: [String] = [], passcode: String) throws {
        let runner = ProcessImage.ownExecutablePath ?? CommandLine.arguments[0]
        let registered = try tresor(
            ["app", "register", "--id", id, "--team", team, "--exe", runner, "--passcode-stdin"] + groups.flatMap { ["--group", $0] },
            input: passcode + "\n")
        try #require(registered.succeeded, "\(registered.stderr)")
        _ = try TresorKitClient.connect(self).status()
    }

    /// Runs `tresor approve --once --passcode-stdin`, answering `answer`, in the foreground of a
    /// terminal of its own (``Terminal``) — where the daemon puts requests only — and meanwhile
    /// calls `attempt` (every 25 ms, at most 400 times) until it says it is done — a request made
    /// before the approver waits is not put to it — or the approver has finished.
    /// `arguments` go to `tresor approve` too (`--for-session 1h`).
    /// - Returns: what `tresor approve` showed on its terminal (as `stdout`; `stderr` is empty).
    func approving(answer: String, arguments extra: [String] = [], _ attempt: () throws -> Bool) throws -> Result {
        let arguments = ["approve", "--once", "--passcode-stdin"] + extra
        let (program, programArguments) = user?.wrapping(Terminal.python, Terminal.driverArguments) ?? (Terminal.python, Terminal.driverArguments)
        let request = try Terminal.request([Self.binaries.appendingPathComponent("tresor").path] + arguments, input: answer + "\n", timeout: 60)
        return try inBackground(["tresor"] + arguments + ["[on a terminal of its own]"]) { [environment] in
            // Not `run`: it records into the transcript, which `attempt` may do meanwhile.
            let ran = try Harness.execute(program, programArguments, input: request, environment: environment, timeout: 70).result
            let screen = try Terminal.screen(ran)
            return Result(status: screen.status, stdout: screen.text, stderr: "")
        } while: {
            try attempt()
        }
    }

    /// Runs `work` — `command` — on a thread of its own and meanwhile calls `attempt` (every 25 ms,
    /// at most 400 times) until it says it is done or `work` has finished; records what `work`
    /// printed in the transcript.
    /// - Returns: what `work` returned (status -1 when it threw).
    func inBackground(
        _ command: [String], _ work: @escaping @Sendable () throws -> Result, while attempt: () throws -> Bool
    ) throws -> Result {
        let outcome = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result: Result
            do { result = try work() } catch { result = Result(status: -1, stdout: "", stderr: "\(error)") }
            outcome.withLock { $0 = result }
            done.signal()
        }
        for _ in 0..<400 {
            if try attempt() || outcome.withLock({ $0 != nil }) { break }
            usleep(25_000)
        }
        done.wait()
        let result = try #require(outcome.withLock { $0 })
        record(URL(fileURLWithPath: command[0]), Array(command.dropFirst()), output: result.stdout + result.stderr)
        return result
    }
}

/// A TresorKit client of a harness's daemon, never starting one.
enum TresorKitClient {
    static func connect(_ harness: Harness) throws -> TresorClient {
        try TresorClient.connect(paths: harness.paths, startDaemon: false)
    }
}
