import Foundation
import Synchronization
import TresorSystem

/// Runs a test's helper program (a client, a tool, a fixture's driver) to its end, every wait
/// bounded: what each test target used to spell out with `Process` and its pipes, once.
public enum TestProcess {
    /// How a program ended and what it wrote.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var succeeded: Bool { status == 0 }

        public init(status: Int32, stdout: String, stderr: String) {
            (self.status, self.stdout, self.stderr) = (status, stdout, stderr)
        }
    }

    /// Runs `executable arguments` to its end, `input` on its standard input.
    /// - Parameters:
    ///   - environment: its whole environment (by default this process's).
    ///   - timeout: when given, a process still running after that many seconds is killed, and
    ///     `timedOut` says so.
    /// - Returns: how it ended, and whether the timeout killed it.
    /// - Throws: what starting the process throws.
    public static func run(
        _ executable: URL, _ arguments: [String], input: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
        timeout: TimeInterval? = nil
    ) throws -> (result: Result, timedOut: Bool) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        let watchdog = timeout.map { Watchdog(process, after: $0) }
        // Both outputs are read while the input is written: a child that fills one pipe while
        // this process waits on another (or on writing its input) would otherwise wait forever.
        let outReader = PipeDrain(stdout.fileHandleForReading.fileDescriptor), errReader = PipeDrain(stderr.fileHandleForReading.fileDescriptor)
        // A child that exits without reading its input (a command refused before it reads)
        // must not end the test runner with SIGPIPE: the write fails instead, quietly.
        if let input {
            signal(SIGPIPE, SIG_IGN)
            try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
        }
        try stdin.fileHandleForWriting.close()
        let out = String(decoding: outReader.data(), as: UTF8.self)
        let err = String(decoding: errReader.data(), as: UTF8.self)
        process.waitUntilExit()
        return (Result(status: process.terminationStatus, stdout: out, stderr: err), watchdog?.fired ?? false)
    }

    /// A fixture that could not be set up (a program missing or failing, a peer that never answered).
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }
}

/// Kills a process still running after a number of seconds, so that no wait of a test is unbounded.
public final class Watchdog: Sendable {
    private let state = Mutex((done: false, fired: false))

    public init(_ process: Process, after seconds: TimeInterval) {
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            state.withLock {
                if !$0.done && process.isRunning {
                    $0.fired = true
                    kill(process.processIdentifier, SIGKILL)
                }
            }
        }
    }

    /// Whether it killed the process. Once asked, it never will.
    public var fired: Bool {
        state.withLock {
            $0.done = true; return $0.fired
        }
    }
}
