import Foundation
import Hummingbird
import TresorCrypto
import TresorNotesDomain
import TresorProtocol
import TresorWebStore

/// Registration, sign-in and sign-out, the session and the daemon's status (docs/WEB.md,
/// "Accounts and sessions"). Passwords arrive in request bodies only; nothing here logs a
/// name, a password or a token.
struct WebAccountRoutes {
    let services: WebServices

    struct RegisterRequest: Decodable {
        var name: String
        var password: String
        var passwordAgain: String
        /// The owner's invite for `name` (`tresor web invite NAME`); needed unless registration is open.
        var invite: String?
    }

    struct SignInRequest: Decodable {
        var name: String
        var password: String
    }

    struct AutoLockSettings: Encodable {
        var hiddenSeconds: Int
        var desktopHiddenSeconds: Int
        var idleSeconds: Int
    }

    struct PasswordChangeRequest: Decodable {
        var currentPassword: String
        var newPassword: String
        var newPasswordAgain: String
    }

    /// A forgotten password set with the owner's code (`tresor web reset-password NAME`).
    struct PasswordResetRequest: Decodable {
        var name: String
        var code: String
        var newPassword: String
        var newPasswordAgain: String
    }

    struct PasswordChangeResponse: Encodable {
        /// The account's other sessions, signed out by the change.
        var endedSessions: Int
    }

    /// The answer to registration, sign-in and `GET /api/session`.
    struct SessionResponse: Encodable {
        var account: WebAccount
        /// Only in the sign-in and registration answers: the page keeps it in its origin's
        /// storage and sends it as `X-Tresor-Origin-Token` with every request; nothing hands
        /// it out again.
        var originToken: String?
        var csrfToken: String
        var autoLock: AutoLockSettings
        var expires: Date
    }

    struct StatusResponse: Encodable {
        /// `notInitialized`, `locked`, `unlocked` or `damaged` (`lockedSinceStart` reads as `locked`).
        var keybag: String
        /// Whether note content is readable (the keybag has been unlocked since the daemon started).
        var contentAvailable: Bool
        var lockedSinceStart: Bool
    }

    /// How one registers here, for the page's form: whether the owner's invite is needed.
    /// Public: the answer for a name is the same whatever the mode says.
    struct RegistrationResponse: Encodable {
        var needsInvite: Bool
    }

