import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import TresorProtocol

/// The requests ``SocketRequestHandler`` answers itself, on the connection's event loop, as
/// soon as they have arrived — without the router: `GET /v1/items/secret` answered from a blind
/// index, the lookup applications make most.
///
/// The router's way costs a lookup a `Request`, a task, the middleware chain and a `Response`:
/// as much of the daemon's CPU as the keychain's own work (BENCHMARKS.md §1). What the
/// middleware gives a request is given here by the same code: ``PeerMiddleware`` admits the
/// client (the connection's first request goes through the router, which identifies the peer),
/// ``ItemRoutes`` answers, ``ErrorMiddleware`` turns a failure into the API's error. Anything
/// else — a query no index answers, the System Roots keychain, a body — goes to the router.
/// A fast path (docs/ARCHITECTURE.md, "Fast paths and their twins"): its twin is the router;
/// `SecretRouteTests.laterRequestsOnAConnectionAnswerAsItsFirst` holds them equal.
struct InlineRoutes: Sendable {
    let peers: PeerMiddleware
    let items: ItemRoutes
    let logger: Logger

    /// The answer to a request that arrived whole with `head` and no body, or nil when the router
    /// must answer it.
    func answer(_ head: HTTPRequestHead, channel: any Channel) -> CompleteResponse? {
        guard head.method == .GET else { return nil }
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts[0] == Route.itemSecret else { return nil }
        do {
            guard let client = try peers.knownClient(of: channel, method: .get, path: Route.itemSecret) else { return nil }
            let (query, keychain, unique) = try ItemSecretQuery.parse(parts.count > 1 ? String(parts[1]) : "")
            guard let secret = try items.secretFromIndex(query, keychain: keychain, unique: unique, client: client) else { return nil }
            return CompleteResponse(
                head: HTTPResponse(status: .ok, headerFields: [.contentType: "application/octet-stream"]), body: ByteBuffer(bytes: secret))
        } catch {
            return ErrorMiddleware.completeResponse(for: ErrorMiddleware.apiError(for: error, path: Route.itemSecret, logger: logger))
        }
    }
}
