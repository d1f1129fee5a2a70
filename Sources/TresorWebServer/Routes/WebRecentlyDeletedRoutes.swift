import Foundation
import Hummingbird
import TresorNotesDomain
import TresorProtocol

/// Recently Deleted (docs/WEB.md): the account's deleted notes for 30 days — listed, restored,
/// deleted for good one by one or all at once. Only the owner's: a participant never sees a
/// deleted note.
struct WebRecentlyDeletedRoutes {
    let services: WebServices

    /// `DELETE /api/recently-deleted`.
    struct EmptiedAnswer: Encodable, Sendable {
        var deleted: Int
    }

    func register(on router: Router<WebRequestContext>) {
        let services = self.services
        router.get("/api/recently-deleted") { _, context -> Response in
            let account = try context.requireSession().account
            let list = try await services.perform("recently deleted", context) { store in
                let folders = try await store.folders(account: account.id)
                return WebNotesList(
                    notes: try await store.recentlyDeleted(account: account.id).map { WebNoteSummary($0, for: account, folders: folders) })
            }
            return try WebCoding.response(list)
        }
        router.post("/api/notes/:id/restore") { _, context -> Response in
            let id = try context.parameters.require("id")
            let note = try await services.performOnNote("restore", context, id: id, ownerOnly: true, includingDeleted: true) { store, account, _ in
                WebNoteSummary(try await store.restoreNote(id), for: account, folders: try await store.folders(account: account.id))
            }
            return try WebCoding.response(note)
        }
        router.delete("/api/recently-deleted/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            try await services.performOnNote("delete for good", context, id: id, ownerOnly: true, includingDeleted: true) { store, _, _ in
                try await store.deleteForGood(id)
            }
            return Response(status: .noContent)
        }
        router.delete("/api/recently-deleted") { _, context -> Response in
            let account = try context.requireSession().account
            let count = try await services.perform("empty recently deleted", context) { try await $0.emptyRecentlyDeleted(account: account.id) }
            return try WebCoding.response(EmptiedAnswer(deleted: count))
        }
    }
}
