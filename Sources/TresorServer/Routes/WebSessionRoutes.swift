import Foundation
import Hummingbird
import TresorProtocol

/// `tresor web sessions`: the web server's sessions, listed and ended from the socket
/// (docs/WEB.md, "Sessions end"). The `tresor` CLI only. Tokens never leave the daemon: a
/// session is named by its public id.
struct WebSessionRoutes {
    let sessions: WebSessions
    let callers: CallerResolver

    func register(on router: Router<DaemonRequestContext>) {
        let sessions = self.sessions, callers = self.callers
        router.get(RouterPath(Route.webSessions)) { _, context -> WebSessionList in
            try callers.requireCLI(try context.requireClient(), toManage: "web sessions")
            return WebSessionList(sessions: sessions.list().map { session in
                WebSessionInfo(
                    id: session.id, account: session.account.name, isLocal: session.account.isLocal, created: session.created,
                    lastUsed: session.lastUsed, expires: sessions.expiry(of: session))
            })
        }
        router.post(RouterPath(Route.endWebSessions)) { request, context -> EndWebSessionsResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "web sessions")
            let body = try await request.decode(as: EndWebSessionsRequest.self, context: context)
            let ended: Int
            switch (body.id, body.all ?? false) {
            case (nil, true): ended = sessions.end { _ in true }
            case (let id?, false):
                ended = sessions.end { $0.id == id }
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
