import Foundation
import Hummingbird
import TresorProtocol
import TresorWebStore

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
            guard Self.needsNoSession(request) else { throw APIError(.unauthorized, "sign in first") }
        }
        return try await next(request, context)
    }

    /// What the page reads before anyone is signed in: how one registers here.
    static let readsWithoutSession: Set<String> = ["/api/registration"]

    /// Signing in, registering and ``readsWithoutSession``: the routes of the page before
    /// anyone is signed in.
    static func needsNoSession(_ request: Request) -> Bool {
        (request.method == .post && CSRFMiddleware.signInRoutes.contains(request.uri.path))
            || (request.method == .get && readsWithoutSession.contains(request.uri.path))
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
