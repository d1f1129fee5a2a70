import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import TresorBackup
import TresorDBus
import TresorDesktopPrompt
import TresorKeybag
import TresorNotes
import TresorProtocol
import TresorSecretService
import TresorSyncServer
import TresorSystem
import TresorWebServer
import TresorWebStore
import TresorWebStoreSQLite

/// `tresord`: one daemon per user and home, serving the local API on a Unix socket
/// (docs/API.md, "Transport and socket location"). It hardens itself, takes the home's lock, opens
/// the keybag locked, and locks it again after the configured idle time.
public struct Daemon: Sendable {
    let configuration: DaemonConfiguration
    let keybagSettings: KeybagSettings
    let notesSettings: NotesSettings
    let logger: Logger

    public init(
        configuration: DaemonConfiguration, keybagSettings: KeybagSettings = .production,
        notesSettings: NotesSettings = .production, logger: Logger
    ) {
        self.configuration = configuration
        self.keybagSettings = keybagSettings
        self.notesSettings = notesSettings.withSessionIdleTimeout(TimeInterval(configuration.notesSessionIdleSeconds))
            .withAttachmentByteLimit(configuration.notesAttachmentBytes)
        self.logger = logger
    }

    /// A daemon whose new passcodes, note passphrases and web account passwords cost `kdfRounds`
    /// PBKDF2 rounds instead of production's: what a debug build's `tresord` runs under the
    /// end-to-end tests (docs/ARCHITECTURE.md, "Tests").
    /// What was written keeps its own count, so a home made this way opens in any build.
    /// - Parameters:
    ///   - configuration: the daemon's configuration.
    ///   - kdfRounds: the PBKDF2 rounds of every key it derives from a new password.
    ///   - logger: where the daemon logs.
    /// - Returns: the daemon.
    public static func insecureForTesting(configuration: DaemonConfiguration, kdfRounds: Int, logger: Logger) -> Daemon {
        Daemon(
            configuration: configuration, keybagSettings: .insecureForTesting(kdfRounds: kdfRounds),
            notesSettings: .insecureForTesting(kdfRounds: kdfRounds), logger: logger)
    }

