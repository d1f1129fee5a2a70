import Foundation
import Hummingbird
import TresorModel
import TresorProtocol

/// `POST /v1/holds` and `DELETE /v1/holds/{id}`: auto-lock holds, tied to their connection.
struct HoldRoutes {
    let autoLock: AutoLock

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.holds)) { request, context -> Hold in
            let body = try await request.decode(as: HoldRequest.self, context: context)
            let reason = body.reason.trimmingCharacters(in: .whitespacesAndNewlines)
            guard (1...200).contains(reason.count) else {
                throw APIError(.param, "a hold needs a reason of 1 to 200 characters")
            }
            // The reason is shown in logs and in `tresor status`: no forged lines or escapes.
            guard TerminalText.isOneLineAsWritten(reason) else {
                throw APIError(.param, "a hold reason is one line: no control characters, line separators or direction controls")
            }
            let client = try context.requireClient()
            let hold = autoLock.addHold(reason: reason, client: client.description, connection: client.connection)
            context.logger.info("auto-lock hold added", metadata: ["pid": "\(client.credentials.pid)", "reason": "\(reason)"])
            return hold
        }
        router.delete(RouterPath(Route.holds + "/:id")) { _, context -> Response in
            let id = try context.parameters.require("id")
            guard autoLock.removeHold(id: id, connection: try context.requireClient().connection) else {
                throw APIError(.notFound, "no hold \(id) made on this connection")
            }
            return Response(status: .noContent)
        }
    }
}
