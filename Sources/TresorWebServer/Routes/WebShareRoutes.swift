import Foundation
import Hummingbird
import TresorNotesDomain
import TresorProtocol
import TresorWebStore

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
                try await Self.lookingUpTheParticipant(for: account, services) {
                    try await store.share(note: id, with: body.name, by: account.id)
                }
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

    /// Runs a share, which says whether an account has the participant's name, under the
    /// account's limit on names nobody has (``LoginThrottle/unknownParticipantsPerAccount``):
    /// the note is known to be the account's by now, so `notFound` is the name.
    static func lookingUpTheParticipant<T>(
        for account: WebAccount, _ services: WebServices, _ share: () async throws -> T
    ) async throws -> T {
        let throttle = services.throttle, id = account.id.rawValue
        if let wait = try await throttle.reserveParticipantLookup(account: id) {
            throw APIError(.throttled, "too many names that no account has: try again in \(wait) s", retryAfterSeconds: wait)
        }
        do {
            let shared = try await share()
            try await throttle.participantLookupFinished(account: id, nameExists: true)
            return shared
        } catch NotesError.notFound(let what) {
            try await throttle.participantLookupFinished(account: id, nameExists: false)
            throw NotesError.notFound(what)
        } catch {
            try? await throttle.participantLookupFinished(account: id, nameExists: true)
            throw error
        }
    }
}
