import Foundation
import Hummingbird
import TresorNotesDomain
import TresorProtocol
import TresorWebServer
import TresorWebStore

/// The owner's one-time codes for web accounts, the `tresor` CLI only: `POST /v1/web/invites`
/// invites someone to register under a name of the owner's choosing (docs/WEB.md,
/// "Registration"); `POST /v1/web/password-resets` lets the owner of an account that exists set
/// a new password ("A forgotten password"). A code is in the answer and nowhere else — never in
/// the log.
struct WebInviteRoutes {
    let backend: WebBackend
    let callers: CallerResolver
    let registration: WebRegistration

    func register(on router: Router<DaemonRequestContext>) {
        let backend = self.backend, callers = self.callers, registration = self.registration
        router.post(RouterPath(Route.webInvites)) { request, context -> WebInvite in
            try callers.requireCLI(try context.requireClient(), toManage: "notes")
            let name = try Self.loginName(try await request.decode(as: WebInviteRequest.self, context: context).name)
            // Registering it is refused on every store, where it exists (a home) or not (a server).
            guard name != NoteRules.localLoginName else { throw APIError(.param, "the name local is reserved for the home's own account") }
            // The owner may know which names are taken.
            guard try await backend.store.account(named: name) == nil else { throw APIError(.conflict, "an account of that name exists already") }
            let invite = try await backend.invites.issue(name: name, now: Date())
            context.logger.notice("web: invite issued")
            return WebInvite(name: name, code: invite.code, expires: invite.expires, registration: registration.rawValue)
        }
        router.post(RouterPath(Route.webPasswordResets)) { request, context -> WebPasswordReset in
            try callers.requireCLI(try context.requireClient(), toManage: "notes")
            let name = try Self.loginName(try await request.decode(as: WebPasswordResetRequest.self, context: context).name)
            guard name != NoteRules.localLoginName else {
                throw APIError(.param, "the local account signs in with the Tresor passcode: change it with tresor passcode change")
            }
            guard try await backend.store.account(named: name) != nil else { throw APIError(.notFound, "no web account is named \(name)") }
            let reset = try await backend.passwordResets.issue(name: name, now: Date())
            context.logger.notice("web: password reset code issued")
            return WebPasswordReset(name: name, code: reset.code, expires: reset.expires)
        }
    }

    /// The login name the owner typed, case-folded: `400 param` when it cannot be one.
    private static func loginName(_ typed: String) throws -> String {
        guard let name = try? NoteRules.loginName(typed) else {
            throw APIError(.param, "an account name is 1 to 32 characters: letters a-z, digits, '.', '_' or '-'")
        }
        return name
    }
}

extension WebInvite: ResponseEncodable {}
extension WebPasswordReset: ResponseEncodable {}
