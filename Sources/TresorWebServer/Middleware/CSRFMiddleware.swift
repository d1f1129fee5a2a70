import Foundation
import Hummingbird
import TresorCrypto
import TresorProtocol
import TresorWebStore

/// Who may ask (docs/WEB.md, "CSRF"):
/// - every request must name this server in `Host` (127.0.0.1, localhost or [::1] with our
///   port, or the configured public origin's host): a DNS-rebinding page on another name gets
///   `403 csrf` (`GET /healthz` excepted: a load balancer asks by address);
/// - every request but GET and HEAD must come from our own origin when the browser says
///   (`Origin`, `Sec-Fetch-Site`), and carry `X-Tresor-CSRF` equal to its session's token;
/// - signing in, registering and setting a forgotten password have no session yet: they need our origin and a JSON
///   content type, which a cross-site form cannot send and a cross-site script cannot send
///   without a CORS preflight this server never grants.
struct CSRFMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    /// `scheme://host[:port]` of every origin this server is reached as.
    let origins: Set<String>
    /// Routes reachable without a session (and so without a CSRF token).
    static let signInRoutes: Set<String> = ["/api/session", "/api/accounts", "/api/account/password-reset"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.path == HealthRoutes.path && request.method == .get { return try await next(request, context) }
        guard let host = request.head.authority?.lowercased(), origins.contains(where: { Self.host(of: $0) == host }) else {
            throw APIError(.csrf, "this server answers only as \(origins.sorted().joined(separator: " or "))")
        }
        guard request.method != .get && request.method != .head else { return try await next(request, context) }

        if let origin = request.headers[.origin], !origins.contains(origin.lowercased()) {
            throw APIError(.csrf, "cross-origin request refused")
        }
        if let site = request.headers[.secFetchSite], site != "same-origin", site != "none" {
            throw APIError(.csrf, "cross-site request refused")
        }
        if request.method == .post && Self.signInRoutes.contains(request.uri.path) {
            guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
                throw APIError(.csrf, "signing in needs Content-Type: application/json")
            }
            return try await next(request, context)
        }
        // Without a session the route answers 401; with one, its token must come along.
        if let session = context.session {
            guard let token = request.headers[.xTresorCSRF], ConstantTime.equals(Data(token.utf8), Data(session.csrfToken.utf8)) else {
                throw APIError(.csrf, "missing or wrong X-Tresor-CSRF header")
            }
        }
        return try await next(request, context)
    }

    /// The `Host` an origin is named by: `127.0.0.1:8421` of `http://127.0.0.1:8421`.
    static func host(of origin: String) -> Substring {
        origin.split(separator: "://", maxSplits: 1).last ?? ""
    }
}
