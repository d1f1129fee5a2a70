import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes

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
        context.answerAndClose(
            .forbidden,
            json:
                #"{"code":"peerRejected","message":"this web server serves only the local user who runs tresord (see webAllowedUIDs in docs/WEB.md)"}"#
        )
    }
}