    func register(on router: Router<WebRequestContext>) {
        let services = self.services
        router.get("/api/registration") { _, _ -> Response in
            try WebCoding.response(RegistrationResponse(needsInvite: services.configuration.registration == .invite))
        }
        router.post("/api/accounts") { request, context -> Response in
            // Bounded before anyone is known: a name, two passwords and an invite fit in 16 KiB.
            var decoded = try await WebCoding.decode(RegisterRequest.self, request, limit: WebLimits.signInBytes)
            let typed = try SecretText.taking(&decoded.password), again = try SecretText.taking(&decoded.passwordAgain)
            let body = decoded
            guard typed == again else { throw APIError(.param, "the two passwords do not match") }
            let password = try AccountPassword(typed)
            if let wait = try await services.throttle.reserveRegistration(address: context.clientAddress) {
                services.logLimiter.notice("web: registration throttled", context.logger, metadata: ["retryAfter": "\(wait)"])
                throw APIError(.throttled, "too many registrations: try again in \(wait) s", retryAfterSeconds: wait)
            }
            let account: WebAccount
            do {
                account = try await register(body, password: password, context)
            } catch {
                try? await services.throttle.registrationFinished(address: context.clientAddress)
                throw error
            }
            try await services.throttle.registrationFinished(address: context.clientAddress)
            return try await signedIn(account, status: .created, request, context)
        }
        router.post("/api/session") { request, context -> Response in
            var body = try await WebCoding.decode(SignInRequest.self, request, limit: WebLimits.signInBytes)
            let password = try SecretText.taking(&body.password)
            let account = try await signIn(name: body.name, password: password, context)
            return try await signedIn(account, status: .ok, request, context)
        }
        router.get("/api/session") { _, context -> Response in
            let session = try context.requireSession()
            return try WebCoding.response(sessionResponse(session))
        }
        router.delete("/api/session") { _, context -> Response in
            let session = try context.requireSession()
            try await services.sessions.end(.id(session.id))
            context.logger.info("web: signed out", metadata: ["account": "\(session.account.id.rawValue.prefix(36))"])
            var response = Response(status: .noContent)
            response.headers[.setCookie] = Self.cookie(value: "", maxAge: 0, secure: services.configuration.secureCookies)
            return response
        }
        router.post("/api/account/password") { request, context -> Response in
            let session = try context.requireSession()
            var body = try await WebCoding.decode(PasswordChangeRequest.self, request)
            let current = try SecretText.taking(&body.currentPassword)
            let new = try SecretText.taking(&body.newPassword), again = try SecretText.taking(&body.newPasswordAgain)
            let ended = try await changePassword(current: current, new: new, again: again, session, context)
            return try WebCoding.response(PasswordChangeResponse(endedSessions: ended))
        }
        router.post("/api/account/password-reset") { request, context -> Response in
            // Bounded before anyone is known, as a sign-in is.
            var decoded = try await WebCoding.decode(PasswordResetRequest.self, request, limit: WebLimits.signInBytes)
            let new = try SecretText.taking(&decoded.newPassword), again = try SecretText.taking(&decoded.newPasswordAgain)
            let body = decoded
            let account = try await resetPassword(name: body.name, code: body.code, to: try Self.newPassword(new, again: again), context)
            return try await signedIn(account, status: .ok, request, context)
        }
        router.get("/api/status") { _, context -> Response in
            _ = try context.requireSession()
            return try WebCoding.response(status())
        }
    }

    /// Registers `body.name` — with the owner's invite for it, unless registration is open. Every
    /// registration without the right invite gets the same answer, taken name or not: only an
    /// invite's holder learns more.
    private func register(_ body: RegisterRequest, password: AccountPassword, _ context: WebRequestContext) async throws -> WebAccount {
        let services = self.services
        if services.configuration.registration == .invite {
            var redeemed = false
            if let login = try? NoteRules.loginName(body.name), let invite = body.invite {
                redeemed = try await services.backend.invites.redeem(name: login, code: invite, now: Date())
            }
            guard redeemed else {
                services.logLimiter.notice("web: registration without a valid invite refused", context.logger)
                throw APIError(.forbidden, "registering needs an invite for this name from the owner (tresor web invite NAME)")
            }
        }
        return try await services.perform("register", context) { try await $0.registerAccount(name: body.name, password: password) }
    }

    /// A web account's password change: the current password (counted like a sign-in, so a
    /// stolen session cannot guess it faster), then the new one; the account's other
    /// sessions end (docs/WEB.md, "Sessions end").
    private func changePassword(
        current typedCurrent: SecretText, new typedNew: SecretText, again: SecretText, _ session: WebSession, _ context: WebRequestContext
    ) async throws -> Int {
        let services = self.services
        let account = session.account
        guard !account.isLocal else {
            throw APIError(.forbidden, "the local account signs in with the keybag passcode: change it with tresor passcode change")
        }
        let new = try Self.newPassword(typedNew, again: again)
        // Reserved before the KDF runs, as a sign-in is: concurrent guesses cannot race the limit.
        if let wait = try await services.throttle.reserveSignIn(name: account.name, address: context.clientAddress) {
            throw APIError(.throttled, "too many wrong passwords: try again in \(wait) s", retryAfterSeconds: wait)
        }
        let current = try? AccountPassword(typedCurrent)
        do {
            // A wrong current password fails the operation, so the log says "failed", not "succeeded".
            try await services.perform("password change", context) { store in
                guard let current, try await store.changePassword(account: account.id, current: current, to: new) else {
                    throw APIError(.authFailed, "wrong current password")
                }
            }
        } catch {
            try? await services.throttle.signInFailed(name: account.name, address: context.clientAddress)
            throw error
        }
        try await services.throttle.signInSucceeded(name: account.name, address: context.clientAddress)
        let ended = try await services.sessions.end(.account(account.id, except: session.id))
        context.logger.notice("web: password changed", metadata: ["account": "\(account.id.rawValue.prefix(36))", "sessionsEnded": "\(ended)"])
        return ended
    }

