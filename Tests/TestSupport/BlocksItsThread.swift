import Foundation
import Synchronization
import Testing
import TresorSystem

extension Trait where Self == BlocksItsThread {
    /// The suite's tests block the thread they run on — they wait for processes, sleep, poll a
    /// daemon — so they run on threads of their own (``BlocksItsThread``), not on Swift
    /// concurrency's, which async tests running beside them need.
    public static var blocksItsThread: Self { BlocksItsThread() }
}

/// Runs each test of a suite on threads of its own, a few such tests at a time.
///
/// Swift Testing calls every test, synchronous or not, on Swift concurrency's threads, which
/// are as many as the cores. A test that waits there for a process for a minute holds one of
/// them; two hold all, and every async test of the run (a PostgreSQL client, a TresorKit task
/// group) waits for them, past its own deadlines. With this trait the test's work runs on
/// threads started for it (a task executor preference), and as many such tests run at once as
/// there are cores, as before.
public struct BlocksItsThread: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        await BlockingTestThreads.shared.admit()
        defer { BlockingTestThreads.shared.leave() }
        try await withTaskExecutorPreference(BlockingTestThreads.shared) { try await function() }
    }
}

/// The task executor of blocking tests: each job on a thread of its own, so that an async test's
/// next step never waits behind a test that blocks; and a count of the tests that run on it.
final class BlockingTestThreads: TaskExecutor, Sendable {
    static let shared = BlockingTestThreads(running: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private let state: Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    init(running: Int) { state = Mutex((running, [])) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DetachedThread.start { job.runSynchronously(on: executor) }
    }

    /// Waits (suspended, holding no thread) until fewer tests than the cores run here.
    func admit() async {
        await withCheckedContinuation { continuation in
            let admitted = state.withLock { state in
                guard state.free > 0 else { state.waiting.append(continuation); return false }
                state.free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    /// A test has finished: the next waiting one runs.
    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else { state.free += 1; return nil }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
