import Foundation
import TresorDBus
import TresorNotesDomain
import TresorProtocol
import TresorSystem
import TresorWebServer
import TresorWebStorePostgres

/// How a daemon runs: its home, socket, auto-lock period and notes session timeout.
///
/// The auto-lock period comes from `config.json` in the home (`{"autoLockSeconds": 300}`),
/// which a `tresord --auto-lock SECONDS` flag overrides. 0 turns auto-lock off. Likewise the
/// idle time after which a notes secure session ends (`"notesSessionIdleSeconds": 180`,
/// `tresord --notes-session-idle SECONDS`; docs/API.md, "Locked notes and secure sessions"). The
/// web server is off unless `"webPort"` or `tresord --web PORT` names a port (docs/WEB.md); its
/// auto-lock timeouts, session lifetimes and the widget's data-protection level come from
/// `config.json` too.
public struct DaemonConfiguration: Sendable {
    public static let defaultAutoLockSeconds = 300
    public static let defaultNotesSessionIdleSeconds = 180

    public var paths: TresorPaths
    public var autoLockSeconds: Int
    public var notesSessionIdleSeconds: Int
    /// The largest attachment this daemon takes — added through the socket API, fetched by sync,
    /// and, as a server, sent by a device (`"notesAttachmentBytes"`, default
    /// `NoteLimits.attachmentBytes`, 4 GiB; docs/SYNC.md, "Attachments").
    public var notesAttachmentBytes: Int
    /// Socket API connections open at once; further clients wait to be accepted.
    public var maximumConnections = 256
    /// Socket API connections one process may hold at once: more are answered `503 unavailable`
    /// and closed, so one process cannot take every connection.
    public var maximumConnectionsPerProcess = 64
    /// How long a socket API connection may sit unused before the daemon closes it, unless it
    /// holds auto-lock off (`"socketIdleSeconds"`, 1–3600, default
    /// `SocketConnections.defaultIdleSeconds`; docs/API.md, "Connections").
    public var socketIdleSeconds: Int
    /// The web server's settings; its `port` is nil when the web server is off.
    public var web: WebConfiguration
    /// Whether to answer the freedesktop Secret Service on the session bus
    /// (`"secretService": true`, `tresord --secret-service`; docs/SECRET-SERVICE.md).
    public var secretService: Bool
    /// The desktop session's bus (`DBUS_SESSION_BUS_ADDRESS`): where the Secret Service answers
    /// and the screen saver is followed; nil outside a desktop session.
    public var sessionBus: String?
    /// Whether a Secret Service client reading a secret counts as activity for auto-lock
    /// (`"secretServiceReadsAreActivity"`, default true). Searches and properties never do: a
    /// program polling must not keep the keybag open.
    public var secretServiceReadsAreActivity: Bool
    /// Whether locking the screen, a login session of this user locking, or the machine going to
    /// sleep locks the keybag too (`"lockWithScreen"`, default true); the notes' secure sessions
    /// end either way (``ScreenLockWatcher``).
    public var lockWithScreen: Bool
    /// How long the desktop prompter's "for this session" box remembers a generic Secret Service
    /// client (`"secretServiceRememberHours"`, 1–24, default 8; `tresor approve --for-session`
    /// takes its own duration).
    public var secretServiceRememberHours: Int
    /// How long a question in the desktop's prompter waits for the user before the program that
    /// waits is told nobody answered (`"desktopPromptSeconds"`, 10–3600, default 60).
    public var desktopPromptSeconds: Int
    /// Names the user added to the table of generic Secret Service clients
    /// (`"secretServiceGenericClients": ["my-vault-cli"]`; docs/SECURITY.md, "Generic clients"):
    /// the table only grows, so a change to this file never loosens it.
    public var secretServiceGenericClients: [String]
    /// Whether a device in a sync account syncs by itself (`"syncInBackground"`, default true;
    /// `tresord --no-background-sync`; docs/SYNC.md, "Background sync"); `tresor sync now` works either way.
    public var syncInBackground: Bool
    /// The server's database and key when the web side runs as a server (docs/WEB.md,
    /// "Running a Tresor server"); nil for the embedded web side over the home's notes.
    public var server: ServerConfiguration?

