import Hummingbird
import TresorProtocol

/// On the socket: after a client creates, unlocks or locks a keybag (`tresor init`, `unlock`, `lock`),
/// tells the Secret Service at once, so a program waiting on an unlock prompt gets its answer
/// without waiting for the provider's next look at the keybag.
struct KeybagChangeNotifier: RouterMiddleware {
    typealias Context = DaemonRequestContext

    let changed: @Sendable () -> Void

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        if request.method == .post, [Route.initialize, Route.unlock, Route.lock].contains(request.uri.path),
            (200..<300).contains(response.status.code)
        {
            changed()
        }
        return response
    }
}