    /// Runs until SIGTERM or SIGINT.
    public func run() async throws {
        let paths = configuration.paths
        umask(0o077)  // every file and the socket are created private to the user
        try SecureFiles.createDirectory(paths.home)
        guard let homeLock = try DaemonLock(at: paths.daemonLock) else {
            throw DaemonError.alreadyRunning(
                home: paths.home.path, elsewhere: DaemonLock.socketElsewhere(for: paths).map { ($0, paths.socket.path) })
        }
        // Only the daemon that runs for the home holds anything worth hiding. A second one, which
        // hands its session bus to the first, stays readable as a process of the user: the first
        // identifies it by its executable, which the kernel hides once a process is not dumpable.
        do {
            try ProcessHardening.disableCoreDumps()
        } catch {
            logger.warning("could not turn core dumps off", metadata: ["error": "\(error)"])
        }
        ProcessHardening.tuneAllocator()
        // Holding the lock, no write is in flight: temporaries are from a daemon that died mid-write.
        for folder in [paths.home, paths.keychainsFolder] {
            for name in SecureFiles.removeInterruptedWrites(in: folder) {
                logger.notice("removed an interrupted write", metadata: ["file": "\(name)"])
            }
        }
        try SecureFiles.createDirectory(paths.runtimeDirectory)
        let socketPath = paths.socket.path
        guard socketPath.utf8.count < 108 else { throw DaemonError.socket("socket path longer than 107 bytes: \(socketPath)") }
        // Holding the home's lock, any socket file left at our path is a dead daemon's.
        unlink(socketPath)
        homeLock.record(socket: socketPath)

        // A backup the last daemon died writing leaves no `FILE.partial` behind.
        if UnfinishedBackup.removeLeftover(home: paths.home) != nil { logger.notice("removed the partial file of a backup interrupted by a crash") }
        // A restore that had begun its commit when the last daemon died is completed now, before
        // any store opens (one that had not is removed): the home is restored whole or not at all.
        do {
            if try RestoreStaging.recover(home: paths.home) { logger.notice("completed a restore interrupted by a crash") }
        } catch {
            logger.error(
                "an interrupted restore could not be completed; it is tried again at the next start", metadata: ["error": "\(type(of: error))"])
        }
        let slot = KeybagSlot(paths: paths, settings: keybagSettings)
        let autoLock = AutoLock(idleSeconds: configuration.autoLockSeconds)
        let keychains = KeychainProvider(slot: slot, settings: keybagSettings)
        let notes = NotesProvider(slot: slot, settings: notesSettings)
        // Opening a database folds a crash's -wal into it (deleted rows, a locked note's old
        // body): do it now, not at the first request that happens to need it.
        _ = try? keychains.loginKeychain()
        notes.openIfInitialised()
        let terminalSessions = TerminalSessions()
        let served = ServedInterfaces()
        let status = StatusProvider(
            slot: slot, keychains: keychains, autoLock: autoLock, autoLockSeconds: configuration.autoLockSeconds, terminalSessions: terminalSessions,
            served: served)
        let me = URL(fileURLWithPath: ProcessImage.ownExecutablePath ?? CommandLine.arguments[0])
        // The keychain-access application is the `tresor` installed beside this daemon.
        let identifier = ClientIdentifier(allowedUID: getuid(), cliExecutable: me.deletingLastPathComponent().appendingPathComponent("tresor"))
        let callers = CallerResolver(
            keychains: keychains, terminalSessions: terminalSessions, unregistered: UnregisteredExecutables(logger: logger))
        let executables = [me, identifier.cliExecutable]
        logStartup(
            slot: slot,
            findings: EnvironmentChecks.run(EnvironmentCheckContext(home: paths.home, deviceKey: paths.deviceKey, executables: executables)))

        let web = configuration.web
        // A taken web port stops the daemon now, in words, before the socket answers anyone.
        if let port = web.port {
            try WebPortCheck.requireAvailable(port, address: web.bindAddress)
            let host = web.bindAddress.contains(":") ? "[\(web.bindAddress)]" : web.bindAddress
            served.update { $0.web = "http://\(host):\(port)/" }
        }
        // A browser's secure session counts for the widget as long as it stays idle-locked.
        let lifetimes = SessionLifetimes(
            sessionSeconds: web.sessionSeconds, idleSeconds: web.sessionIdleSeconds,
            secureSessionSeconds: max(web.idleLockSeconds, web.desktopHiddenLockSeconds))
        // The home's notes behind the web storage boundary: the web's backend in embedded mode,
        // and what `tresor widget` reads in either mode.
        let homeWeb = WebBackend.embedded(store: { try notes.store() }, feed: notes.changes, lifetimes: lifetimes)
        let server = try await openServerBackend(lifetimes: lifetimes)
        let webBackend = server?.backend ?? homeWeb
        // The keybag's locks end the local account's web sessions — in embedded mode, where
        // the web serves the home's notes; a server's sessions do not depend on this home.
        let homeSessions: (any WebSessionStore)? = server == nil ? homeWeb.sessions : nil

        let logger = self.logger
        let approvals = ApprovalBroker()
        let trust = SecretServiceTrust()
        let genericClients = GenericClients(extra: configuration.secretServiceGenericClients) { try FileHashes.shared.sha256(of: $0) }
        let secretRead: (@Sendable (String) -> Void)? =
            configuration.secretServiceReadsAreActivity
            ? { @Sendable executable in autoLock.touch(by: "\(executable) read a secret on the Secret Service") } : nil
        /// Ends every notes secure session (the web client's too) and, with `keybag`, locks every
        /// keybag — what a lock from the desktop does; done when it returns (a sleep inhibitor is
        /// released after it), the web's sessions waited for at most 2 s.
        let lockFromTheDesktop: @Sendable (_ keybag: Bool, _ why: String) -> Void = { keybag, why in
            if keybag { keychains.lockAll(because: why) }
            let endedSessions = notes.lockNow()
            if let homeSessions {
                let ended = DispatchSemaphore(value: 0)
                Task {
                    try? await homeSessions.forgetSecureSessions()
                    if keybag { _ = try? await homeSessions.end(.localAccount) }
                    ended.signal()
                }
                _ = ended.wait(timeout: .now() + 2)
            }
            // With lockWithScreen off only the notes' secure sessions end: the line says so.
            let what = keybag ? "locked" : "notes sessions ended (the keybag stays unlocked: lockWithScreen is off)"
            logger.notice("\(what): \(why)", metadata: ["keybag": "\(keybag)", "notesSessionsEnded": "\(endedSessions)"])
        }
        let secretServices = SecretServiceSlot()
        let lockWithScreen = configuration.lockWithScreen
        let screenLock = ScreenLockWatcher(logger: logger) { reason in
            lockFromTheDesktop(lockWithScreen, reason.rawValue)
            secretServices.keybagChanged()
        }
        screenLock.follow(systemBus: ScreenLockWatcher.systemBusAddress(ProcessInfo.processInfo.environment))
        // Answers the Secret Service on the session bus at `address` and follows its screen saver.
        let answerOnSessionBus: @Sendable (String) throws -> Bool = { address in
            // The screen saver is followed even where another provider owns the Secret Service's name.
            screenLock.follow(sessionBus: address)
            return try secretServices.answer(on: address) { address in
                try startSecretService(
                    on: address, keychains: keychains, approvals: approvals, trust: trust, genericClients: genericClients, secretRead: secretRead,
                    served: served,
                    ended: { provider in
                        // The session's bus went away (a logout): the next session's bus is handed over afresh.
                        guard secretServices.ended(provider) else { return }
                        served.update {
                            $0.secretService =
                                "stopped: its session bus went away; a `tresord --secret-service` of the next desktop session hands it that session's bus"
                            $0.secretServiceBus = nil
                        }
                    }
                ) {
                    lockFromTheDesktop(true, "a Secret Service client asked")
                }
            }
        }
        let sessionBus = configuration.sessionBus
        switch (sessionBus, configuration.secretService) {
        case (let address?, true): _ = try? answerOnSessionBus(address)
        case (let address?, false): screenLock.follow(sessionBus: address)
        case (nil, true):
            logger.error(
                "Secret Service not started: DBUS_SESSION_BUS_ADDRESS is not set (a `tresord --secret-service` run in the desktop session hands its bus to this daemon)"
            )
            served.update { $0.secretService = "not started: DBUS_SESSION_BUS_ADDRESS is not set" }
        case (nil, false): break
        }
        let doctor: @Sendable () -> [EnvironmentFinding] = {
            EnvironmentChecks.run(EnvironmentCheckContext(home: paths.home, deviceKey: paths.deviceKey, executables: executables))
                + [SecretServiceCheck.run(answering: secretServices.isAnswering, sessionBus: secretServices.address ?? sessionBus)]
        }

        let router = Router(context: DaemonRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        let peers = PeerMiddleware(identifier: identifier, autoLock: autoLock)
        router.add(middleware: peers)
        if let homeSessions { router.add(middleware: KeybagLockObserver(sessions: homeSessions)) }
        router.add(middleware: KeybagChangeNotifier(changed: secretServices.keybagChanged))
        let syncAccount = SyncAccount(paths: paths, slot: slot)
        // A joined device syncs by itself (docs/SYNC.md, "Background sync").
        let backgroundSync = BackgroundSync(account: syncAccount, keychains: keychains, notes: notes, slot: slot, logger: logger)
        router.add(middleware: BackgroundSyncTrigger(background: backgroundSync))
        KeybagRoutes(slot: slot, keychains: keychains, notes: notes, status: status, terminalSessions: terminalSessions).register(on: router)
        LoginLinkRoutes(slot: slot, status: status).register(on: router)
        let items = ItemRoutes(
            keychains: keychains, callers: callers, questions: PresenceQuestions(approvals: approvals, desktop: { secretServices.desktop }))
        items.register(on: router)
        ApprovalRoutes(approvals: approvals, slot: slot, callers: callers).register(on: router)
        ApplicationRoutes(slot: slot, keychains: keychains, callers: callers, genericClients: genericClients).register(on: router)
        KeychainRoutes(keychains: keychains, callers: callers).register(on: router)
        SecretServiceRoutes(slot: slot, keychains: keychains, callers: callers).register(on: router)
        SecretServiceBusRoutes(answer: answerOnSessionBus, served: served).register(on: router)
        SecretServiceTrustRoutes(
            trust: trust, genericClients: genericClients, routes: SecretServiceRoutes(slot: slot, keychains: keychains, callers: callers)
        ).register(on: router)
        HoldRoutes(autoLock: autoLock).register(on: router)
        StatusRoutes(status: status, doctor: doctor).register(on: router)
        let notesRouting = NotesRouting(notes: notes, slot: slot, keychainKey: NotesKeychainKey(keychains: keychains), callers: callers)
        NoteRoutes(routing: notesRouting).register(on: router)
        NoteAttachmentRoutes(routing: notesRouting).register(on: router)
        NotePassphraseRoutes(routing: notesRouting).register(on: router)
        BackupRoutes(slot: slot, keychains: keychains, notes: notes, callers: callers, autoLock: autoLock, genericClients: genericClients)
            .register(on: router)
        let homeKeybag = HomeKeybag(slot: slot, autoLock: autoLock, keychains: keychains)
        WidgetRoutes(
            widget: WidgetBuilder(store: homeWeb.store, home: homeKeybag, sessions: homeWeb.sessions, protection: web.widgetProtection),
            callers: callers
        ).register(on: router)
        WebSessionRoutes(sessions: webBackend.sessions, callers: callers).register(on: router)
        WebInviteRoutes(backend: webBackend, callers: callers, registration: web.registration).register(on: router)
        SyncAccountRoutes(account: syncAccount, slot: slot, keychains: keychains, notes: notes, callers: callers, background: backgroundSync)
            .register(on: router)

        let socketServer = SocketAPIServer(
            path: socketPath, maximumConnections: configuration.maximumConnections,
            maximumConnectionsPerProcess: configuration.maximumConnectionsPerProcess,
            channelSetup: SocketAPIChannel(
                responder: router.buildResponder(), inline: InlineRoutes(peers: peers, items: items, logger: logger),
                bodyLimits: .socketAPI(attachmentBytes: configuration.notesAttachmentBytes),
                idleSeconds: configuration.socketIdleSeconds, keepsOpen: { autoLock.holdsOpen($0) }),
            logger: logger,
            onRunning: { logger.notice("tresord listening", metadata: ["socket": "\(socketPath)", "home": "\(paths.home.path)"]) })
        let socketService = ServiceGroup(
            configuration: .init(
                services: [socketServer], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))

        let autoLockTask = Task {
            await autoLock.run {
                // A keybag lock ends every notes secure session (docs/API.md, "Notes").
                let endedSessions = notes.lockNow()
                if let homeSessions {
                    try? await homeSessions.forgetSecureSessions()
                    _ = try? await homeSessions.end(.localAccount)
                }
                if endedSessions > 0 { logger.notice("notes sessions ended by auto-lock", metadata: ["count": "\(endedSessions)"]) }
                guard keychains.lockAll(because: "auto-lock after \(configuration.autoLockSeconds) s idle") else { return }
                logger.notice("keybag auto-locked after idle period", metadata: ["seconds": "\(configuration.autoLockSeconds)"])
            }
        }
        let sessionExpiryTask = Task {
            await notes.runExpiry { ended in
                logger.info("notes sessions ended after idle period", metadata: ["count": "\(ended)"])
            }
        }
        let keychainIndexingTask = Task { await keychains.runIndexing() }
        if !configuration.syncInBackground { backgroundSync.turnedOff() }
        let backgroundSyncTask = Task { if configuration.syncInBackground { await backgroundSync.run() } }
        defer {
            backgroundSyncTask.cancel()
            secretServices.stop()
            autoLockTask.cancel()
            sessionExpiryTask.cancel()
            keychainIndexingTask.cancel()
            unlink(socketPath)
            withExtendedLifetime(homeLock) {}
        }
        guard let port = web.port else {
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await socketService.run() }
                if let server { group.addTask { await server.run() } }
                try await group.next()
                group.cancelAll()
            }
        }

