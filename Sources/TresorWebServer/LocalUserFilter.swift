import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes

/// Which local users the web server serves (docs/WEB.md, "Local users"): by default only the
/// uid the daemon runs as — the home's owner —, plus the uids of `webAllowedUIDs`, or every
/// local user with `webAllowAnyLocalUser` (a family machine whose members all sign in).
public struct LocalUserPolicy: Sendable, Equatable {
    /// Every uid admitted (the daemon's own among them); ignored when `anyUser` is set.
    public var uids: Set<UInt32>
    /// Whether any local user may connect.
    public var anyUser: Bool

    /// Only the daemon's own uid, plus `others`.
    public static func owner(_ uid: UInt32, and others: [UInt32] = []) -> LocalUserPolicy {
        LocalUserPolicy(uids: Set([uid] + others), anyUser: false)
    }

    /// Whether the client at the other end of `local` ↔ `remote` may be served: with
    /// `lookup`'s uid (the kernel's table; nil when unknown, which is refused).
    func admits(local: SocketAddress?, remote: SocketAddress?, lookup: (SocketAddress?, SocketAddress?) -> UInt32? = LoopbackPeers.owner)
        -> (admitted: Bool, uid: UInt32?)
    {
        if anyUser { return (true, nil) }
        let uid = lookup(local, remote)
        return (uid.map(uids.contains) ?? false, uid)
    }
}

/// Refuses, at its first request, a connection from a local user the ``LocalUserPolicy``
/// does not admit: `403 peerRejected` and the connection closed, before any route, cookie or
/// body is looked at. The uid is looked up once per connection.
final class LocalUserFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    let policy: LocalUserPolicy
    let logger: Logger
    let limiter: RepeatedLogLimiter
    let peerOwner: LoopbackPeerOwner
    private var admitted: Bool?

    init(policy: LocalUserPolicy, logger: Logger, limiter: RepeatedLogLimiter, peerOwner: LoopbackPeerOwner = LoopbackPeerOwner()) {
        self.policy = policy
        self.logger = logger
        self.limiter = limiter
        self.peerOwner = peerOwner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if admitted == nil {
            let (admitted, uid) = policy.admits(local: context.channel.localAddress, remote: context.channel.remoteAddress, lookup: peerOwner.owner)
            self.admitted = admitted
            if !admitted {
                limiter.notice("web: connection of another local user refused", logger, metadata: ["uid": "\(uid.map(String.init) ?? "unknown")"])
            }
        }
        if admitted == true {
            context.fireChannelRead(data)
            return
        }
        // Only the head is answered; the rest of a refused request is dropped unread.
        guard case .head = unwrapInboundIn(data) else { return }
        let body = ByteBuffer(string: #"{"code":"peerRejected","message":"this web server serves only the local user who runs tresord (see webAllowedUIDs in docs/WEB.md)"}"#)
        var head = HTTPResponse(status: .forbidden)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.contentLength] = String(body.readableBytes)
        head.headerFields[.connection] = "close"
        head.headerFields[.cacheControl] = "no-store"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}

/// Closes connections that hold a slot without using it (docs/WEB.md, "Availability"): one
/// that sends no complete request head within `firstRequestSeconds` of opening or `idleSeconds`
/// of its previous answer (idle keep-alive, or a slowloris dripping header bytes), and one whose request
/// body does not arrive within `requestSeconds` of its head, or whose client stops taking an
/// answer written a piece at a time for `idleSeconds`. While the server works on an answer, no
/// deadline runs.
final class ConnectionDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let firstRequest: TimeAmount
    let idle: TimeAmount
    let request: TimeAmount
    private var deadline: Scheduled<Void>?
    /// A request head was read and its end not yet.
    private var requestOpen = false
    /// The current request was answered (maybe early, before its body was read: a 401 or 413).
    private var answered = false

    init(firstRequestSeconds: Int, idleSeconds: Int, requestSeconds: Int) {
        firstRequest = .seconds(Int64(firstRequestSeconds))
        idle = .seconds(Int64(idleSeconds))
        request = .seconds(Int64(requestSeconds))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // A browser sends its request as soon as it connects: a connection that sends none
        // holds a slot for nothing.
        arm(context, firstRequest)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            requestOpen = true
            answered = false
            arm(context, request)
        case .body:
            break
        case .end:
            requestOpen = false
            if answered { arm(context, idle) } else { disarm() }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .end:
            answered = true
            // Answered before the body was all read: the request deadline keeps running.
            if !requestOpen { arm(context, idle) }
        case .body:
            // An answer written a piece at a time (an attachment): the next piece is written only
            // once the client has taken enough of the last, so a client that stops reading is
            // closed `idle` after the last piece, as an idle one is.
            if !requestOpen { arm(context, idle) }
        case .head:
            break
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext, _ after: TimeAmount) {
        disarm()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: after) { channel.close(promise: nil) }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
