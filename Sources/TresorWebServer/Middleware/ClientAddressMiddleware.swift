import Foundation
import HTTPTypes
import Hummingbird

/// Whose request it is, for the per-address rate limits (docs/WEB.md, "Running behind a
/// reverse proxy"): the connection's peer, unless that peer is one of `webTrustedProxies` —
/// then the right-most address of `X-Forwarded-For` that is not a trusted proxy. A header from
/// anyone else is ignored: a client cannot pick the address it is counted under.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    let trustedProxies: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !trustedProxies.isEmpty, trustedProxies.contains(context.peerAddress) else { return try await next(request, context) }
        var context = context
        context.clientAddress = Self.client(forwardedFor: request.headers[values: .xForwardedFor], trusted: trustedProxies) ?? context.peerAddress
        return try await next(request, context)
    }

    /// The right-most address of the `X-Forwarded-For` values that is not a trusted proxy (each
    /// proxy appends the address it was reached from), or nil when there is none.
    static func client(forwardedFor values: [String], trusted: Set<String>) -> String? {
        let hops = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for hop in hops.reversed().prefix(16) where !trusted.contains(hop) {
            return WebConfiguration.isIPAddress(hop) ? hop : nil
        }
        return nil
    }
}
