import Foundation
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
    public var maximumConnections = 256
    /// The web server's settings; its `port` is nil when the web server is off.
    public var web: WebConfiguration
    /// Whether to answer the freedesktop Secret Service on the session bus
    /// (`"secretService": true`, `tresord --secret-service`; docs/SECRET-SERVICE.md).
    public var secretService: Bool
    /// Whether a Secret Service client reading a secret counts as activity for auto-lock
    /// (`"secretServiceReadsAreActivity"`, default true). Searches and properties never do: a
    /// program polling must not keep the keybag open.
    public var secretServiceReadsAreActivity: Bool
    /// Whether locking the screen, a login session of this user locking, or the machine going to
    /// sleep locks the keybag too (`"lockWithScreen"`, default true); the notes' secure sessions
    /// end either way (``ScreenLockWatcher``).
    public var lockWithScreen: Bool
    /// Names the user added to the table of generic Secret Service clients
    /// (`"secretServiceGenericClients": ["my-vault-cli"]`; docs/SECURITY.md, "Generic clients"):
    /// the table only grows, so a change to this file never loosens it.
    public var secretServiceGenericClients: [String]
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
    ///   - environment: where `PGPASSWORD` is read.
    /// - Throws: ``DaemonError/configuration(_:)`` (``WebConfigurationError`` for a web setting) saying what is wrong.
    public init(
        paths: TresorPaths, autoLockSeconds: Int? = nil, notesSessionIdleSeconds: Int? = nil, webPort: Int? = nil,
        secretService: Bool? = nil, webBind: String? = nil, publicOrigin: String? = nil, database: String? = nil,
        serverKeyFile: String? = nil, environment: [String: String] = [:]
    ) throws {
        self.paths = paths
        let file = try ConfigurationFile.load(paths.config)
        self.autoLockSeconds = autoLockSeconds ?? file.autoLockSeconds ?? Self.defaultAutoLockSeconds
        guard self.autoLockSeconds >= 0 else { throw DaemonError.configuration("autoLockSeconds must be 0 or more") }
        self.notesSessionIdleSeconds = notesSessionIdleSeconds ?? file.notesSessionIdleSeconds ?? Self.defaultNotesSessionIdleSeconds
        guard self.notesSessionIdleSeconds >= 1 else { throw DaemonError.configuration("notesSessionIdleSeconds must be 1 or more") }
        self.web = try WebConfiguration(file: file.web, port: webPort, bind: webBind, publicOrigin: publicOrigin)
        self.secretService = secretService ?? file.secretService ?? false
        self.secretServiceReadsAreActivity = file.secretServiceReadsAreActivity ?? true
        self.lockWithScreen = file.lockWithScreen ?? true
        self.secretServiceGenericClients = file.secretServiceGenericClients ?? []
        if let database, DatabaseURL.hasPassword(database) {
            throw DaemonError.configuration(
                "--database must not carry a password (every local user can read a command line): put the URL in config.json's \"database\" or the password in PGPASSWORD")
        }
        self.server = try ServerConfiguration(
            database: database ?? file.database, serverKeyFile: serverKeyFile ?? file.serverKeyFile, web: web, environment: environment)
        web.serverMode = server != nil
    }
}

/// What a server needs beyond the web settings (docs/WEB.md, "Running a Tresor server"): its
/// PostgreSQL database and the key file its note content is sealed under.
public struct ServerConfiguration: Sendable {
    /// The database every instance of the server shares.
    public var database: DatabaseURL
    /// The server key file's absolute path (the same file on every instance).
    public var serverKeyFile: String

    /// Nil when neither a database nor a key file is named (the embedded web side).
    /// - Throws: ``DaemonError/configuration(_:)`` when one is named without the other, when
    ///   the web server is off, or for a database URL that does not read.
    init?(database: String?, serverKeyFile: String?, web: WebConfiguration, environment: [String: String]) throws {
        guard database != nil || serverKeyFile != nil else { return nil }
        guard let database else {
            throw DaemonError.configuration("a server key file is for a server: name its database too (--database postgres://USER@HOST/DB)")
        }
        guard let serverKeyFile else {
            throw DaemonError.configuration(
                "a server's database needs the key its notes are sealed under: --server-key-file FILE (make one with head -c 32 /dev/urandom > FILE; chmod 600 FILE)")
        }
        guard web.port != nil else { throw DaemonError.configuration("a server serves the web client: add --web PORT (or \"webPort\" in config.json)") }
        do {
            self.database = try DatabaseURL(parsing: database, environmentPassword: environment["PGPASSWORD"])
        } catch {
            throw DaemonError.configuration(String(describing: error))
        }
        self.serverKeyFile = serverKeyFile.hasPrefix("/")
            ? serverKeyFile : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(serverKeyFile).path
    }
}

