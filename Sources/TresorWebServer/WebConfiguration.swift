import Foundation
import TresorProtocol

/// How the web server runs (docs/WEB.md): its port (nil: off, the default) and address, the
/// public origin a reverse proxy serves it as, the proxies whose `X-Forwarded-For` is trusted,
/// the browser's auto-lock timeouts, how long a sign-in lasts, and the widget's data-protection
/// level. Every value comes from `config.json`; `tresord --web PORT`, `--web-bind ADDR` and
/// `--public-origin URL` override theirs.
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
    /// Connections at once, per client and together, and the room kept for the owner.
    public var connectionLimits: ConnectionLimits
    /// Which local users may connect (docs/WEB.md, "Local users"): the daemon's own uid by
    /// default, plus `webAllowedUIDs`, or anyone with `webAllowAnyLocalUser`.
    public var localUsers: LocalUserPolicy
    /// A connection is closed when no complete request head arrives this long after it opened…
    public var firstRequestSeconds: Int
    /// …or this long after its last answer…
    public var connectionIdleSeconds: Int
    /// …or when a request's body is not all there this long after its head.
    public var requestSeconds: Int
    /// Bytes of notes and attachments each web account may store (not the local account's).
    public var accountQuotaBytes: Int64
    /// Whether anyone may register (`open`), or only with an invite the owner made (`invite`).
    public var registration: WebRegistration
    /// The address the web server listens on: loopback by default.
    public var bindAddress: String
    /// The origin browsers reach the server as, behind a reverse proxy (`https://notes.example.com`):
    /// `Host` and `Origin` must name it; an `https` one makes the session cookie `Secure`.
    public var publicOrigin: PublicOrigin?
    /// The reverse proxies whose `X-Forwarded-For` names the client (for the rate limits).
    public var trustedProxies: Set<String>
    /// Whether the web side is a server's (a database, no local account): set by the daemon.
    public var serverMode = false

    public static let defaultFirstRequestSeconds = 5
    public static let defaultConnectionIdleSeconds = 30
    public static let defaultRequestSeconds = 60
    public static let defaultAccountQuotaBytes: Int64 = 1 << 30

    package init(file: WebConfigurationFile, port: Int?, bind: String? = nil, publicOrigin: String? = nil) throws {
        self.port = port ?? file.webPort
        if let port = self.port, !(1...65535).contains(port) {
            throw WebConfigurationError("webPort must be between 1 and 65535")
        }
        hiddenLockSeconds = file.webHiddenLockSeconds ?? Self.defaultHiddenLockSeconds
        desktopHiddenLockSeconds = file.webDesktopHiddenLockSeconds ?? Self.defaultDesktopHiddenLockSeconds
        idleLockSeconds = file.webIdleLockSeconds ?? Self.defaultIdleLockSeconds
        sessionSeconds = file.webSessionSeconds ?? Self.defaultSessionSeconds
        sessionIdleSeconds = file.webSessionIdleSeconds ?? Self.defaultSessionIdleSeconds
        widgetProtection = file.widgetProtection ?? .completeUntilFirstUserAuthentication
        let others = try (file.webAllowedUIDs ?? []).map { uid in
            guard let value = UInt32(exactly: uid) else { throw WebConfigurationError("webAllowedUIDs holds uids (0 to 4294967295)") }
            return value
        }
        localUsers = LocalUserPolicy(uids: LocalUserPolicy.owner(getuid(), and: others).uids, anyUser: file.webAllowAnyLocalUser ?? false)
        firstRequestSeconds = file.webFirstRequestSeconds ?? Self.defaultFirstRequestSeconds
        connectionIdleSeconds = file.webConnectionIdleSeconds ?? Self.defaultConnectionIdleSeconds
        connectionLimits = try ConnectionLimits(
            total: file.webMaximumConnections, perClient: file.webConnectionsPerClient, reservedForOwner: file.webConnectionsReservedForOwner)
        requestSeconds = file.webRequestSeconds ?? Self.defaultRequestSeconds
        accountQuotaBytes = file.webAccountQuotaBytes ?? Self.defaultAccountQuotaBytes
        guard accountQuotaBytes >= 0 else { throw WebConfigurationError("webAccountQuotaBytes must be 0 or more") }
        registration = file.webRegistration ?? .invite
        bindAddress = bind ?? file.webBind ?? "127.0.0.1"
        guard Self.isIPAddress(bindAddress) else {
            throw WebConfigurationError("webBind must be an IP address (127.0.0.1, 0.0.0.0, ::1, …)")
        }
        self.publicOrigin = try (publicOrigin ?? file.webPublicOrigin).map(PublicOrigin.init(parsing:))
        // Beyond loopback, browsers reach the server by a name only its operator knows: without
        // it, every request's Host and Origin would be refused (or, worse, any accepted).
        if !Self.isLoopback(bindAddress) && self.publicOrigin == nil {
            throw WebConfigurationError(
                "a web server listening on \(bindAddress) needs the origin browsers reach it as: --public-origin https://HOST (or \"webPublicOrigin\" in config.json)"
            )
        }
        trustedProxies = Set(file.webTrustedProxies ?? [])
        for proxy in trustedProxies where !Self.isIPAddress(proxy) {
            throw WebConfigurationError("webTrustedProxies holds IP addresses (\"127.0.0.1\"), one per proxy")
        }
        let durations = [
            ("webHiddenLockSeconds", hiddenLockSeconds), ("webDesktopHiddenLockSeconds", desktopHiddenLockSeconds),
            ("webIdleLockSeconds", idleLockSeconds), ("webSessionSeconds", sessionSeconds),
            ("webSessionIdleSeconds", sessionIdleSeconds), ("webFirstRequestSeconds", firstRequestSeconds),
            ("webConnectionIdleSeconds", connectionIdleSeconds),
            ("webRequestSeconds", requestSeconds),
        ]
        for (name, value) in durations where value < 1 {
            throw WebConfigurationError("\(name) must be 1 or more")
        }
    }
}

extension WebConfiguration {
    /// The origins a request may come from and name in `Host`: the public origin when one is
    /// configured, else this server's own address on loopback (127.0.0.1, localhost, [::1], or
    /// the loopback address it is bound to).
    func origins(port: Int) -> Set<String> {
        if let publicOrigin { return [publicOrigin.text] }
        let bound = bindAddress.contains(":") ? "[\(bindAddress)]" : bindAddress
        return ["http://127.0.0.1:\(port)", "http://localhost:\(port)", "http://[::1]:\(port)", "http://\(bound):\(port)"]
    }

    /// Whether the session cookie is `Secure` (the public origin is https).
    var secureCookies: Bool { publicOrigin?.isHTTPS ?? false }

    /// The local-user policy when it applies: an embedded daemon listening on loopback only,
    /// with no proxy in front. A server's clients are people anywhere, who sign in with passwords.
    var localUsersFiltered: LocalUserPolicy? {
        serverMode || !trustedProxies.isEmpty || !Self.isLoopback(bindAddress) ? nil : localUsers
    }

    /// Where the server says it listens (its log's first line).
    func listeningURL(port: Int) -> String {
        let host = bindAddress.contains(":") ? "[\(bindAddress)]" : bindAddress
        return "http://\(host):\(port)/" + (publicOrigin.map { " (public origin \($0.text))" } ?? "")
    }

    static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.")
    }

    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
