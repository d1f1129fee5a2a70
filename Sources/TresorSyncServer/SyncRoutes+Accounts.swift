import Foundation
import Hummingbird
import TresorNotesDomain
import TresorSyncProtocol

/// Registering the web account a device joins, as the web client's "Create an account" does:
/// with the owner's invite unless registration is open, under the same per-address limits.
extension SyncRoutes {
    func registerAccount<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        var decoded = try await decode(SyncAccountRegistration.self, request)
        let password = try AccountPassword.taking(&decoded.password)
        let body = decoded
        let name = try Self.loginName(body.account)
        if let wait = try await relay.throttle.reserveRegistration(address: context.clientAddress) {
            throw SyncRefusal(.throttled, "too many registrations: try again in \(wait) s", retryAfterSeconds: wait)
        }
        do {
            let account = try await register(name, password, invite: body.invite, context)
            try await relay.throttle.registrationFinished(address: context.clientAddress)
            context.logger.notice("sync: web account registered", metadata: ["account": "\(account.id.rawValue.prefix(36))"])
            return try reply(SyncAccountRegistered(account: account.name), status: .created)
        } catch {
            try? await relay.throttle.registrationFinished(address: context.clientAddress)
            throw error
        }
    }

    /// Every registration without the right invite gets the same answer, taken name or not:
    /// only an invite's holder learns more.
    private func register<Context: SyncRequestContext>(
        _ name: String, _ password: AccountPassword, invite: String?, _ context: Context
    ) async throws -> WebAccount {
        if relay.registrationNeedsInvite {
            var redeemed = false
            if let login = try? NoteRules.loginName(name), let invite, !invite.isEmpty {
                redeemed = try await relay.invites.redeem(name: login, code: invite, now: relay.store.clock())
            }
            guard redeemed else {
                context.logger.notice("sync: registration without a valid invite refused")
                throw SyncRefusal(
                    .forbidden, "registering this account needs a valid invite for its name from the server's owner (tresor web invite NAME)")
            }
        }
        do {
            return try await relay.accounts.registerAccount(name: name, password: password)
        } catch NotesError.nameTaken {
            throw SyncRefusal(.conflict, "this account name is taken")
        }
    }
}
