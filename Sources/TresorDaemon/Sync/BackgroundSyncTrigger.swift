import Hummingbird
import TresorProtocol

/// Pokes the background sync after what may start, stop or unblock it: an unlock or an
/// initialization of the keybag, and any change of the sync account (a join, an approval, a
/// leave…). Local changes of items reach it through the keychain's outbox instead.
struct BackgroundSyncTrigger: RouterMiddleware {
    typealias Context = DaemonRequestContext

    let background: BackgroundSync

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        let path = request.uri.path
        if request.method != .get, (200..<300).contains(response.status.code),
            path == Route.unlock || path == Route.initialize || path.hasPrefix("/v1/sync-account/")
        {
            background.poke()
        }
        return response
    }
}
