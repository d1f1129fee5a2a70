import Hummingbird
import NIOCore
import TresorProtocol
import TresorWebStore

/// `GET /api/events`: the page's stream of live updates, authenticated as every `/api` route
/// is (the session cookie and the origin token header — so the page reads it with `fetch`,
/// not `EventSource`, which cannot send a header).
struct WebEventRoutes {
    let services: WebServices

    func register(on router: Router<WebRequestContext>) {
        let events = services.events
        router.get("/api/events") { _, context -> Response in
            let session = try context.requireSession()
            guard let (id, stream) = events.open(for: session) else {
                throw APIError(.throttled, "too many live-update streams are open; try again later", retryAfterSeconds: 5)
            }
            context.logger.info("web: live updates opened", metadata: ["account": "\(session.account.id.rawValue.prefix(36))"])
            let body = ResponseBody { writer in
                do {
                    try await writer.write(ByteBuffer(string: "retry: 2000\n: live updates\n\n"))
                    for await event in stream {
                        try await writer.write(ByteBuffer(string: event.name == "keepAlive" ? ": keep-alive\n\n" : event.text))
                    }
                    events.close(id)
                    try await writer.finish(nil)
                } catch {
                    events.close(id)
                    throw error
                }
            }
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: body)
        }
    }
}
