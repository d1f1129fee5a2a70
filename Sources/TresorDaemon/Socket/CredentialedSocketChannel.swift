import CTresorSystem
import Foundation
import Logging
import NIOCore
import TresorSystem

/// One socket API connection, served by a ``CredentialedEventLoop``: a NIO `Channel` whose
/// reads are `recvmsg(2)` with the sender's credentials.
///
/// Every read that carries bytes must come from the pinned peer — the process that connected —
/// while it still runs; anything else closes the connection before a byte of it reaches the
/// HTTP parser (docs/SECURITY.md §3.4). With `SO_PASSCRED` the kernel never returns bytes of two
/// senders in one read, and it records the sender itself, so a process sharing the socket (a
/// parent that forked the connector, anyone given the descriptor) cannot speak as the peer.
final class CredentialedSocketChannel: Channel, ChannelCore, @unchecked Sendable {
    // @unchecked: every mutable property is touched on `loop`'s thread only (NIO's rule for a
    // channel), and `descriptor`, `peer`, `pipeline` are set before the channel is shared.
    let descriptor: Int32
    let peer: PinnedPeer
    private let loop: CredentialedEventLoop
    private let logger: Logger
    private var _pipeline: ChannelPipeline!
    private let closePromise: EventLoopPromise<Void>
    let allocator = ByteBufferAllocator()

    private var token: UInt64 = 0
    private var open = true
    private var autoRead = true
    private var readRequested = false
    /// Edge-triggered epoll said the socket has bytes, and no read has found it empty since.
    private var readable = false
    private var pendingWrites: [(buffer: ByteBuffer, promises: [EventLoopPromise<Void>])] = []
    private var nextReadSize = 2048

    init(descriptor: Int32, peer: PinnedPeer, loop: CredentialedEventLoop, logger: Logger) {
        self.descriptor = descriptor
        self.peer = peer
        self.loop = loop
        self.logger = logger
        closePromise = loop.makePromise(of: Void.self)
        _pipeline = ChannelPipeline(channel: self)
    }

    var pipeline: ChannelPipeline { _pipeline }
    var eventLoop: any EventLoop { loop }
    var closeFuture: EventLoopFuture<Void> { closePromise.futureResult }
    var localAddress: SocketAddress? { nil }
    var remoteAddress: SocketAddress? { nil }
    var parent: (any Channel)? { nil }
    var isWritable: Bool { true }
    var isActive: Bool { open }
    var _channelCore: any ChannelCore { self }

    func setOption<Option: ChannelOption>(_ option: Option, value: Option.Value) -> EventLoopFuture<Void> {
        guard loop.inEventLoop else { return loop.flatSubmit { self.setOption(option, value: value) } }
        if let value = value as? ChannelOptions.Types.AutoReadOption.Value, option is ChannelOptions.Types.AutoReadOption {
            autoRead = value
            if value { read() }
        }
        return loop.makeSucceededVoidFuture()
    }

    func getOption<Option: ChannelOption>(_ option: Option) -> EventLoopFuture<Option.Value> {
        guard loop.inEventLoop else { return loop.flatSubmit { self.getOption(option) } }
        if option is ChannelOptions.Types.AutoReadOption, let value = autoRead as? Option.Value {
            return loop.makeSucceededFuture(value)
        }
        if option is ChannelOptions.Types.AllowRemoteHalfClosureOption, let value = false as? Option.Value {
            return loop.makeSucceededFuture(value)
        }
        return loop.makeFailedFuture(ChannelError.operationUnsupported)
    }

    /// Starts serving the connection: the pipeline must be set up. On the loop.
    func activate() throws {
        token = try loop.register(self)
        pipeline.fireChannelRegistered()
        pipeline.fireChannelActive()
        if autoRead { pipeline.read() }
    }

    // MARK: events from the loop

    func ready(readable: Bool, writable: Bool, hungUp: Bool) {
        if writable && !pendingWrites.isEmpty { flush0() }
        if readable || hungUp { self.readable = true }
        if hungUp && !readRequested {
            // Both directions are gone: nothing more will be read or written.
            return close0(error: ChannelError.eof, mode: .all, promise: nil)
        }
        readIfWanted()
    }

