import CTresorSystem
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization
import TresorProtocol
import TresorSystem

/// The socket API's server: binds the Unix socket with `SO_PASSCRED` (so every connection
/// accepted from it gets each message's sender), accepts on a thread of its own, pins each
/// connecting process (``PinnedPeer``) and serves the connection on one of the
/// ``CredentialedEventLoop``s through ``SocketAPIChannel``'s pipeline.
///
/// At most `maximumConnections` are open; further clients wait in the listen backlog. One
/// process holds at most `maximumConnectionsPerProcess` of them: its further connections are
/// answered `503 unavailable` and closed, so a process that leaks connections cannot lock every
/// other client out. On
/// graceful shutdown it stops accepting, lets each connection finish the request it is
/// answering (NIO's `ChannelShouldQuiesceEvent`) and waits for them to close.
struct SocketAPIServer: Service {
    let path: String
    let maximumConnections: Int
    let maximumConnectionsPerProcess: Int
    let channelSetup: SocketAPIChannel
    let logger: Logger
    var onRunning: @Sendable () -> Void = {}

    /// The loops every socket server of the process shares: as many as cores, like NIO's.
    static let loops: [CredentialedEventLoop] = (0..<max(1, System.coreCount)).map { _ in CredentialedEventLoop() }

    func run() async throws {
        let listener = try Self.listen(at: path)
        onRunning()
        let acceptor = Acceptor(
            listener: listener, maximumConnections: maximumConnections, perProcess: maximumConnectionsPerProcess, channelSetup: channelSetup,
            logger: logger)
        // A graceful shutdown (SIGTERM) stops accepting, and so does cancellation: the web
        // server failing beside it cancels this task, which must then end, not wait forever.
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                    DetachedThread.start {
                        acceptor.acceptUntilStopped()
                        finished.resume()
                    }
                }
            } onGracefulShutdown: {
                acceptor.stop()
            }
        } onCancel: {
            acceptor.stop()
        }
        acceptor.closeListener()
        await acceptor.quiesce()
    }

    /// A listening Unix socket at `path`, private to the user, passing credentials.
    static func listen(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        let bound = UnixSockets.bind(fd, to: path)
        guard bound == 0 else {
            close(fd)
            throw IOError(errnoCode: bound, reason: "bind on \(path)")
        }
        guard chmod(path, 0o600) == 0, tresor_set_passcred(fd) == 0, Glibc.listen(fd, 256) == 0 else {
            let failure = errno
            close(fd)
            throw IOError(errnoCode: failure, reason: "listen on \(path)")
        }
        return fd
    }
}

/// Accepts connections until stopped; keeps the open ones for the shutdown.
private final class Acceptor: Sendable {
    let listener: Int32
    let perProcess: Int
    let channelSetup: SocketAPIChannel
    let logger: Logger
    private let slots: DispatchSemaphore
    private struct State {
        var stopped = false
        var listenerClosed = false
        var open: [ObjectIdentifier: CredentialedSocketChannel] = [:]
        /// Open connections by the pid that made them.
        var openByProcess: [Int32: Int] = [:]
        var next = 0
        /// When a process over its share was last logged: a leaking one would fill the log.
        var lastOverShareLogged = ContinuousClock.Instant.now - .seconds(60)
    }
    private let state = Mutex(State())

    init(listener: Int32, maximumConnections: Int, perProcess: Int, channelSetup: SocketAPIChannel, logger: Logger) {
        self.listener = listener
        self.perProcess = max(1, perProcess)
        self.channelSetup = channelSetup
        self.logger = logger
        slots = DispatchSemaphore(value: max(1, maximumConnections))
    }

    func acceptUntilStopped() {
        while true {
            slots.wait()
            if state.withLock({ $0.stopped }) { return }
            let fd = tresor_accept(listener)
            guard fd >= 0 else {
                let failure = errno
                slots.signal()
                if state.withLock({ $0.stopped }) { return }
                if failure == EMFILE || failure == ENFILE || failure == ENOBUFS || failure == ENOMEM { usleep(10_000) }
                continue
            }
            serve(fd)
        }
    }

    /// Pins the connecting process at once, then hands the connection to a loop. A process
    /// that cannot be pinned (it exited already) is not served.
    private func serve(_ fd: Int32) {
        let pidfd = tresor_peer_pidfd(fd)
        guard pidfd >= 0, let credentials = try? PeerCredentials(socket: fd) else {
            logger.notice("socket API: closed a connection whose process could not be pinned", metadata: ["errno": "\(errno)"])
            if pidfd >= 0 { close(pidfd) }
            close(fd)
            slots.signal()
            return
        }
        let pid = credentials.pid
        let (loop, overShare, logIt) = state.withLock { state -> (CredentialedEventLoop, Bool, Bool) in
            state.next += 1
            let overShare = state.openByProcess[pid, default: 0] >= perProcess
            let logIt = overShare && ContinuousClock.now - state.lastOverShareLogged >= .seconds(10)
            if logIt { state.lastOverShareLogged = .now }
            return (SocketAPIServer.loops[state.next % SocketAPIServer.loops.count], overShare, logIt)
        }
        if logIt {
            logger.notice("socket API: a process over its share of connections is refused", metadata: ["pid": "\(pid)", "share": "\(perProcess)"])
        }
        let refusal = overShare ? Self.overShare(perProcess) : nil
        let channel = CredentialedSocketChannel(
            descriptor: fd, peer: PinnedPeer(credentials: credentials, pidfd: pidfd), loop: loop, logger: logger)
        let id = ObjectIdentifier(channel)
        state.withLock {
            $0.open[id] = channel
            $0.openByProcess[pid, default: 0] += 1
        }
        channel.closeFuture.whenComplete { [self] _ in
            state.withLock {
                $0.open[id] = nil
                $0.openByProcess[pid, default: 1] -= 1
                if $0.openByProcess[pid] == 0 { $0.openByProcess[pid] = nil }
            }
            slots.signal()
        }
        loop.execute { [channelSetup, logger] in
            do {
                try channelSetup.configure(channel, logger: logger, refusal: refusal)
                try channel.activate()
            } catch {
                logger.error("socket API: cannot serve a connection", metadata: ["error": "\(error)"])
                channel.close(promise: nil)
            }
        }
    }

    /// What a connection over its process's share is answered.
    static func overShare(_ perProcess: Int) -> APIError {
        APIError(
            .unavailable,
            "this process holds \(perProcess) connections to tresord already, the most one process may: close those it does not use (docs/API.md, \"Connections\")"
        )
    }

    func stop() {
        state.withLock { state in
            state.stopped = true
            // Wakes an `accept` in progress (it fails with EINVAL). Under the lock, so the
            // descriptor cannot have been closed and reused meanwhile.
            if !state.listenerClosed { shutdown(listener, Int32(SHUT_RDWR)) }
        }
        slots.signal()  // or a wait for a free slot
    }

    /// Once the accepting thread has returned.
    func closeListener() {
        state.withLock { state in
            state.listenerClosed = true
            close(listener)
        }
    }

    /// Asks every open connection to close once it has answered what it is answering, and
    /// waits for them (at most 10 s; then they are closed).
    func quiesce() async {
        let open = state.withLock { Array($0.open.values) }
        for channel in open {
            channel.eventLoop.execute { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !state.withLock({ $0.open.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        for channel in state.withLock({ Array($0.open.values) }) { channel.close(promise: nil) }
    }
}