/// The optional `config.json` of a home: the daemon's keys here, the web server's in ``web``.
struct ConfigurationFile: Codable {
    var autoLockSeconds: Int?
    var notesSessionIdleSeconds: Int?
    var database: String?
    var serverKeyFile: String?
    var secretServiceReadsAreActivity: Bool?
    var lockWithScreen: Bool?
    var secretService: Bool?
    var secretServiceGenericClients: [String]?
    /// The web server's keys, from the same JSON object.
    var web = WebConfigurationFile()

    enum CodingKeys: String, CodingKey {
        case autoLockSeconds, notesSessionIdleSeconds, database, serverKeyFile, secretServiceReadsAreActivity, lockWithScreen, secretService,
            secretServiceGenericClients
    }

    static func load(_ url: URL) throws -> ConfigurationFile {
        let data: Data
        do {
            data = try SecureFiles.read(url, limit: 64 * 1024)
        } catch SecureFileError.notFound {
            return ConfigurationFile()
        }
        do {
            var file = try JSONDecoder().decode(ConfigurationFile.self, from: data)
            file.web = try JSONDecoder().decode(WebConfigurationFile.self, from: data)
            return file
        } catch {
            throw DaemonError.configuration("\(url.path) is not valid JSON of the documented shape")
        }
    }
}

/// Why the daemon could not start.
public enum DaemonError: Error, CustomStringConvertible {
    case configuration(String)
    case alreadyRunning(home: String)
    case socket(String)
    /// Another program listens on the web client's port.
    case webPortInUse(Int)
    /// The web client's port cannot be bound for another reason (`strerror`'s words).
    case webPort(Int, reason: String)

    public var description: String {
        switch self {
        case .configuration(let reason): return "configuration error: \(reason)"
        case .alreadyRunning(let home):
            return """
                a tresord is already running for \(home) (tresor commands start one when none runs): to run it with other \
                options, put them in \(home)/config.json ("webPort": 8080, "secretService": true) and run `tresor daemon restart`, \
                or run `tresor daemon stop` first
                """
        case .socket(let reason): return "socket error: \(reason)"
        case .webPortInUse(let port):
            return "port \(port) is already in use — choose another with --web PORT (or \"webPort\" in config.json)"
        case .webPort(let port, let reason):
            return "cannot serve the web client on port \(port): \(reason) — choose another with --web PORT"
        }
    }

    /// Why the daemon stopped, in words, for its last log line: ``DaemonError``'s own text,
    /// a bind failure of the web port as ``webPortInUse(_:)``, anything else as it describes
    /// itself.
    /// - Parameter error: what `Daemon.run()` threw.
    /// - Returns: one sentence.
    public static func words(for error: any Error) -> String {
        if let error = error as? DaemonError { return error.description }
        return String(describing: error)
    }
}

/// Whether the web client's port can be listened on, tried before anything starts, so that a
/// taken port stops the daemon at once with a plain reason (``DaemonError/webPortInUse(_:)``).
enum WebPortCheck {
    /// - Throws: ``DaemonError/webPortInUse(_:)`` or ``DaemonError/webPort(_:reason:)``.
    static func requireAvailable(_ port: Int, address text: String = "127.0.0.1") throws {
        var v6 = in6_addr()
        let isV6 = inet_pton(AF_INET6, text, &v6) == 1
        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            address.sin6_addr = v6
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            inet_pton(AF_INET, text, &address.sin_addr)
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard bound != 0 else { return }
        let failure = errno
        if failure == EADDRINUSE { throw DaemonError.webPortInUse(port) }
        throw DaemonError.webPort(port, reason: String(cString: strerror(failure)))
    }
}
