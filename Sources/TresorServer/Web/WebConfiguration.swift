import Foundation
import TresorProtocol

/// How the web server runs (docs/WEB.md): its loopback port (nil: off, the default), the
/// browser's auto-lock timeouts, how long a sign-in lasts, and the widget's data-protection
/// level. Every value comes from `config.json`; `tresord --web PORT` overrides the port.
public struct WebConfiguration: Sendable {
    public static let defaultHiddenLockSeconds = 180
    public static let defaultDesktopHiddenLockSeconds = 480
    public static let defaultIdleLockSeconds = 480
    public static let defaultSessionSeconds = 12 * 3600
    public static let defaultSessionIdleSeconds = 8 * 3600

    /// The TCP port on 127.0.0.1; nil when the web server is off.
    public var port: Int?
    /// The browser drops its keys after the page was hidden this long (phone-sized screens)…
    public var hiddenLockSeconds: Int
    /// …this long on a desktop browser…
    public var desktopHiddenLockSeconds: Int
    /// …or after this long without input.
    public var idleLockSeconds: Int
    /// A sign-in ends this long after it was made, whatever happens…
    public var sessionSeconds: Int
    /// …or after this long without a request.
    public var sessionIdleSeconds: Int
    /// When the widget shows anything at all.
    public var widgetProtection: WidgetProtection
    /// Open connections at most; more wait until one closes.
    public var maximumConnections = 64
    /// Which local users may connect (docs/WEB.md, "Local users"): the daemon's own uid by
    /// default, plus `webAllowedUIDs`, or anyone with `webAllowAnyLocalUser`.
    public var localUsers: LocalUserPolicy
    /// A connection is closed when no complete request head arrives this long after it
    /// opened or after its last answer…
    public var connectionIdleSeconds: Int
    /// …or when a request's body is not all there this long after its head.
    public var requestSeconds: Int
    /// Bytes of notes and attachments each web account may store (not the local account's).
    public var accountQuotaBytes: Int64
    /// Whether anyone may register (`open`), or only with an invite the owner made (`invite`).
    public var registration: WebRegistration

    public static let defaultConnectionIdleSeconds = 30
    public static let defaultRequestSeconds = 60
    public static let defaultAccountQuotaBytes: Int64 = 1 << 30

    init(file: ConfigurationFile, port: Int?) throws {
        self.port = port ?? file.webPort
        if let port = self.port, !(1...65535).contains(port) {
            throw DaemonError.configuration("webPort must be between 1 and 65535")
        }
        hiddenLockSeconds = file.webHiddenLockSeconds ?? Self.defaultHiddenLockSeconds
        desktopHiddenLockSeconds = file.webDesktopHiddenLockSeconds ?? Self.defaultDesktopHiddenLockSeconds
        idleLockSeconds = file.webIdleLockSeconds ?? Self.defaultIdleLockSeconds
        sessionSeconds = file.webSessionSeconds ?? Self.defaultSessionSeconds
        sessionIdleSeconds = file.webSessionIdleSeconds ?? Self.defaultSessionIdleSeconds
        widgetProtection = file.widgetProtection ?? .completeUntilFirstUserAuthentication
        let others = try (file.webAllowedUIDs ?? []).map { uid in
            guard let value = UInt32(exactly: uid) else { throw DaemonError.configuration("webAllowedUIDs holds uids (0 to 4294967295)") }
            return value
        }
        localUsers = LocalUserPolicy(uids: LocalUserPolicy.owner(getuid(), and: others).uids, anyUser: file.webAllowAnyLocalUser ?? false)
        connectionIdleSeconds = file.webConnectionIdleSeconds ?? Self.defaultConnectionIdleSeconds
        requestSeconds = file.webRequestSeconds ?? Self.defaultRequestSeconds
        accountQuotaBytes = file.webAccountQuotaBytes ?? Self.defaultAccountQuotaBytes
        guard accountQuotaBytes >= 0 else { throw DaemonError.configuration("webAccountQuotaBytes must be 0 or more") }
        registration = file.webRegistration ?? .invite
        let durations = [
            ("webHiddenLockSeconds", hiddenLockSeconds), ("webDesktopHiddenLockSeconds", desktopHiddenLockSeconds),
            ("webIdleLockSeconds", idleLockSeconds), ("webSessionSeconds", sessionSeconds),
            ("webSessionIdleSeconds", sessionIdleSeconds), ("webConnectionIdleSeconds", connectionIdleSeconds),
            ("webRequestSeconds", requestSeconds),
        ]
        for (name, value) in durations where value < 1 {
            throw DaemonError.configuration("\(name) must be 1 or more")
        }
    }
}

/// Who may register a web account (docs/WEB.md, "Registration").
public enum WebRegistration: String, Codable, Sendable {
    /// Only with an invite the owner made for a name (`tresor web invite NAME`): nobody can
    /// learn from the server which names exist. The default.
    case invite
    /// Anyone who reaches the server picks a name; a taken name answers `409 conflict`, so
    /// names can be probed — for a machine whose users all know each other.
    case open
}
