import HummingbirdCore
import Logging
import NIOCore

/// Runs Swift tasks on one NIO event loop.
///
/// The socket API handles each connection's requests on that connection's own event loop
/// (``ConnectionLoopHTTP1Channel``), so a request is read, answered and written by one thread.
/// Without it every request crossed threads twice — the event loop handed the parsed request to
/// a task on Swift's global executor, which handed the response back — and each crossing woke a
/// sleeping thread: 3.1 context switches per keychain lookup instead of 1.0 (BENCHMARKS.md,
/// "What changed"). The price is that a handler must not block: anything slow (a scan, a key
/// derivation, a write that checkpoints) goes through ``offloaded``.
final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: an EventLoop is thread-safe by contract, and the reference never changes.
    private let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Hummingbird's HTTP/1.1 child channel, with the connection's handling task preferring the
/// connection's event loop (``EventLoopTaskExecutor``). Connections are spread over the event
/// loop group as before, so every core still serves.
struct ConnectionLoopHTTP1Channel: ServerChildChannel {
    let base: HTTP1Channel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        base.setup(channel: channel, logger: logger)
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await base.handle(value: value, logger: logger)
        }
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with each connection's requests handled on its own event loop.
    static var http1OnConnectionLoops: HTTPServerBuilder {
        HTTPServerBuilder { responder in ConnectionLoopHTTP1Channel(base: HTTP1Channel(responder: responder)) }
    }
}