    /// Reads `config.json`; each argument given overrides its key there.
    /// - Parameters:
    ///   - paths: the home.
    ///   - autoLockSeconds: `--auto-lock`.
    ///   - notesSessionIdleSeconds: `--notes-session-idle`.
    ///   - webPort: `--web`.
    ///   - secretService: `--secret-service`.
    ///   - webBind: `--web-bind`.
    ///   - publicOrigin: `--public-origin`.
    ///   - database: `--database` (a URL without a password: command lines are public).
    ///   - serverKeyFile: `--server-key-file`.
    ///   - syncInBackground: `--no-background-sync` (false).
    ///   - environment: where `PGPASSWORD` and `DBUS_SESSION_BUS_ADDRESS` are read.
    /// - Throws: ``DaemonError/configuration(_:)`` (``WebConfigurationError`` for a web setting) saying what is wrong.
    public init(
        paths: TresorPaths, autoLockSeconds: Int? = nil, notesSessionIdleSeconds: Int? = nil, webPort: Int? = nil,
        secretService: Bool? = nil, webBind: String? = nil, publicOrigin: String? = nil, database: String? = nil,
        serverKeyFile: String? = nil, syncInBackground: Bool? = nil, environment: [String: String] = [:]
    ) throws {
        self.paths = paths
        let file = try ConfigurationFile.load(paths.config)
        self.autoLockSeconds = autoLockSeconds ?? file.autoLockSeconds ?? Self.defaultAutoLockSeconds
        guard self.autoLockSeconds >= 0 else { throw DaemonError.configuration("autoLockSeconds must be 0 or more") }
        self.notesSessionIdleSeconds = notesSessionIdleSeconds ?? file.notesSessionIdleSeconds ?? Self.defaultNotesSessionIdleSeconds
        guard self.notesSessionIdleSeconds >= 1 else { throw DaemonError.configuration("notesSessionIdleSeconds must be 1 or more") }
        self.notesAttachmentBytes = file.notesAttachmentBytes ?? NoteLimits.attachmentBytes
        guard (1...NoteLimits.largestAttachmentBytes).contains(notesAttachmentBytes) else {
            throw DaemonError.configuration("notesAttachmentBytes must be from 1 to \(NoteLimits.largestAttachmentBytes)")
        }
        self.socketIdleSeconds = file.socketIdleSeconds ?? SocketConnections.defaultIdleSeconds
        guard (1...3600).contains(socketIdleSeconds) else { throw DaemonError.configuration("socketIdleSeconds must be from 1 to 3600") }
        self.web = try WebConfiguration(file: file.web, port: webPort, bind: webBind, publicOrigin: publicOrigin)
        self.secretService = secretService ?? file.secretService ?? false
        self.sessionBus = DBusConnection.sessionBusAddress(environment)
        self.secretServiceReadsAreActivity = file.secretServiceReadsAreActivity ?? true
        self.lockWithScreen = file.lockWithScreen ?? true
        self.secretServiceRememberHours = file.secretServiceRememberHours ?? 8
        guard (1...24).contains(secretServiceRememberHours) else {
            throw DaemonError.configuration("secretServiceRememberHours must be from 1 to 24")
        }
        self.desktopPromptSeconds = file.desktopPromptSeconds ?? 60
        guard (10...3600).contains(desktopPromptSeconds) else { throw DaemonError.configuration("desktopPromptSeconds must be from 10 to 3600") }
        self.secretServiceGenericClients = file.secretServiceGenericClients ?? []
        self.syncInBackground = syncInBackground ?? file.syncInBackground ?? true
        if let database, DatabaseURL.hasPassword(database) {
            throw DaemonError.configuration(
                "--database must not carry a password (every local user can read a command line): put the URL in config.json's \"database\" or the password in PGPASSWORD"
            )
        }
        self.server = try ServerConfiguration(
            database: database ?? file.database, serverKeyFile: serverKeyFile ?? file.serverKeyFile, web: web, environment: environment)
        web.serverMode = server != nil
    }
}
