import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import TresorNotesDomain
import TresorProtocol
import TresorWebStore

/// The daemon's web server (docs/WEB.md): the web client's files and its JSON API, on
/// `127.0.0.1:PORT` by default, or on `--web-bind ADDR` behind a reverse proxy.
package struct WebServer {
    let services: WebServices

    package init(services: WebServices) {
        self.services = services
    }

    /// The application, ready to run on the configured address and port.
    package func application(port: Int, logger: Logger) -> some ApplicationProtocol {
        let router = Router(context: WebRequestContext.self)
        let web = services.configuration, limiter = services.logLimiter
        // Order matters: headers wrap everything (errors included); then errors become JSON;
        // then the client's address is known (behind a trusted proxy); then the session is
        // found; then origin and CSRF are checked, before any route.
        router.add(middleware: SecurityHeadersMiddleware(errors: services.errors))
        router.add(middleware: services.errors)
        router.add(middleware: ClientAddressMiddleware(trustedProxies: web.trustedProxies))
        router.add(middleware: WebSessionMiddleware(sessions: services.sessions, home: services.home))
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
        services.additionalRoutes?(router)

        let url = web.listeningURL(port: port)
        let limits = web.connectionLimits
        let slots = ConnectionSlots(perClient: limits.perClient, othersTogether: limits.total - limits.reservedForOwner)
        let forwarded = ConnectionSlots(perClient: limits.perClient, othersTogether: .max)
        return Application(
            router: router,
            // Made for each connection, before any route.
            server: .http1(
                configuration: .init(
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
        if let policy = web.localUsersFiltered {
            handlers.append(LocalUserFilter(policy: policy, logger: logger, limiter: limiter, peerOwner: peerOwner))
        }
        return handlers
    }

    /// Keeps the web side current until cancelled: live updates reach this instance's pages as
    /// the backend announces them (from any instance); each second a change of the home keybag's
    /// state is told and streams whose session ended are closed; every 15 s each stream gets a
    /// keep-alive line; expired sessions, quiet counters and notes 30 days in Recently Deleted go.
    package func runMaintenance(logger: Logger) async {
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
            let checked = events.sessionDigests
            if let live = try? await backend.sessions.liveSessions(among: checked, now: now) {
                events.endStreams(checked: Set(checked), live: live)
            }
            if seconds % 15 == 0 { events.keepAlive() }
            if seconds % 10 == 0 { _ = try? await backend.sessions.removeExpired(now: now) }
            if seconds % 60 == 0 {
                try? await services.throttle.removeQuiet(now: now)
                do {
                    let deleted = try await backend.store.deleteExpiredNotes()
                    if deleted > 0 { logger.info("web: notes deleted for good after 30 days in Recently Deleted", metadata: ["count": "\(deleted)"]) }
                } catch {
                    logger.notice("web: Recently Deleted not emptied", metadata: ["code": "\(services.errors.apiError(for: error).code)"])
                }
            }
        }
    }
}
