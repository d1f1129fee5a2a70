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
        let status = process.waitForStatus()
        return (Result(status: status, stdout: out, stderr: err), watchdog?.fired ?? false)
    }

    /// A fixture that could not be set up (a program missing or failing, a peer that never answered).
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }
}

/// Kills a process still running after a number of seconds, so that no wait of a test is unbounded.
///
/// Asking ``fired`` ends the watch: the timer is cancelled then, so a watchdog holds its process
/// (and the process's pipes) only while the process runs, not until the deadline — every
/// command a harness runs can have one. It watches while it is held: keep it until you ask.
public final class Watchdog: Sendable {
    private let state = Mutex((done: false, fired: false))
    // Dispatch's sources may be used from any thread.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer

    public init(_ process: Process, after seconds: TimeInterval) {
        let pid = process.processIdentifier
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.setEventHandler { [weak self] in
            self?.state.withLock {
                if !$0.done && process.isRunning {
                    $0.fired = true
                    kill(pid, SIGKILL)
                }
            }
        }
        timer.schedule(deadline: .now() + seconds)
        timer.activate()
    }

    /// Whether it killed the process. Once asked, it never will, and lets the process go.
    public var fired: Bool {
        let fired = state.withLock {
            $0.done = true
            return $0.fired
        }
        timer.cancel()
        return fired
    }

    deinit { timer.cancel() }
}

/// Waiting for a program started with Foundation's `Process` to end, without
/// `waitUntilExit()`'s two faults on Linux: it spins a core while it waits (a thread without a
/// run loop source returns from the run loop at once), and it waits for Foundation to hear of
/// the exit — which Foundation does when a socket it gave the program closes, so a long-lived
/// program that inherited that socket meanwhile (started by another thread at that moment)
/// keeps it from ever hearing. Here the kernel's word counts too: a program ended is a zombie
/// until reaped.
extension Process {
    /// Waits, polling, until the program has ended — as Foundation sees it, or as the kernel
    /// does (then Foundation is given `grace` seconds to hear of it before the wait returns).
    /// - Parameters:
    ///   - timeout: how long to wait at most for a program still running; nil: until it ends.
    ///   - grace: how long Foundation may take to hear of an exit the kernel reports.
    /// - Returns: whether it ended (false: the timeout passed first).
    @discardableResult
    public func waitUntilEnded(timeout: TimeInterval? = nil, grace: TimeInterval = 2) -> Bool {
        let deadline = timeout.map { Date() + $0 }
        var endedAt: Date?
        while isRunning {
            if endedAt == nil, hasEndedForTheKernel { endedAt = Date() }
            if let endedAt, Date().timeIntervalSince(endedAt) > grace { return true }
            if endedAt == nil, let deadline, Date() > deadline { return false }
            usleep(5_000)
        }
        // Returns at once now; it also drops the run loop source that holds the `Process`
        // (and so the files it was given, such as a daemon's log) until it is called.
        waitUntilExit()
        return true
    }

    /// Waits until the program has ended, and returns its status as `terminationStatus` says
    /// it: its exit status, or the signal that ended it. When Foundation does not hear of the
    /// exit, the program is reaped here.
    /// - Returns: the exit status or the signal's number.
    public func waitForStatus() -> Int32 {
        waitUntilEnded()
        guard isRunning else { return terminationStatus }
        var status: Int32 = 0
        guard waitpid(processIdentifier, &status, 0) == processIdentifier else {
            // Foundation reaped it meanwhile: it says so in a moment.
            while isRunning { usleep(1_000) }
            return terminationStatus
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// Whether the kernel holds the program as ended and not yet reaped (a zombie). Asked
    /// without reaping it, so that Foundation still can.
    private var hasEndedForTheKernel: Bool {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return false }
        return info._sifields._kill.si_pid == processIdentifier
    }
}
