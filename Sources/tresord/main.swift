import ArgumentParser
import Foundation
import Logging
import TresorDaemon
import TresorKit
import TresorProtocol
import TresorSystem

/// The Tresor daemon. Usually started by `tresor` on first use; run it by hand to watch its log.
@main
struct TresordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tresord",
        abstract: "The Tresor daemon: keeps the keybag and serves the local API on a Unix socket.",
        discussion: """
            The socket is $XDG_RUNTIME_DIR/tresor/tresord.sock for the default home (another home \
            gets its own socket name there). Settings live in <home>/config.json, for example \
            {"autoLockSeconds": 300, "notesSessionIdleSeconds": 180, "webPort": 8421}; docs/WEB.md lists the web \
            server's settings. Logs go to standard error and never contain a secret.
            """,
        version: TresorVersion.current)

    @Option(name: .long, help: "The data folder (default: $TRESOR_HOME, else $XDG_DATA_HOME/tresor, else ~/.local/share/tresor).")
    var home: String?

    @Option(name: .long, help: "Seconds without client activity before the keybag locks itself; 0 turns auto-lock off. Overrides config.json.")
    var autoLock: Int?

    @Option(name: .long, help: "Seconds a notes secure session may stay unused before its keys leave memory (default 180). Overrides config.json.")
    var notesSessionIdle: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve the web client on PORT (of 127.0.0.1 unless --web-bind names another address; off by default). Overrides config.json's webPort.",
            valueName: "port"))
    var web: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Listen on this address instead of 127.0.0.1 (behind a reverse proxy; beyond loopback it needs --public-origin). Overrides config.json's webBind.",
            valueName: "address"))
    var webBind: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The origin browsers reach the web client as, through a reverse proxy (https://notes.example.com): Host and Origin must name it, and an https one makes the session cookie Secure. Overrides config.json's webPublicOrigin.",
            valueName: "url"))
    var publicOrigin: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run the web side as a server on this PostgreSQL database (postgres://USER@HOST:PORT/DB), shared by every instance; the password comes from PGPASSWORD or config.json's database, never from here. Needs --web and --server-key-file.",
            valueName: "url"))
    var database: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The server key: a file of 32 random bytes, mode 0600, the same on every instance (head -c 32 /dev/urandom > FILE). Web note content is sealed under it in the database.",
            valueName: "file"))
    var serverKeyFile: String?

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Answer the freedesktop Secret Service (org.freedesktop.secrets) on the session bus named by DBUS_SESSION_BUS_ADDRESS, so secret-tool, git, Python keyring and browsers use Tresor. Also \"secretService\": true in config.json."
        ))
    var secretService = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Do not sync a joined device by itself: only `tresor sync now` syncs. Also \"syncInBackground\": false in config.json."))
    var noBackgroundSync = false

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func validate() throws {
        if let refusal = TresorPaths.refusal(ofGivenHome: home) { throw ValidationError(refusal) }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        if let refusal = DaemonEnvironment.refusal(environment) {
            FileHandle.standardError.write(Data("tresord: refusing to start: \(refusal)\n".utf8))
            throw ExitCode(2)
        }
        // Swift's crash handler would write registers and memory into the log: started again
        // without it (the CLI starts tresord so already).
        DaemonEnvironment.reexecutingWithoutBacktracer(arguments: CommandLine.arguments, environment: environment)
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level \(logLevel)")
        }
        DaemonEnvironment.loggingToTheHomeIfDiscarded(TresorPaths(home: home))
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "tresord")
        let configuration: DaemonConfiguration
        do {
            configuration = try DaemonConfiguration(
                paths: TresorPaths(home: home), autoLockSeconds: autoLock, notesSessionIdleSeconds: notesSessionIdle,
                webPort: web, secretService: secretService ? true : nil, webBind: webBind, publicOrigin: publicOrigin,
                database: database, serverKeyFile: serverKeyFile, syncInBackground: noBackgroundSync ? false : nil, environment: environment)
        } catch {
            logger.critical("tresord stopped: \(DaemonError.words(for: error))")
            throw ExitCode(1)
        }
        do {
            try await Self.daemon(configuration: configuration, logger: logger).run()
        } catch DaemonError.alreadyRunning(let home, nil) where configuration.secretService && configuration.sessionBus != nil {
            try handSessionBus(configuration, home: home, logger: logger)
        } catch DaemonError.alreadyRunning(_, nil) where getsid(0) == getpid() {
            // Started by a tresor command (its own session), which raced another for a home with
            // no daemon — logins at once, commands at once: the other serves; nothing went wrong.
            logger.notice("another tresord started at the same moment serves this home: this one leaves")
        } catch {
            logger.critical("tresord stopped: \(DaemonError.words(for: error))")
            throw ExitCode(1)
        }
    }

    /// Started for the Secret Service (by the session bus, on a program's first use) while a
    /// daemon already runs for the home — one started at login before the desktop session had a
    /// bus, or by a `tresor` command: hands it this session's bus and leaves it the work.
    private func handSessionBus(_ configuration: DaemonConfiguration, home: String, logger: Logger) throws {
        guard let address = configuration.sessionBus else { return }
        do {
            let answer = try TresorClient.connect(paths: configuration.paths, startDaemon: false).answerSecretService(onBus: address)
            logger.notice(
                "the tresord already running for \(home) answers the Secret Service on this session bus\(answer.started ? " now" : "")")
        } catch {
            let refusal = DaemonError.words(for: DaemonError.alreadyRunning(home: home))
            logger.critical("tresord stopped: \(refusal); and it could not be handed this session bus: \(error)")
            throw ExitCode(1)
        }
    }
}

extension TresordCommand {
    /// The daemon to run: production's, or in a debug build started with `TRESOR_DEBUG_KDF_ROUNDS`
    /// (the end-to-end tests; docs/ARCHITECTURE.md, "Tests"), one that derives new keys with that many
    /// PBKDF2 rounds. A release build has no such branch.
    static func daemon(configuration: DaemonConfiguration, logger: Logger) -> Daemon {
        #if DEBUG
        if let text = ProcessInfo.processInfo.environment[DaemonEnvironment.debugKeyDerivationRounds],
            let rounds = Int(text), rounds >= 1
        {
            logger.warning(
                "debug build: new keys are derived with \(rounds) PBKDF2 rounds (\(DaemonEnvironment.debugKeyDerivationRounds)), not production's")
            return Daemon.insecureForTesting(configuration: configuration, kdfRounds: rounds, logger: logger)
        }
        #endif
        return Daemon(configuration: configuration, logger: logger)
    }
}
