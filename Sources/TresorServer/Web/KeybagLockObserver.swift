import Foundation
import Hummingbird
import TresorProtocol

/// On the socket: after a client locks the keybag (`tresor lock`), no browser's secure
/// session counts for the widget any more — a keybag lock ends every secure session, and the
/// browser drops its keys when it sees the lock. Without this, a lock and an unlock in quick
/// succession could leave a browser's earlier "open" standing.
struct KeybagLockObserver: RouterMiddleware {
    typealias Context = DaemonRequestContext

    let sessions: WebSessions

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        if request.method == .post, request.uri.path == Route.lock, (200..<300).contains(response.status.code) {
            sessions.forgetSecureSessions()
        }
        return response
    }
}
