import Foundation
import Hummingbird
import NIOCore
import TresorProtocol

/// The per-request context of the daemon's socket API: Hummingbird's core storage, the
/// connection's channel (for its peer credentials) and, once the peer middleware has run,
/// the identified client.
struct DaemonRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    var client: Client?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    var requestDecoder: JSONDecoder { DaemonJSON.decoder }
    var responseEncoder: JSONEncoder { DaemonJSON.encoder }

    /// Bounded so a hostile client cannot make the daemon buffer more than a route takes: the
    /// socket's reader has refused a body over its route's limit already (``RequestBodyLimits``).
    var maxUploadSize: Int { RequestBodyLimits.largestWhole }

    /// The identified client; set for every route behind ``PeerMiddleware``.
    func requireClient() throws -> Client {
        guard let client else { throw APIError(.peerRejected, "the client was not identified") }
        return client
    }
}
