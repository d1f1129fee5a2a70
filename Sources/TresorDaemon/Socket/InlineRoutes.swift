import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import TresorProtocol

/// The requests ``SocketRequestHandler`` answers itself, on the connection's event loop, as
/// soon as they have arrived — without the router: the keychain reads a blind index answers,
/// the requests applications make most — `GET /v1/items/secret` (a lookup),
/// `GET /v1/items/attributes` (TresorKit's find by label) and `POST /v1/items/search` without a
/// passcode (a find by label, an account, a custom pair).
///
/// The router's way costs a request a `Request`, a task, the middleware chain and a `Response`:
/// as much of the daemon's CPU as the keychain's own work (BENCHMARKS.md §1). What the
/// middleware gives a request is given here by the same code: ``PeerMiddleware`` admits the
/// client (the connection's first request goes through the router, which identifies the peer),
/// ``ItemRoutes`` answers, ``ErrorMiddleware`` turns a failure into the API's error. Anything
/// else — a query no index answers, the System Roots keychain, a passcode, a body that does not
/// decode — goes to the router. A fast path (docs/ARCHITECTURE.md, "Fast paths and their
/// twins"): its twin is the router; `SecretRouteTests.laterRequestsOnAConnectionAnswerAsItsFirst`,
/// `laterSearchesOnAConnectionAnswerAsItsFirst` and
/// `AttributesRouteTests.laterFindsOnAConnectionAnswerAsItsFirst` hold them equal.
struct InlineRoutes: Sendable {
    let peers: PeerMiddleware
    let items: ItemRoutes
    let logger: Logger

    /// The answer to a request that arrived whole with `head` and `body`, or nil when the
    /// router must answer it.
    func answer(_ head: HTTPRequestHead, body: ByteBuffer, channel: any Channel) -> CompleteResponse? {
        switch head.method {
        case .GET where body.readableBytes == 0:
            let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            let queryString = parts.count > 1 ? String(parts[1]) : ""
            switch parts[0] {
            case Route.itemSecret:
                return answer(path: Route.itemSecret, method: .get, channel: channel) { client in
                    let (query, keychain, unique) = try ItemSecretQuery.parse(queryString)
                    guard let secret = try items.secretFromIndex(query, keychain: keychain, unique: unique, client: client) else { return nil }
                    return CompleteResponse(
                        head: HTTPResponse(status: .ok, headerFields: [.contentType: "application/octet-stream"]), body: ByteBuffer(bytes: secret))
                }
            case Route.itemAttributes:
                return answer(path: Route.itemAttributes, method: .get, channel: channel) { client in
                    let (query, keychain) = try ItemSecretQuery.parseAttributesQuery(queryString)
                    guard let found = try items.searchFromIndex(query, keychain: keychain, client: client) else { return nil }
                    return CompleteResponse(
                        head: HTTPResponse(status: .ok, headerFields: [.contentType: ItemAttributesList.contentType]),
                        body: ByteBuffer(bytes: ItemAttributesList.encode(found.compactMap(\.attributes))))
                }
            default:
                return nil
            }
        case .POST where head.uri == Route.searchItems:
            return answer(path: Route.searchItems, method: .post, channel: channel) { client in
                // A body the decoder refuses is the router's to answer, in its words.
                guard let request = try? DaemonJSON.decoder.decode(SearchItemsRequest.self, from: body), request.passcode == nil,
                    let found = try items.searchFromIndex(request.query, keychain: request.keychain, client: client)
                else { return nil }
                let json = try DaemonJSON.encoder.encode(ItemsResponse(items: found))
                return CompleteResponse(
                    head: HTTPResponse(status: .ok, headerFields: [.contentType: "application/json; charset=utf-8"]), body: ByteBuffer(bytes: json))
            }
        default:
            return nil
        }
    }

    /// `respond`'s answer for a client the connection already identified, its failure as the
    /// API's error; nil when the router must answer (a new connection, or `respond` says so).
    private func answer(
        path: String, method: HTTPRequest.Method, channel: any Channel, _ respond: (Client) throws -> CompleteResponse?
    ) -> CompleteResponse? {
        do {
            guard let client = peers.knownClient(of: channel, method: method, path: path) else { return nil }
            return try respond(client)
        } catch {
            return ErrorMiddleware.completeResponse(for: ErrorMiddleware.apiError(for: error, path: path, logger: logger))
        }
    }
}
