import Foundation
import GRDB
import Synchronization

/// The truncating checkpoint after a change that removed content, run soon after the change
/// rather than inside it (docs/SECURITY.md, "The home at rest"): a removed row's old page images
/// leave `-wal` within ``bound`` of its commit — or sooner, when ``completeNow()`` is called
/// (the daemon calls it before it answers a lock) — while the request that removed it returns
/// without paying for the checkpoint and its syncs.
///
/// Changes in a row share one checkpoint: the first schedules it ``delay`` later, the others
/// join it. A checkpoint cannot truncate while a reader holds a snapshot from before it: it is
/// then tried again every ``retryInterval`` until it succeeds, so the bound counts from the end
/// of the last such read.
public final class DeferredCheckpoint: Sendable {
    /// How long after a change its old content may stay in `-wal` (with no reader holding a
    /// snapshot older than the change).
    public static let bound: Duration = .seconds(1)
    /// How long after the first change a checkpoint runs: changes in that time share it.
    public static let delay: Duration = .milliseconds(100)
    /// How long after a checkpoint a reader kept from completing it is tried again.
    public static let retryInterval: Duration = .milliseconds(100)

    private struct State {
        /// A change waits for a checkpoint.
        var pending = false
        /// A checkpoint is scheduled on ``queue`` (or running).
        var scheduled = false
        /// A checkpoint is running, for changes no longer ``pending``.
        var running = false
        /// ``finish()`` was called: the pool is about to close, nothing more is scheduled.
        var finished = false
    }

    private let pool: DatabasePool
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "tresor.storage.checkpoint", qos: .utility)

    /// - Parameter pool: a database ``SealedDatabase/open(at:migrator:)`` opened.
    public init(pool: DatabasePool) {
        self.pool = pool
    }

    /// Whether a change still waits for its checkpoint to complete.
    public var isPending: Bool { state.withLock { $0.pending || $0.running } }

    /// Notes a committed change that removed content: a checkpoint follows within ``bound``.
    public func request() {
        let schedule = state.withLock { state in
            state.pending = true
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule { run(after: Self.delay) }
    }

    /// Runs the checkpoint now if a change waits for one, on the caller's thread.
    /// - Returns: false when a reader kept it from completing within the busy timeout (it is
    ///   then retried in the background as usual).
    @discardableResult
    public func completeNow() -> Bool {
        guard state.withLock({ $0.pending || $0.running }) else { return true }
        // Run even when the background one is running: its checkpoint may be the one a reader
        // holds off, and this one then waits for the reader as long as the busy timeout lets it.
        state.withLock { $0.pending = false }
        guard SealedDatabase.checkpoint(pool) else {
            request()
            return false
        }
        return true
    }

    /// Runs a waiting checkpoint now and schedules none after, before the pool is closed.
    public func finish() {
        completeNow()
        state.withLock { $0.finished = true }
    }

    private func run(after wait: Duration) {
        // The pool stays alive until the checkpoint has run, even if its store is gone.
        queue.asyncAfter(deadline: .now() + wait.timeInterval) { [self] in
            let finished = state.withLock { state in
                state.pending = false
                state.running = !state.finished
                return state.finished
            }
            guard !finished else { return }
            let done = SealedDatabase.checkpoint(pool)
            let again = state.withLock { state in
                state.running = false
                if !done { state.pending = true }
                if !state.pending { state.scheduled = false }
                return state.pending
            }
            if again { run(after: done ? Self.delay : Self.retryInterval) }
        }
    }
}

extension Duration {
    /// The duration in seconds, as Dispatch takes it.
    fileprivate var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
