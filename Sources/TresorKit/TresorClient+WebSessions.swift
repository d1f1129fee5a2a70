import FoundationEssentials
import TresorProtocol

extension TresorClient {
    /// The web server's live sessions (never their tokens).
    /// - Returns: every signed-in browser, oldest first; only the `tresor` CLI may ask.
    /// - Throws: `APIError` from the daemon.
    public func webSessions() throws -> [WebSessionInfo] {
        let list: WebSessionList = try call("GET", Route.webSessions)
        return list.sessions
    }

    /// Signs web sessions out.
    /// - Parameters:
    ///   - id: one session's id (from ``webSessions()``), or nil with `all`.
    ///   - all: every session of every account.
    /// - Returns: how many sessions ended (`notFound` when `id` names none).
    /// - Throws: `APIError` from the daemon.
    @discardableResult
    public func endWebSessions(id: String?, all: Bool = false) throws -> Int {
        let response: EndWebSessionsResponse = try call("POST", Route.endWebSessions, EndWebSessionsRequest(id: id, all: all ? true : nil))
        return response.ended
    }
}