    /// The new password typed twice, as a password: `400 param` when the two differ, or when it
    /// is not one (``AccountPassword``'s rules).
    private static func newPassword(_ typed: SecretText, again: SecretText) throws -> AccountPassword {
        guard typed == again else { throw APIError(.param, "the two new passwords do not match") }
        return try AccountPassword(typed)
    }

    /// Sets the forgotten password of the account `typedName` when `code` is the owner's reset
    /// code for it (docs/WEB.md, "A forgotten password"): counted as a sign-in of the name is,
    /// every failure the same `401 authFailed` whether the name exists or not, and every
    /// session of the account ends.
    private func resetPassword(name typedName: String, code: String, to password: AccountPassword, _ context: WebRequestContext) async throws
        -> WebAccount
    {
        let services = self.services
        let account = try await countedAsSignIn(of: typedName, "password reset", context) { name in
            guard let login = try? NoteRules.loginName(name), login != NoteRules.localLoginName,
                try await services.backend.passwordResets.redeem(name: login, code: code, now: Date()),
                let account = try await services.store.account(named: login)
            else {
                throw APIError(.authFailed, "wrong name or reset code, or the code was used or has expired: ask the owner for a new one")
            }
            try await services.store.setPassword(account: account.id, to: password)
            return account
        }
        let ended = try await services.sessions.end(.account(account.id, except: nil))
        context.logger.notice(
            "web: password set with the owner's reset code", metadata: ["account": "\(account.id.rawValue.prefix(36))", "sessionsEnded": "\(ended)"])
        return account
    }

    /// `body`, counted as a sign-in of `typedName` (docs/SECURITY.md, "Throttles that cannot be
    /// raced"): an attempt is reserved under the rate limits before it runs, so concurrent
    /// attempts cannot all slip through; its failure counts against the name and the address,
    /// its success clears them.
    /// - Parameters:
    ///   - typedName: the account name as typed.
    ///   - operation: what the log calls it ("sign-in").
    ///   - context: the request's.
    ///   - body: the check, given the name as the counters key it (case-folded, bounded).
    /// - Returns: what `body` returns.
    /// - Throws: `throttled` past the limits, else what `body` throws.
    private func countedAsSignIn<T>(
        of typedName: String, _ operation: String, _ context: WebRequestContext, _ body: (String) async throws -> T
    ) async throws -> T {
        let services = self.services
        let name = String(typedName.lowercased().prefix(64))
        if let wait = try await services.throttle.reserveSignIn(name: name, address: context.clientAddress) {
            services.logLimiter.notice("web: \(operation) throttled", context.logger, metadata: ["retryAfter": "\(wait)"])
            throw APIError(.throttled, "too many failed attempts: try again in \(wait) s", retryAfterSeconds: wait)
        }
        do {
            let result = try await services.logged(operation, context) { try await body(name) }
            try await services.throttle.signInSucceeded(name: name, address: context.clientAddress)
            return result
        } catch {
            try? await services.throttle.signInFailed(name: name, address: context.clientAddress)
            throw error
        }
    }

