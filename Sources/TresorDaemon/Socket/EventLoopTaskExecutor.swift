import NIOCore
import TresorSystem

/// Runs Swift tasks on one NIO event loop.
///
/// The socket API answers each connection's requests on that connection's own event loop
/// (``SocketRequestHandler``), so a request is read, answered and written by one thread.
/// Without it every request crossed threads twice — the event loop handed the parsed request to
/// a task on Swift's global executor, which handed the response back — and each crossing woke a
/// sleeping thread: 3.1 context switches per keychain lookup instead of 1.0 (BENCHMARKS.md, "Measured design choices").
/// The price is that a handler must not block: anything slow (a scan, a key derivation, a
/// write that checkpoints) goes through ``offloaded``.
final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: an EventLoop is thread-safe by contract, and the reference never changes.
    let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