        // The web server (docs/WEB.md) runs beside the socket and stops with it: SIGTERM ends
        // the socket's service group, and leaving the task group cancels the web server.
        let home = server == nil ? homeKeybag : nil
        // A server serves its sync relay (docs/SYNC.md, "Transport") beside the web API.
        var syncRoutes: (@Sendable (Router<WebRequestContext>) -> Void)?
        if let sync = server?.sync { syncRoutes = { router in sync.register(on: router) } }
        let webServer = WebServer(
            services: WebServices(
                configuration: web, backend: webBackend, home: home, throttle: LoginThrottle(store: webBackend.throttles),
                widget: WidgetBuilder(store: webBackend.store, home: home, sessions: webBackend.sessions, protection: web.widgetProtection),
                logLimiter: RepeatedLogLimiter(), otherErrors: { ErrorMiddleware.apiError(for: $0) },
                additionalRoutes: syncRoutes))
        let webApp = webServer.application(port: port, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await socketService.run() }
            if let server { group.addTask { await server.run() } }
            group.addTask {
                do {
                    try await webApp.run()
                } catch let error as IOError where error.errnoCode == EADDRINUSE {
                    // Taken between the check above and now.
                    throw DaemonError.webPortInUse(port)
                }
            }
            group.addTask { await webServer.runMaintenance(logger: logger) }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Answers the Secret Service on the session bus at `address`, or says in the log why it
    /// cannot; the socket API runs either way.
    /// - Throws: why the provider could not start (another provider owns the name, no bus).
    private func startSecretService(
        on address: String, keychains: KeychainProvider, approvals: ApprovalBroker, trust: SecretServiceTrust, genericClients: GenericClients,
        secretRead: (@Sendable (String) -> Void)?, served: ServedInterfaces,
        ended: @escaping @Sendable (SecretServiceProvider) -> Void, lock: @escaping @Sendable () -> Void
    ) throws -> (SecretServiceProvider, DesktopUnlock) {
        let identities = SecretServiceIdentities(keychains: keychains, genericClients: genericClients)
        let desktop = DesktopUnlock(
            prompter: SystemPrompter(busAddress: address, timeout: .seconds(configuration.desktopPromptSeconds)),
            keybag: { try keychains.keybag(named: nil) }, logger: logger,
            rememberHours: configuration.secretServiceRememberHours, unlocked: keychains.recordUnlock(by:))
        do {
            let provider = try SecretServiceProvider(
                address: address, loginKeychain: { try keychains.loginKeychain() }, identify: identities.identify(pid:),
                lockKeybag: lock,
                askUser: { executable, application, item, access, requester, mayRemember, withdrawal in
                    await desktop.approve(
                        executable: executable, application: application, item: item, access: access, requester: requester,
                        mayRemember: mayRemember, withdrawal: withdrawal, fallback: approvals.askUser)
                },
                secretRead: secretRead, askToUnlock: desktop.ask(for:requester:read:withdrawal:),
                collectionLabels: configuration.paths.secretServiceCollections,
                trust: trust,
                promptUnasked: { unasked in
                    let dismissed = DismissedPrompt(
                        at: Date().timeIntervalSince1970, executable: unasked.executable,
                        waitedFor: unasked.need == .unlock ? .unlock : .approval, access: unasked.access, reason: unasked.reason)
                    served.update { $0.lastPromptNobodyAnswered = dismissed }
                },
                logger: logger)
            try provider.start { [provider] in ended(provider) }
            DetachedThread.start { genericClients.prepare() }
            logger.notice("Secret Service answering", metadata: ["name": "\(SecretServiceProvider.busName)"])
            served.update {
                $0.secretService = "answering on the session bus"
                $0.secretServiceBus = address
            }
            return (provider, desktop)
        } catch {
            logger.error("Secret Service not started", metadata: ["error": "\(error)"])
            served.update { $0.secretService = "not started: \(error)" }
            throw error
        }
    }

    private func logStartup(slot: KeybagSlot, findings: [EnvironmentFinding]) {
        switch slot.current {
        case .notInitialized: logger.notice("no keybag yet: waiting for `tresor init`")
        case .damaged(let error): logger.error("keybag cannot be opened", metadata: ["problem": "\(error)"])
        case .ready(let keybag): logger.notice("keybag opened", metadata: ["state": "\(keybag.lockState.rawValue)"])
        }
        for finding in findings where finding.severity != .ok {
            logger.warning("environment: \(finding.summary)", metadata: ["check": "\(finding.check)", "reason": "\(finding.reason)"])
        }
    }
}
