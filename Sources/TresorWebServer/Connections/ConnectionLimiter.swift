import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes

/// Applies ``ConnectionLimits`` as a connection opens, before a byte of it is read: a
/// connection over its client's share is closed at once. Loopback peers are counted by the uid
/// the kernel lists them under (``LoopbackPeers``), others by address. A trusted proxy's
/// connections are the owner's; each of its requests is counted, while it runs (a live-update
/// stream as long as it lasts), for the client its `X-Forwarded-For` names
/// (``ClientAddressMiddleware``): over the share, `429 throttled` and the connection closed.
final class ConnectionLimiter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let connections: ConnectionSlots
    let forwardedRequests: ConnectionSlots
    let trustedProxies: Set<String>
    let ownerUID: UInt32
    let logger: Logger
    let limiter: RepeatedLogLimiter
    /// The uid of a loopback peer: the connection's ``LoopbackPeerOwner``, shared with ``LocalUserFilter``.
    let lookup: (SocketAddress?, SocketAddress?) -> UInt32?
    private var holder: ConnectionHolder?
    /// The forwarded clients the requests read and not yet answered count for, oldest first
    /// (answers go out in the order of the requests).
    private var requestHolders: [ConnectionHolder] = []
    /// The connection, or a request of it, was over its client's share: whatever comes is dropped unread.
    private var refusing = false

    init(
        connections: ConnectionSlots, forwardedRequests: ConnectionSlots, trustedProxies: Set<String>, ownerUID: UInt32, logger: Logger,
        limiter: RepeatedLogLimiter,
        lookup: @escaping (SocketAddress?, SocketAddress?) -> UInt32?
    ) {
        self.connections = connections
        self.forwardedRequests = forwardedRequests
        self.trustedProxies = trustedProxies
        self.ownerUID = ownerUID
        self.logger = logger
        self.limiter = limiter
        self.lookup = lookup
    }

    /// Whom the connection of `channel` counts for.
    func holder(of channel: any Channel) -> ConnectionHolder {
        let peer = channel.remoteAddress?.ipAddress ?? "unknown"
        if trustedProxies.contains(peer) { return .trustedProxy }
        guard Self.isLoopback(peer) else { return .client(peer) }
        guard let uid = lookup(channel.localAddress, channel.remoteAddress) else { return .client("uid unknown") }
        return uid == ownerUID ? .owner : .client("uid \(uid)")
    }

    /// 127.0.0.0/8 and ::1, as such or IPv4-mapped: every local user can pick any of them.
    static func isLoopback(_ address: String) -> Bool {
        let address = address.lowercased()
        return WebConfiguration.isLoopback(address) || address.hasPrefix("::ffff:127.")
    }

    func channelActive(context: ChannelHandlerContext) {
        let holder = holder(of: context.channel)
        context.fireChannelActive()
        guard connections.take(for: holder) else {
            if case .client(let client) = holder {
                limiter.notice("web: connection over its client's share closed", logger, metadata: ["client": "\(client)"])
            }
            refusing = true
            // Reset rather than closed in order: a flood of refused connections leaves no
            // TIME_WAIT sockets behind.
            let channel = context.channel
            if let socket = channel as? any SocketOptionProvider {
                socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
            return
        }
        self.holder = holder
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let holder { connections.giveBack(for: holder) }
        holder = nil
        while !requestHolders.isEmpty { endRequest() }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if refusing { return }
        guard holder == .trustedProxy, case .head(let request) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let client = ClientAddressMiddleware.client(forwardedFor: request.headerFields[values: .xForwardedFor], trusted: trustedProxies)
        let requestHolder = ConnectionHolder.client(client ?? "unknown")
        guard forwardedRequests.take(for: requestHolder) else {
            limiter.notice("web: request over its client's share refused", logger, metadata: ["client": "\(client ?? "unknown")"])
            refuse(context)
            return
        }
        requestHolders.append(requestHolder)
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { endRequest() }
        context.write(data, promise: promise)
    }

    private func endRequest() {
        guard !requestHolders.isEmpty else { return }
        forwardedRequests.giveBack(for: requestHolders.removeFirst())
    }

    /// `429 throttled`, and the connection closed once it is written.
    private func refuse(_ context: ChannelHandlerContext) {
        refusing = true
        context.answerAndClose(
            .tooManyRequests, json: #"{"code":"throttled","message":"too many requests of this client at once","retryAfterSeconds":1}"#,
            headers: [.retryAfter: "1"])
    }
}
