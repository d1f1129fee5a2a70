import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import TresorKeybag
import TresorNotes
import TresorProtocol

/// What the web routes share: the daemon's keybag and notes, the browser sessions, the login
/// rate limits and the settings. The notes work runs off the event loop (a password check is
/// a 600,000-round PBKDF2), and every outcome is logged by operation, note id and error code
/// only — never a title, body, name, password, passphrase, cookie or token.
struct WebServices: Sendable {
    let configuration: WebConfiguration
    let slot: KeybagSlot
    let notes: NotesProvider
    let sessions: WebSessions
    let throttle: LoginThrottle
    let autoLock: AutoLock
    let widget: WidgetBuilder
    /// Repeated failures are logged once per interval (docs/WEB.md, "Availability").
    let logLimiter: RepeatedLogLimiter
    /// Invites to register (docs/WEB.md, "Registration").
    let invites: WebInvites
    /// One lock per web account for ``withinQuota(_:account:adding:_:)``.
    let quotaLocks = AccountLocks()
    /// The pages' live-update streams (docs/WEB.md, "Live updates").
    let events = WebEvents()

    /// Runs `write`, which stores up to `bytes` more for `account`, unless the account's storage
    /// would then exceed `webAccountQuotaBytes` (`quotaExceeded`; the local account has no
    /// quota: it is the owner's). The check and the write hold the account's quota lock, so two
    /// concurrent writes of one account cannot both take the last room (one daemon per home:
    /// every write of a web account goes through here).
    func withinQuota<T>(_ store: NotesStore, account: WebAccount, adding bytes: Int, _ write: () throws -> T) throws -> T {
        guard !account.isLocal else { return try write() }
        return try quotaLocks.withLock(account.id) {
            let used = try store.storedBytes(account: account.id)
            guard used + Int64(bytes) <= configuration.accountQuotaBytes else {
                throw APIError(.quotaExceeded, "this account stores \(used) bytes of its \(configuration.accountQuotaBytes): no room for \(bytes) more")
            }
            return try write()
        }
    }

    /// Runs `body` with the store on a Dispatch thread and logs its outcome.
    func perform<T: Sendable>(
        _ operation: String, _ context: WebRequestContext, id: String? = nil, _ body: @escaping @Sendable (NotesStore) throws -> T
    ) async throws -> T {
        let store = try notes.store()
        return try await logged(operation, context, id: id) { try await offloaded { try body(store) } }
    }

    /// Runs `body` for note `id` after checking that the session's account may see it
    /// (`404` exactly as a missing note otherwise) and, for `ownerOnly`, owns it (`403`). A
    /// note in Recently Deleted is answered only with `includingDeleted` (to its owner).
    func performOnNote<T: Sendable>(
        _ operation: String, _ context: WebRequestContext, id: String, ownerOnly: Bool = false, includingDeleted: Bool = false,
        _ body: @escaping @Sendable (NotesStore, WebAccount, NoteAccess) throws -> T
    ) async throws -> T {
        let account = try context.requireSession().account
        return try await perform(operation, context, id: id) { store in
            let access = try store.access(toNote: id, for: account.id, includingDeleted: includingDeleted)
            if ownerOnly && access != .owner { throw APIError(.forbidden, "only the note's owner may do this") }
            return try body(store, account, access)
        }
    }

    /// Logs an operation's outcome: info on success, notice with the error code on failure.
    func logged<T>(_ operation: String, _ context: WebRequestContext, id: String? = nil, _ body: () async throws -> T) async throws -> T {
        var metadata: Logger.Metadata = [:]
        if let account = context.session?.account.id { metadata["account"] = "\(account.rawValue.prefix(36))" }
        if let id { metadata["id"] = "\(id.prefix(64))" }
        return try await loggedOutcome(
            "web: \(operation)", logger: context.logger, metadata: metadata, errorCode: { WebErrorMiddleware.apiError(for: $0).code },
            limiter: logLimiter, body)
    }
}

/// The daemon's web server (docs/WEB.md): the web client's files and its JSON API on
/// `127.0.0.1:PORT`, over TCP on loopback only.
struct WebServer {
    let services: WebServices

    /// The application, ready to run; `port` is the configured one.
    func application(port: Int, logger: Logger) -> some ApplicationProtocol {
        let router = Router(context: WebRequestContext.self)
        // Order matters: headers wrap everything (errors included); then errors become JSON;
        // then the session is found; then origin and CSRF are checked, before any route.
        router.add(middleware: SecurityHeadersMiddleware())
        router.add(middleware: WebErrorMiddleware())
        router.add(middleware: WebSessionMiddleware(sessions: services.sessions, autoLock: services.autoLock))
        router.add(middleware: CSRFMiddleware(port: port))
        StaticFileRoutes().register(on: router)
        WebAccountRoutes(services: services).register(on: router)
        WebNoteRoutes(services: services).register(on: router)
        WebAttachmentRoutes(services: services).register(on: router)
        WebPassphraseRoutes(services: services).register(on: router)
        WebLockedNoteRoutes(services: services).register(on: router)
        WebShareRoutes(services: services).register(on: router)
        WebRecentlyDeletedRoutes(services: services).register(on: router)
        WebEventRoutes(services: services).register(on: router)
        WebWidgetRoutes(services: services).register(on: router)

        let web = services.configuration, limiter = services.logLimiter
        return Application(
            router: router,
            // Before any route: other local users' connections are refused (docs/WEB.md,
            // "Local users"), and idle or slow connections closed ("Availability").
            server: .http1(configuration: .init(additionalChannelHandlers: [
                ConnectionDeadlines(idleSeconds: web.connectionIdleSeconds, requestSeconds: web.requestSeconds),
                LocalUserFilter(policy: web.localUsers, logger: logger, limiter: limiter),
            ])),
            configuration: .init(
                address: .hostname("127.0.0.1", port: port),
                serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(services.configuration.maximumConnections)),
            onServerRunning: { _ in
                logger.notice("web client listening", metadata: ["url": "http://127.0.0.1:\(port)/"])
            },
            logger: logger)
    }

    /// Ends expired sessions and, while the keybag is not unlocked, forgets what browsers
    /// said about their secure sessions (a keybag lock ends every secure session). Runs
    /// until cancelled.
    ///
    /// It also drives the live updates: note changes reach the pages as the store announces
    /// them; each second a change of the keybag's state is told, streams whose session ended
    /// are closed, and every 15 s each stream gets a keep-alive line.
    func runMaintenance() async {
        let events = services.events
        let listener = services.notes.changes.listen { events.noteChanged($0) }
        defer { services.notes.changes.stopListening(listener) }
        var keybagState = Self.keybagState(services)
        var seconds = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            seconds += 1
            services.sessions.removeExpired()
            let state = Self.keybagState(services)
            if state != "unlocked" { services.sessions.forgetSecureSessions() }
            if state != keybagState {
                events.keybagChanged(to: state)
                keybagState = state
            }
            let sessions = services.sessions
            events.endStreams { sessions.isLive(tokenDigest: $0) }
            if seconds % 15 == 0 { events.keepAlive() }
        }
    }

    /// The keybag's state as `GET /api/status` says it.
    static func keybagState(_ services: WebServices) -> String {
        switch try? services.slot.keybag().lockState {
        case .unlocked: return "unlocked"
        case nil: return "notInitialized"
        default: return "locked"
        }
    }
}
