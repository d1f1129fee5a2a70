import Foundation
import Hummingbird
import TresorProtocol
import TresorWebStore

/// `tresor web sessions`: the web server's sessions, listed and ended from the socket
/// (docs/WEB.md, "Sessions end"). The `tresor` CLI only. Tokens never leave the daemon: a
/// session is named by its public id.
struct WebSessionRoutes {
    let sessions: any WebSessionStore
    let callers: CallerResolver

    func register(on router: Router<DaemonRequestContext>) {
        let sessions = self.sessions, callers = self.callers
        router.get(RouterPath(Route.webSessions)) { _, context -> WebSessionList in
            try callers.requireCLI(try context.requireClient(), toManage: "web sessions")
            return WebSessionList(
                sessions: try await sessions.list(now: Date()).map { session in
                    WebSessionInfo(
                        id: session.id, account: session.account.name, isLocal: session.account.isLocal, created: session.created,
                        lastUsed: session.lastUsed, expires: sessions.lifetimes.expiry(of: session), address: session.client?.address,
                        browser: session.client?.browser)
                })
        }
        router.post(RouterPath(Route.endWebSessions)) { request, context -> EndWebSessionsResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "web sessions")
            let body = try await request.decode(as: EndWebSessionsRequest.self, context: context)
            let ended: Int
            switch (body.id, body.all ?? false) {
            case (nil, true): ended = try await sessions.end(.all)
            case (let id?, false):
                ended = try await sessions.end(.id(id))
                guard ended > 0 else { throw APIError(.notFound, "no web session has that id (tresor web sessions lists them)") }
            default: throw APIError(.param, "name one session id, or all")
            }
            context.logger.notice("web sessions ended by a client", metadata: ["count": "\(ended)", "all": "\(body.all ?? false)"])
            return EndWebSessionsResponse(ended: ended)
        }
    }
}

extension WebSessionList: ResponseEncodable {}
extension EndWebSessionsResponse: ResponseEncodable {}
