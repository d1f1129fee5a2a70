import Hummingbird
import Logging
import TresorNotesDomain
import TresorProtocol
import TresorWebStore

/// What the web routes share: the web backend (the embedded one over the home's notes, or a
/// server's database: docs/ARCHITECTURE.md, "The web storage boundary"), the home's keybag
/// (embedded mode only: the local account signs in with its passcode), the login rate limits
/// and the settings. Every outcome is logged by operation, note id and error code only — never
/// a title, body, name, password, passphrase, cookie or token.
package struct WebServices: Sendable {
    let configuration: WebConfiguration
    let backend: WebBackend
    /// The home's keybag when the web serves the home's notes (embedded mode); nil on a server,
    /// whose content is sealed under its server key and which has no local account.
    let home: (any LocalKeybag)?
    let throttle: LoginThrottle
    let widget: WidgetBuilder
    /// Repeated failures are logged once per interval (docs/WEB.md, "Availability").
    let logLimiter: RepeatedLogLimiter
    /// How the daemon words a failure the web side does not know itself (a full disk under the
    /// embedded store): the socket API's words.
    let otherErrors: @Sendable (any Error) -> APIError
    /// Routes the program serving the web adds beside the web API's own: a server's sync relay
    /// (docs/SYNC.md, "Transport"); nil in embedded mode.
    let additionalRoutes: (@Sendable (Router<WebRequestContext>) -> Void)?
    /// The pages' live-update streams on this instance (docs/WEB.md, "Live updates").
    let events = WebEvents()

    package init(
        configuration: WebConfiguration, backend: WebBackend, home: (any LocalKeybag)?, throttle: LoginThrottle, widget: WidgetBuilder,
        logLimiter: RepeatedLogLimiter, otherErrors: @escaping @Sendable (any Error) -> APIError,
        additionalRoutes: (@Sendable (Router<WebRequestContext>) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.backend = backend
        self.home = home
        self.throttle = throttle
        self.widget = widget
        self.logLimiter = logLimiter
        self.otherErrors = otherErrors
        self.additionalRoutes = additionalRoutes
    }

    /// Every failure in the web API's words.
    var errors: WebErrorMiddleware { WebErrorMiddleware(otherErrors: otherErrors) }

    var store: any WebStore { backend.store }
    var sessions: any WebSessionStore { backend.sessions }

    /// The quota of a write by `account` that stores up to `bytes` more: none for the local
    /// account (it is the owner's).
    func quota(for account: WebAccount, adding bytes: Int) -> StorageQuota? {
        account.isLocal ? nil : StorageQuota(limitBytes: configuration.accountQuotaBytes, addingBytes: bytes)
    }

    /// Runs `body` with the store and logs its outcome.
    func perform<T: Sendable>(
        _ operation: String, _ context: WebRequestContext, id: String? = nil, _ body: @Sendable (any WebStore) async throws -> T
    ) async throws -> T {
        let store = self.store
        return try await logged(operation, context, id: id) { try await body(store) }
    }

    /// Runs `body` for note `id` after checking that the session's account may see it
    /// (`404` exactly as a missing note otherwise) and, for `ownerOnly`, owns it (`403`). A
    /// note in Recently Deleted is answered only with `includingDeleted` (to its owner).
    func performOnNote<T: Sendable>(
        _ operation: String, _ context: WebRequestContext, id: String, ownerOnly: Bool = false, includingDeleted: Bool = false,
        _ body: @Sendable (any WebStore, WebAccount, NoteAccess) async throws -> T
    ) async throws -> T {
        let account = try context.requireSession().account
        return try await perform(operation, context, id: id) { store in
            let access = try await store.access(toNote: id, for: account.id, includingDeleted: includingDeleted)
            if ownerOnly { try access.requireOwner() }
            return try await body(store, account, access)
        }
    }

    /// Logs an operation's outcome: info on success, notice with the error code on failure.
    func logged<T>(_ operation: String, _ context: WebRequestContext, id: String? = nil, _ body: () async throws -> T) async throws -> T {
        var metadata: Logger.Metadata = [:]
        if let account = context.session?.account.id { metadata["account"] = "\(account.rawValue.prefix(36))" }
        if let id { metadata["id"] = "\(id.prefix(64))" }
        return try await loggedOutcome(
            "web: \(operation)", logger: context.logger, metadata: metadata, errorCode: { errors.apiError(for: $0).code },
            limiter: logLimiter, body)
    }

    /// The home keybag's state as `GET /api/status` says it; a server, whose content is always
    /// readable, says `unlocked`.
    var keybagState: String {
        guard let home else { return "unlocked" }
        switch home.state {
        case .unlocked: return "unlocked"
        case .notInitialized, .damaged: return "notInitialized"
        case .locked, .lockedSinceStart: return "locked"
        }
    }
}
