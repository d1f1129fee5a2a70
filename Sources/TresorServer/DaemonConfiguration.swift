import Foundation
import TresorProtocol
import TresorSystem

/// How a daemon runs: its home, socket, auto-lock period and notes session timeout.
///
/// The auto-lock period comes from `config.json` in the home (`{"autoLockSeconds": 300}`),
/// which a `tresord --auto-lock SECONDS` flag overrides. 0 turns auto-lock off. Likewise the
/// idle time after which a notes secure session ends (`"notesSessionIdleSeconds": 180`,
/// `tresord --notes-session-idle SECONDS`; SPEC §4.3). The web server is off unless
/// `"webPort"` or `tresord --web PORT` names a port (docs/WEB.md); its auto-lock timeouts,
/// session lifetimes and the widget's data-protection level come from `config.json` too.
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

    public init(
        paths: TresorPaths, autoLockSeconds: Int? = nil, notesSessionIdleSeconds: Int? = nil, webPort: Int? = nil,
        secretService: Bool? = nil
    ) throws {
        self.paths = paths
        let file = try ConfigurationFile.load(paths.config)
        self.autoLockSeconds = autoLockSeconds ?? file.autoLockSeconds ?? Self.defaultAutoLockSeconds
        guard self.autoLockSeconds >= 0 else { throw DaemonError.configuration("autoLockSeconds must be 0 or more") }
        self.notesSessionIdleSeconds = notesSessionIdleSeconds ?? file.notesSessionIdleSeconds ?? Self.defaultNotesSessionIdleSeconds
        guard self.notesSessionIdleSeconds >= 1 else { throw DaemonError.configuration("notesSessionIdleSeconds must be 1 or more") }
        self.web = try WebConfiguration(file: file, port: webPort)
        self.secretService = secretService ?? file.secretService ?? false
    }
}

/// The optional `config.json` of a home.
struct ConfigurationFile: Codable {
    var autoLockSeconds: Int?
    var notesSessionIdleSeconds: Int?
    var webPort: Int?
    var webHiddenLockSeconds: Int?
    var webDesktopHiddenLockSeconds: Int?
    var webIdleLockSeconds: Int?
    var webSessionSeconds: Int?
    var webSessionIdleSeconds: Int?
    var widgetProtection: WidgetProtection?
    var webAllowedUIDs: [Int]?
    var webAllowAnyLocalUser: Bool?
    var webConnectionIdleSeconds: Int?
    var webRequestSeconds: Int?
    var webAccountQuotaBytes: Int64?
    var webRegistration: WebRegistration?
    var secretService: Bool?

    static func load(_ url: URL) throws -> ConfigurationFile {
        let data: Data
        do {
            data = try SecureFiles.read(url, limit: 64 * 1024)
        } catch SecureFileError.notFound {
            return ConfigurationFile()
        }
        do {
            return try JSONDecoder().decode(ConfigurationFile.self, from: data)
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

    public var description: String {
        switch self {
        case .configuration(let reason): return "configuration error: \(reason)"
        case .alreadyRunning(let home): return "a tresord is already running for \(home)"
        case .socket(let reason): return "socket error: \(reason)"
        }
    }
}
