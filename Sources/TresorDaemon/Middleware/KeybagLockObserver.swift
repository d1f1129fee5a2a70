import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat
import TresorProtocol
import TresorWebStore

/// On the socket: what the web sessions learn from the login keybag and the CLI's notes
/// (docs/WEB.md, "Sessions end").
/// - After a client locks the keybag (`tresor lock`), no browser's secure session counts for
///   the widget any more — a keybag lock ends every secure session, and the browser drops its
///   keys when it sees the lock. Without this, a lock and an unlock in quick succession could
///   leave a browser's earlier "open" standing.
/// - A lock of the login keybag, `tresor note lock-now`, and a change or removal of the login
///   passcode also **end the local account's web sessions**: the local account signs in with
///   the passcode, so whoever locked or changed it wants the passcode asked for again. Other
///   accounts' sessions stay (their password is not the passcode; their notes are unreadable
///   while the keybag is locked anyway).
struct KeybagLockObserver: RouterMiddleware {
    typealias Context = DaemonRequestContext

    let sessions: any WebSessionStore

    /// The routes that end the local account's sessions when they succeed.
    static let endingRoutes: Set<String> = [Route.lock, Route.notesLockNow, Route.changePasscode, Route.removePasscode]

    /// The keychain a request names (`keychain`, absent: the login keybag).
    private struct KeychainNamed: Decodable { var keychain: String? }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post, Self.endingRoutes.contains(request.uri.path) else { return try await next(request, context) }
        // The body says which keychain; collected here, it is still there for the route.
        var request = request
        let body = try await request.collectBody(upTo: context.maxUploadSize)
        let named = body.readableBytes == 0 ? nil : try? JSONDecoder().decode(KeychainNamed.self, from: Data(buffer: body))
        let response = try await next(request, context)
        guard (200..<300).contains(response.status.code) else { return response }
        if request.uri.path == Route.lock { try? await sessions.forgetSecureSessions() }
        let login = named?.keychain == nil || named?.keychain == KeychainName.login
        if login || request.uri.path == Route.notesLockNow {
            let ended = (try? await sessions.end(.localAccount)) ?? 0
            if ended > 0 {
                context.logger.notice("web: local account's sessions ended", metadata: ["route": "\(request.uri.path)", "count": "\(ended)"])
            }
        }
        return response
    }
}
