import Foundation
import Hummingbird
import NIOCore
import TresorProtocol

/// Identifies the client of every request from the socket's peer credentials and refuses
/// processes of another uid (docs/API.md, "Who may call: peer credentials"). Also records activity
/// for auto-lock.
struct PeerMiddleware: RouterMiddleware {
    typealias Context = DaemonRequestContext

    let identifier: ClientIdentifier
    let autoLock: AutoLock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let autoLock = self.autoLock
        let client: Client
        do {
            client = try await identifier.client(of: context.channel) { autoLock.connectionClosed($0) }
        } catch let error as APIError {
            context.logger.warning("refused a client", metadata: ["reason": "\(error.message)"])
            throw error
        }
        admit(client, method: request.method, path: request.uri.path)
        var context = context
        context.client = client
        return try await next(request, context)
    }

    /// The client of `channel` if an earlier request identified it, admitted as ``handle(_:context:next:)``
    /// admits it; nil before the connection's first request went through the router. For
    /// requests answered without the router (``InlineRoutes``).
    func knownClient(of channel: any Channel, method: HTTPRequest.Method, path: String) -> Client? {
        guard let client = identifier.knownClient(of: channel) else { return nil }
        admit(client, method: method, path: path)
        return client
    }

    /// What every request of an identified client does: counts as activity for auto-lock. (The
    /// connection limit is the listener's: a client past it is not accepted.)
    private func admit(_ client: Client, method: HTTPRequest.Method, path: String) {
        // Polling the status — the keybag's or the sync's, which `tresor status` reads both — is not
        // activity: a status bar must not keep the keybag open.
        if !(method == .get && [Route.status, Route.syncStatus].contains(path)) {
            autoLock.touch(by: "a request of \(client.executable) (pid \(client.credentials.pid))")
        }
    }
}
