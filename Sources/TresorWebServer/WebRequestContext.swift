import Foundation
import Hummingbird
import NIOCore
import TresorProtocol
import TresorWebStore

/// The per-request context of the web server: Hummingbird's core storage, the client's
/// address (for login rate limits) and, once ``WebSessionMiddleware`` found a live session
/// (its cookie and its origin token), the signed-in session.
package struct WebRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The client's IP address, for the per-address login limit: the connection's peer, or —
    /// when the peer is a trusted proxy — the client its `X-Forwarded-For` names
    /// (``ClientAddressMiddleware``).
    package var clientAddress: String
    /// The connection's own peer (the proxy, behind one).
    let peerAddress: String
    var session: WebSession?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        clientAddress = peerAddress
    }

    // The API's coders (``APICoding``), made once: they are thread-safe, and making them anew
    // per request costs time.
    private static let decoder = APICoding.requestDecoder
    private static let encoder = APICoding.encoder

    package var requestDecoder: JSONDecoder { Self.decoder }
    package var responseEncoder: JSONEncoder { Self.encoder }

    /// The default body limit (ordinary JSON requests); routes that take more collect their
    /// body themselves with a larger bound (``WebLimits``).
    package var maxUploadSize: Int { WebLimits.jsonBytes }

    /// The session, or `401 unauthorized`.
    func requireSession() throws -> WebSession {
        guard let session else { throw APIError(.unauthorized, "sign in first") }
        return session
    }
}
