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
/// - signing in and registering have no session yet: they need our origin and a JSON
///   content type, which a cross-site form cannot send and a cross-site script cannot send
///   without a CORS preflight this server never grants.
struct CSRFMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    /// `scheme://host[:port]` of every origin this server is reached as.
    let origins: Set<String>
    /// Routes reachable without a session (and so without a CSRF token).
    static let signInRoutes: Set<String> = ["/api/session", "/api/accounts"]

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

/// Finds the session of the request: a live `tresor_session` cookie **and** the same
/// session's origin token in `X-Tresor-Origin-Token` (docs/WEB.md, "The origin token"). Every
/// `/api` route but signing in and registering needs one (`401 unauthorized`, before anything
/// of the request is read). Browsers send the cookie to every port of 127.0.0.1, so a server
/// on another port receives it; the origin token lives in our page's origin-scoped storage,
/// which no other origin can read, so the cookie alone is worth nothing.
///
/// A request may carry several `tresor_session` cookies (one planted by another port with a
/// narrower `Path` is sent first): the one whose session the origin token names is used, so a
/// planted cookie neither signs the page into another account nor locks it out.
/// Requests of a session count as activity for the keybag's auto-lock, except the polls of
/// the status and the widget (a forgotten tab must not keep the keybag open).
struct WebSessionMiddleware: RouterMiddleware {
    typealias Context = WebRequestContext

    let sessions: any WebSessionStore
    /// The home's keybag, whose auto-lock the local account's requests hold off (embedded mode).
    let home: (any LocalKeybag)?

    static let polls: Set<String> = ["/api/status", "/api/widget"]
    /// Session cookies looked at, at most, in one request.
    static let maximumCookies = 8

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let session = try await session(of: request) {
            context.session = session
            // Only the local account's requests are the keybag owner's activity (docs/WEB.md).
            if session.account.isLocal && !Self.polls.contains(request.uri.path) { home?.recordActivity(by: "the web client of the local account") }
        } else if request.uri.path.hasPrefix("/api/") || request.uri.path == "/api" {
            let signingIn = request.method == .post && CSRFMiddleware.signInRoutes.contains(request.uri.path)
            guard signingIn else { throw APIError(.unauthorized, "sign in first") }
        }
        return try await next(request, context)
    }

    private func session(of request: Request) async throws -> WebSession? {
        guard let originToken = request.headers[.xTresorOriginToken] else { return nil }
        let now = Date()
        for token in Self.sessionCookies(request.headers[values: .cookie]).prefix(Self.maximumCookies) {
            if let session = try await sessions.session(forToken: token, originToken: originToken, now: now) { return session }
        }
        return nil
    }

    /// Every `tresor_session` value in the request's `Cookie` headers, in order.
    static func sessionCookies(_ headers: [String]) -> [String] {
        headers.flatMap { $0.split(separator: ";") }.compactMap { pair in
            let pair = pair.trimmingCharacters(in: .whitespaces)
            guard pair.hasPrefix(SessionTokens.cookieName + "=") else { return nil }
            return String(pair.dropFirst(SessionTokens.cookieName.count + 1))
        }
    }
}