    /// Reserves an attempt under the rate limits, then checks the password: the keybag
    /// passcode for `local`, the stored hash otherwise. Every failure is the same
    /// `401 authFailed`. The reservation is made before the KDF runs, so concurrent attempts
    /// cannot all slip through the check (docs/SECURITY.md, "Throttles that cannot be raced").
    private func signIn(name typedName: String, password: SecretText, _ context: WebRequestContext) async throws -> WebAccount {
        let services = self.services
        let failed = APIError(.authFailed, "wrong name or password")
        do {
            return try await countedAsSignIn(of: typedName, "sign-in", context) { name in
                // One line per password actually checked: the KDF bounds how often it can appear.
                context.logger.debug("web: password checked")
                let account: WebAccount?
                if name == NoteRules.localLoginName {
                    account = try await signInLocal(password)
                } else if let password = try? AccountPassword(password) {
                    account = try await services.store.authenticate(name: name, password: password)
                } else {
                    account = nil
                }
                guard let account else { throw failed }
                return account
            }
        } catch let error as APIError where error.code == .authFailed {
            // The keybag's refusals arrive in the API's words already (``LocalKeybag``).
            throw failed
        }
    }

    /// The local account: its password is the keybag passcode, checked by unlocking the
    /// keybag — but a wrong one counts only in this server's own sign-in limits, never in the
    /// keybag's attempts and delays: a guesser on the web must not lock the owner out of
    /// `tresor unlock` (docs/SECURITY.md, "Local users are not the user").
    private func signInLocal(_ password: SecretText) async throws -> WebAccount? {
        // A server has no local account: its accounts are all web accounts.
        guard let home = services.home else { return nil }
        guard try home.passcodeIsSet() else {
            throw APIError(.authFailed, "the local account signs in with the keybag passcode, and none is set (tresor passcode change)")
        }
        guard try await home.unlock(passcode: password) == .right else { return nil }
        home.recordActivity(by: "the local account's sign-in on the web")
        return try await services.store.account(named: NoteRules.localLoginName)
    }

    private func signedIn(
        _ account: WebAccount, status: HTTPResponse.Status, _ request: Request, _ context: WebRequestContext
    ) async throws -> Response {
        let client = WebSessionClient(address: context.clientAddress, userAgent: request.headers[.userAgent])
        let started = try await services.sessions.start(for: account, client: client, now: Date())
        context.logger.notice("web: signed in", metadata: ["account": "\(account.id.rawValue.prefix(36))"])
        var answer = sessionResponse(started.session)
        answer.originToken = started.originToken
        var response = try WebCoding.response(answer, status: status)
        response.headers[.setCookie] = Self.cookie(
            value: started.token, maxAge: services.sessions.lifetimes.sessionSeconds, secure: services.configuration.secureCookies)
        return response
    }

    private func sessionResponse(_ session: WebSession) -> SessionResponse {
        let web = services.configuration
        return SessionResponse(
            account: session.account, originToken: nil, csrfToken: session.csrfToken,
            autoLock: AutoLockSettings(
                hiddenSeconds: web.hiddenLockSeconds, desktopHiddenSeconds: web.desktopHiddenLockSeconds, idleSeconds: web.idleLockSeconds),
            expires: session.created.addingTimeInterval(TimeInterval(services.sessions.lifetimes.sessionSeconds)))
    }

    /// The home keybag's state; a server's content does not depend on it: always readable.
    private func status() -> StatusResponse {
        guard let home = services.home else { return StatusResponse(keybag: "unlocked", contentAvailable: true, lockedSinceStart: false) }
        switch home.state {
        case .notInitialized: return StatusResponse(keybag: "notInitialized", contentAvailable: false, lockedSinceStart: true)
        case .damaged: return StatusResponse(keybag: "damaged", contentAvailable: false, lockedSinceStart: true)
        case .lockedSinceStart: return StatusResponse(keybag: "locked", contentAvailable: false, lockedSinceStart: true)
        case .locked: return StatusResponse(keybag: "locked", contentAvailable: true, lockedSinceStart: false)
        case .unlocked: return StatusResponse(keybag: "unlocked", contentAvailable: true, lockedSinceStart: false)
        }
    }

    /// The session cookie: script cannot read it, other sites never send it, and behind an
    /// https public origin it travels over TLS only.
    static func cookie(value: String, maxAge: Int, secure: Bool) -> String {
        "\(SessionTokens.cookieName)=\(value); HttpOnly; SameSite=Strict; Path=/; Max-Age=\(maxAge)" + (secure ? "; Secure" : "")
    }
}
