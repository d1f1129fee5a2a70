import TresorProtocol

/// The web server's keys of a home's `config.json` (docs/WEB.md lists them), read from the same
/// object as the daemon's own keys.
package struct WebConfigurationFile: Codable, Sendable {
    var webPort: Int?
    var webHiddenLockSeconds: Int?
    var webDesktopHiddenLockSeconds: Int?
    var webIdleLockSeconds: Int?
    var webSessionSeconds: Int?
    var webSessionIdleSeconds: Int?
    var widgetProtection: WidgetProtection?
    var webAllowedUIDs: [Int]?
    var webAllowAnyLocalUser: Bool?
    var webFirstRequestSeconds: Int?
    var webConnectionIdleSeconds: Int?
    var webMaximumConnections: Int?
    var webConnectionsPerClient: Int?
    var webConnectionsReservedForOwner: Int?
    var webRequestSeconds: Int?
    var webAccountQuotaBytes: Int64?
    var webRegistration: WebRegistration?
    var webBind: String?
    var webPublicOrigin: String?
    var webTrustedProxies: [String]?

    package init() {}

    /// Every key this reads: its properties' names, as the synthesized decoding takes them.
    package static var keys: [String] { Mirror(reflecting: WebConfigurationFile()).children.compactMap(\.label) }
}
