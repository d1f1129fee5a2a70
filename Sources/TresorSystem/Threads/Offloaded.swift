import Dispatch
import Synchronization

// Crossing between blocking code and Swift concurrency: one helper each way.
//
// - `offloaded` — from async code, blocking work (a key derivation, a database transaction, a
//   call that waits for the daemon): on a thread of its own, so Swift concurrency's threads — as
//   many as the cores, and on Linux Dispatch's workers, as are those of any queue — keep serving.
// - `blocking` — from blocking code (a `main` reading a database record by record), async work
//   (PostgresNIO): run on Swift concurrency's threads while this thread waits. Never call it on
//   one of those threads.

/// Runs blocking `work` on a thread of its own while the calling task is suspended.
/// - Parameter work: what to run; it may block.
/// - Returns: what `work` returns.
/// - Throws: what `work` throws.
public func offloaded<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        BlockingThreads.shared.run { continuation.resume(with: Result { try work() }) }
    }
}

/// Runs async `work` on Swift concurrency's threads and waits for it on this one.
/// - Parameter work: what to run.
/// - Returns: what `work` returns.
/// - Throws: what `work` throws.
public func blocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    Task.detached {
        let result: Result<T, any Error>
        do { result = .success(try await work()) } catch { result = .failure(error) }
        outcome.result.withLock { $0 = result }
        outcome.done.signal()
    }
    outcome.done.wait()
    return try outcome.result.withLock { $0! }.get()
}

/// The result of one piece of async work, handed to the thread waiting for it.
private final class Outcome<T: Sendable>: Sendable {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
}
