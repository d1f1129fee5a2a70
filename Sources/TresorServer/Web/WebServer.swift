import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import TresorKeybag
import TresorProtocol
import TresorSyncServer
import TresorWebStore

/// What the web routes share: the web backend (the embedded one over the home's notes, or a
/// server's database: docs/ARCHITECTURE.md, "The web storage boundary"), the home's keybag
/// (embedded mode only: the local account signs in with its passcode), the login rate limits
/// and the settings. Every outcome is logged by operation, note id and error code only — never
/// a title, body, name, password, passphrase, cookie or token.
struct WebServices: Sendable {
    let configuration: WebConfiguration
    let backend: WebBackend
    /// The home's keybag when the web serves the home's notes (embedded mode); nil on a server,
    /// whose content is sealed under its server key and which has no local account.
    let home: KeybagSlot?
    let throttle: LoginThrottle
    let autoLock: AutoLock
    let widget: WidgetBuilder
    /// Repeated failures are logged once per interval (docs/WEB.md, "Availability").
    let logLimiter: RepeatedLogLimiter
    /// A server's sync relay (docs/SYNC.md, "Transport"); nil in embedded mode.
    var sync: SyncRelay? = nil
    /// The pages' live-update streams on this instance (docs/WEB.md, "Live updates").
    let events = WebEvents()

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
            if ownerOnly && access != .owner { throw APIError(.forbidden, "only the note's owner may do this") }
            return try await body(store, account, access)
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

    /// The home keybag's state as `GET /api/status` says it; a server, whose content is always
    /// readable, says `unlocked`.
    var keybagState: String {
        guard let home else { return "unlocked" }
        switch try? home.keybag().lockState {
        case .unlocked: return "unlocked"
        case nil: return "notInitialized"
        default: return "locked"
        }
    }
}

/// The daemon's web server (docs/WEB.md): the web client's files and its JSON API, on
/// `127.0.0.1:PORT` by default, or on `--web-bind ADDR` behind a reverse proxy.
struct WebServer {
    let services: WebServices

    /// The application, ready to run on the configured address and port.
    func application(port: Int, logger: Logger) -> some ApplicationProtocol {
        let router = Router(context: WebRequestContext.self)
        let web = services.configuration, limiter = services.logLimiter
        // Order matters: headers wrap everything (errors included); then errors become JSON;
        // then the client's address is known (behind a trusted proxy); then the session is
        // found; then origin and CSRF are checked, before any route.
        router.add(middleware: SecurityHeadersMiddleware())
        router.add(middleware: WebErrorMiddleware())
        router.add(middleware: ClientAddressMiddleware(trustedProxies: web.trustedProxies))
        router.add(middleware: WebSessionMiddleware(sessions: services.sessions, autoLock: services.autoLock))
        router.add(middleware: CSRFMiddleware(origins: web.origins(port: port)))
        StaticFileRoutes().register(on: router)
        HealthRoutes(store: services.store).register(on: router)
        WebAccountRoutes(services: services).register(on: router)
        WebNoteRoutes(services: services).register(on: router)
        WebAttachmentRoutes(services: services).register(on: router)
        WebPassphraseRoutes(services: services).register(on: router)
        WebLockedNoteRoutes(services: services).register(on: router)
        WebShareRoutes(services: services).register(on: router)
        WebRecentlyDeletedRoutes(services: services).register(on: router)
        WebEventRoutes(services: services).register(on: router)
        WebWidgetRoutes(services: services).register(on: router)
        services.sync?.register(on: router)

        let url = web.listeningURL(port: port)
        let limits = web.connectionLimits
        let slots = ConnectionSlots(perClient: limits.perClient, othersTogether: limits.total - limits.reservedForOwner)
        let forwarded = ConnectionSlots(perClient: limits.perClient, othersTogether: .max)
        return Application(
            router: router,
            // Made for each connection, before any route.
            server: .http1(configuration: .init(
                additionalChannelHandlers: Self.connectionHandlers(web, slots: slots, forwarded: forwarded, logger: logger, limiter: limiter))),
            configuration: .init(
                address: .hostname(web.bindAddress, port: port),
                serverName: nil,
                // The total: beyond it connections wait to be accepted. The shares of clients
                // other than the owner leave room for the owner within it (`ConnectionLimiter`).
                availableConnectionsDelegate: MaximumAvailableConnections(limits.total)),
            onServerRunning: { _ in logger.notice("web client listening", metadata: ["url": "\(url)"]) },
            logger: logger)
    }

    /// Connections over their client's share are closed before anything is read, idle or slow
    /// ones are closed ("Availability"), and on a loopback-only embedded daemon other local
    /// users' connections are refused ("Local users").
    static func connectionHandlers(
        _ web: WebConfiguration, slots: ConnectionSlots, forwarded: ConnectionSlots, logger: Logger, limiter: RepeatedLogLimiter
    ) -> [any RemovableChannelHandler] {
        let peerOwner = LoopbackPeerOwner()
        var handlers: [any RemovableChannelHandler] = [
            ConnectionLimiter(
                connections: slots, forwardedRequests: forwarded, trustedProxies: web.trustedProxies, ownerUID: getuid(), logger: logger,
                limiter: limiter, lookup: peerOwner.owner),
            ConnectionDeadlines(
                firstRequestSeconds: web.firstRequestSeconds, idleSeconds: web.connectionIdleSeconds, requestSeconds: web.requestSeconds),
        ]
        if let policy = web.localUsersFiltered { handlers.append(LocalUserFilter(policy: policy, logger: logger, limiter: limiter, peerOwner: peerOwner)) }
        return handlers
    }

    /// Keeps the web side current until cancelled: live updates reach this instance's pages as
    /// the backend announces them (from any instance); each second a change of the home keybag's
    /// state is told and streams whose session ended are closed; every 15 s each stream gets a
    /// keep-alive line; expired sessions, quiet counters and notes 30 days in Recently Deleted go.
    func runMaintenance(logger: Logger) async {
        let events = services.events, backend = services.backend
        let listener = backend.events.listen { events.deliver($0) }
        defer { backend.events.stopListening(listener) }
        var keybagState = services.keybagState
        var seconds = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            seconds += 1
            let now = Date()
            let state = services.keybagState
            if state != "unlocked" { try? await backend.sessions.forgetSecureSessions() }
            if state != keybagState {
                events.keybagChanged(to: state)
                keybagState = state
            }
            if let live = try? await backend.sessions.liveSessions(among: events.sessionDigests, now: now) {
                events.endStreams { live.contains($0) }
            }
            if seconds % 15 == 0 { events.keepAlive() }
            if seconds % 10 == 0 { _ = try? await backend.sessions.removeExpired(now: now) }
            if seconds % 60 == 0 {
                try? await services.throttle.removeQuiet(now: now)
                do {
                    let deleted = try await backend.store.deleteExpiredNotes()
                    if deleted > 0 { logger.info("web: notes deleted for good after 30 days in Recently Deleted", metadata: ["count": "\(deleted)"]) }
                } catch {
                    logger.notice("web: Recently Deleted not emptied", metadata: ["code": "\(WebErrorMiddleware.apiError(for: error).code)"])
                }
            }
        }
    }
}