    func readIfWanted() {
        guard open, readRequested, readable else { return }
        readRequested = false
        var buffer = allocator.buffer(capacity: nextReadSize)
        var sender: pid_t = 0
        var senderUID: uid_t = 0
        var failure: Int32 = 0
        var count = 0
        repeat {
            count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 0) { bytes in
                let result = tresor_recv_with_credentials(descriptor, bytes.baseAddress, UInt(bytes.count), &sender, &senderUID)
                if result < 0 { failure = errno }
                return max(result, 0)
            }
        } while count == 0 && failure == EINTR
        if failure == EAGAIN || failure == EWOULDBLOCK {
            readable = false
            readRequested = true
            return
        }
        if failure != 0 {
            return close0(error: IOError(errnoCode: failure, reason: "recvmsg"), mode: .all, promise: nil)
        }
        if count == 0 {
            return close0(error: ChannelError.eof, mode: .all, promise: nil)
        }
        // The pid is the pinned process's only while that process runs: checked after the
        // read, so a process that exited before its pid was given to the sender is seen.
        guard sender == peer.credentials.pid, senderUID == peer.credentials.uid, peer.isAlive else {
            let error = ForeignSenderError(sender: sender, peer: peer.credentials.pid, peerExited: !peer.isAlive)
            logger.warning("socket API: refused a request not sent by the connected process", metadata: ["reason": "\(error)"])
            return close0(error: error, mode: .all, promise: nil)
        }
        if count == buffer.capacity { nextReadSize = min(nextReadSize * 2, 65_536) }
        pipeline.fireChannelRead(buffer)
        pipeline.fireChannelReadComplete()
        if autoRead && open { pipeline.read() }
    }

    // MARK: ChannelCore

    func localAddress0() throws -> SocketAddress { throw ChannelError.operationUnsupported }
    func remoteAddress0() throws -> SocketAddress { throw ChannelError.operationUnsupported }
    func register0(promise: EventLoopPromise<Void>?) { promise?.succeed() }
    func registerAlreadyConfigured0(promise: EventLoopPromise<Void>?) { promise?.succeed() }
    func bind0(to: SocketAddress, promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    func connect0(to: SocketAddress, promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    func triggerUserOutboundEvent0(_ event: Any, promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    func channelRead0(_ data: NIOAny) {}
    func errorCaught0(error: any Error) {}

    func write0(_ data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard open else { promise?.fail(ChannelError.ioOnClosedChannel); return }
        guard case .byteBuffer(let buffer) = unwrapData(data, as: IOData.self) else {
            promise?.fail(ChannelError.operationUnsupported)
            return
        }
        pendingWrites.append((buffer, promise.map { [$0] } ?? []))
    }

    /// A response's head, body and end are joined into one `send` when they are small (one
    /// system call, as NIO's `writev` made); a large body goes as it is, never copied.
    private static let joinedWriteLimit = 65_536

    func flush0() {
        guard open, !pendingWrites.isEmpty else { return }
        if pendingWrites.count > 1 {
            let total = pendingWrites.reduce(0) { $0 + $1.buffer.readableBytes }
            if total <= Self.joinedWriteLimit {
                var whole = allocator.buffer(capacity: total)
                for var entry in pendingWrites { whole.writeBuffer(&entry.buffer) }
                pendingWrites = [(whole, pendingWrites.flatMap(\.promises))]
            }
        }
        while !pendingWrites.isEmpty {
            var buffer = pendingWrites[0].buffer
            while buffer.readableBytes > 0 {
                var failure: Int32 = 0
                let sent = buffer.withUnsafeReadableBytes { bytes -> Int in
                    let result = send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                    if result < 0 { failure = errno }
                    return result
                }
                if sent >= 0 {
                    buffer.moveReaderIndex(forwardBy: sent)
                } else if failure == EINTR {
                    continue
                } else if failure == EAGAIN || failure == EWOULDBLOCK {
                    // The rest goes when epoll says the socket takes more (``ready``).
                    pendingWrites[0].buffer = buffer
                    return
                } else {
                    return close0(error: IOError(errnoCode: failure, reason: "send"), mode: .all, promise: nil)
                }
            }
            let done = pendingWrites.removeFirst()
            for promise in done.promises { promise.succeed() }
        }
    }

    func read0() {
        guard open else { return }
        readRequested = true
        if readable { loop.readSoon(token: token) }
    }

    func close0(error: any Error, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard open else {
            promise?.fail(ChannelError.alreadyClosed)
            return
        }
        open = false
        loop.unregister(self, token: token)
        let writes = pendingWrites
        pendingWrites = []
        for entry in writes { for promise in entry.promises { promise.fail(ChannelError.ioOnClosedChannel) } }
        Glibc.close(descriptor)
        Glibc.close(peer.pidfd)
        promise?.succeed()
        pipeline.fireChannelInactive()
        pipeline.fireChannelUnregistered()
        // Handlers go once the close is delivered, as NIO's channels do.
        loop.execute {
            self.removeHandlers(pipeline: self.pipeline)
            self.closePromise.succeed()
        }
    }
}
