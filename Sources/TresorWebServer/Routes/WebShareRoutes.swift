import Foundation
import Hummingbird
import TresorNotesDomain
import TresorProtocol

/// Sharing (docs/WEB.md): the owner adds and removes participants by login name; a participant
/// may remove themself (leave). A locked note cannot be shared (`409 wrongLockState`).
struct WebShareRoutes {
    let services: WebServices

    struct ShareRequest: Decodable {
        var name: String
    }

    func register(on router: Router<WebRequestContext>) {
        let services = self.services
        router.post("/api/notes/:id/participants") { request, context -> Response in
            let id = try context.parameters.require("id")
            _ = try context.requireSession()
            let body = try await WebCoding.decode(ShareRequest.self, request)
            let share = try await services.performOnNote("share", context, id: id, ownerOnly: true) { store, account, _ in
                try await store.share(note: id, with: body.name, by: account.id)
            }
            return try WebCoding.response(share, status: .created)
        }
        router.delete("/api/notes/:id/participants/:name") { _, context -> Response in
            let id = try context.parameters.require("id"), name = try context.parameters.require("name")
            try await services.performOnNote("unshare", context, id: id) { store, account, _ in
                try await store.unshare(note: id, participant: name, by: account.id)
            }
            return Response(status: .noContent)
        }
    }
}
