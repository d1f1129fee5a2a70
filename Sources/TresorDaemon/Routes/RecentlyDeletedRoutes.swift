import Foundation
import Hummingbird
import TresorNotes
import TresorProtocol

/// Recently Deleted on the socket (docs/API.md, "Recently Deleted"): `tresor note delete`
/// moves a note there; these list, restore, delete for good and empty. The owner's only.
struct RecentlyDeletedRoutes {
    let routing: NotesRouting

    func register(on router: Router<DaemonRequestContext>) {
        let routing = self.routing
        router.post(RouterPath(Route.notesRecentlyDeleted)) { _, context -> NotesResponse in
            try await routing.perform("recently deleted", context) { NotesResponse(notes: try $0.recentlyDeleted(account: $1)) }
        }
        router.post(RouterPath(Route.notesRestore)) { request, context -> NoteSummary in
            let body = try await request.decode(as: NoteRequest.self, context: context)
            return try await routing.perform("restore", context, id: body.id, keychainUnlock: false) { store, account in
                try NotesRouting.checkAccess(store, note: body.id, for: account, ownerOnly: true, includingDeleted: true)
                return try store.restoreNote(body.id)
            }
        }
        router.post(RouterPath(Route.notesDeleteForGood)) { request, context -> Response in
            let body = try await request.decode(as: NoteRequest.self, context: context)
            try await routing.perform("delete for good", context, id: body.id, keychainUnlock: false) { store, account in
                try NotesRouting.checkAccess(store, note: body.id, for: account, ownerOnly: true, includingDeleted: true)
                guard try store.summary(ofNote: body.id).deleted != nil else {
                    throw APIError(.param, "only a note in Recently Deleted is deleted for good: delete it first")
                }
                try store.deleteNote(body.id)
            }
            return Response(status: .noContent)
        }
        router.post(RouterPath(Route.notesEmptyRecentlyDeleted)) { _, context -> EmptiedResponse in
            try await routing.perform("empty recently deleted", context, keychainUnlock: false) {
                EmptiedResponse(deleted: try $0.emptyRecentlyDeleted(account: $1))
            }
        }
    }
}
extension EmptiedResponse: ResponseEncodable {}
