import NIOCore
import NIOHTTP1

/// Closes a socket API connection that holds one of the daemon's slots without using it
/// (docs/API.md, "Connections"): one that sends no complete request head within `idle` of
/// connecting or of its previous answer (a client that leaked it, or one dripping a head a byte
/// at a time), one whose request body stops arriving for `idle`, and one whose client stops
/// taking an answer written a piece at a time for `idle`. While the daemon works on an answer
/// (a long wait for `tresor approve`, an unlock's key derivation) no deadline runs, and a
/// connection that holds auto-lock off (`keepsOpen`) is never closed: its hold would end with it.
///
/// Every answer says how long an idle connection is kept (`Keep-Alive: timeout=N`), so a client
/// opens a new connection instead of sending on one about to be closed (TresorKit's
/// `TresorClient` does).
final class SocketConnectionDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let idleSeconds: Int
    /// The `Keep-Alive` header's value, made once.
    private let keepAlive: String
    private let keepsOpen: @Sendable (ConnectionID) -> Bool
    private var timer: Scheduled<Void>?
    /// When the client last moved the connection on: connected, sent part of a request, took
    /// an answer or a piece of one.
    private var lastProgress = NIODeadline.now()
    /// A request was read whole and its answer not begun: the daemon works, the client waits.
    private var working = false
    /// The current request was answered (maybe before its body was all read: a `413`).
    private var answered = false

    /// - Parameters:
    ///   - idleSeconds: how long a connection may go without progress while no answer is
    ///     being worked on.
    ///   - keepsOpen: whether the connection holds something that ends with it (an auto-lock hold).
    init(idleSeconds: Int, keepsOpen: @escaping @Sendable (ConnectionID) -> Bool) {
        self.idleSeconds = idleSeconds
        keepAlive = "timeout=\(idleSeconds)"
        self.keepsOpen = keepsOpen
    }

    func handlerAdded(context: ChannelHandlerContext) {
        schedule(context, at: lastProgress + .seconds(Int64(idleSeconds)))
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    // Progress only moves a time stamp: one timer per connection, looked at when it fires,
    // costs a request nothing.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastProgress = .now()
        switch unwrapInboundIn(data) {
        case .head: answered = false
        case .body: break
        case .end: working = !answered
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            // From the answer's head on, the client must take it.
            lastProgress = .now()
            working = false
            head.headers.add(name: "Keep-Alive", value: keepAlive)
            return context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            // A piece is written once the client took enough of the one before: one that
            // stops reading is closed `idle` after the last piece, as an idle one is.
            lastProgress = .now()
        case .end:
            // Answered, maybe before the body was all read (a `413`): the client's turn.
            lastProgress = .now()
            answered = true
        }
        context.write(data, promise: promise)
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        let loop = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) { loop.value.0.due(loop.value.1) }
    }

    private func due(_ context: ChannelHandlerContext) {
        let idle = TimeAmount.seconds(Int64(idleSeconds))
        let now = NIODeadline.now()
        if working || keepsOpen(ConnectionID(context.channel)) {
            schedule(context, at: now + idle)
        } else if now - lastProgress >= idle {
            context.close(promise: nil)
        } else {
            schedule(context, at: lastProgress + idle)
        }
    }
}
