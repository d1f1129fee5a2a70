import Foundation
import Hummingbird
import TresorProtocol

/// `GET /api/widget` and `POST /api/secure-session` (the browser says whether its secure
/// session — its locked-note keys — is open, so the widget may show titles).
struct WebWidgetRoutes {
    let services: WebServices

    struct SecureSessionRequest: Decodable {
        var open: Bool
        /// Why it closed: `lockNow`, `idle` or `hidden` (auto-lock) close the account's other
        /// pages' locked notes too (docs/WEB.md, "Live updates").
        var reason: String?
    }

    /// The reasons a closed secure session is told to the account's other pages.
    static let sharedLockReasons: Set<String> = ["lockNow", "idle", "hidden"]

    func register(on router: Router<WebRequestContext>) {
        let services = self.services
        router.get("/api/widget") { _, context -> Response in
            let session = try context.requireSession()
            return try WebCoding.response(try await services.widget.widget(for: session.account.id, browser: session))
        }
        router.post("/api/secure-session") { request, context -> Response in
            let session = try context.requireSession()
            let body = try await WebCoding.decode(SecureSessionRequest.self, request)
            try await services.sessions.reportSecureSession(session, open: body.open, now: Date())
            if !body.open, let reason = body.reason, Self.sharedLockReasons.contains(reason) {
                // Through the backend: the account's pages on every instance lock.
                try await services.backend.events.publish(.secureSessionEnded(account: session.account.id, reason: reason))
            }
            context.logger.info("web: secure session reported", metadata: ["open": "\(body.open)"])
            return Response(status: .noContent)
        }
    }
}
