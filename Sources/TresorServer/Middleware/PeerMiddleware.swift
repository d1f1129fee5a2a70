import Foundation
import Hummingbird
import TresorProtocol

/// Identifies the client of every request from the socket's peer credentials and refuses
/// processes of another uid (SPEC §3.5). Also records activity for auto-lock.
struct PeerMiddleware: RouterMiddleware {
    typealias Context = DaemonRequestContext

    let identifier: ClientIdentifier
    let autoLock: AutoLock
    let maximumConnections: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let autoLock = self.autoLock
        let client: Client
        do {
            client = try await identifier.client(of: context.channel) { autoLock.connectionClosed($0) }
        } catch let error as APIError {
            context.logger.warning("refused a client", metadata: ["reason": "\(error.message)"])
            throw error
        }
        guard identifier.connectionCount <= maximumConnections else {
            throw APIError(.param, "too many connections (limit \(maximumConnections))")
        }
        // Polling the status is not activity: a status bar must not keep the keybag open.
        if !(request.method == .get && request.uri.path == Route.status) { autoLock.touch() }
        var context = context
        context.client = client
        return try await next(request, context)
    }
}
