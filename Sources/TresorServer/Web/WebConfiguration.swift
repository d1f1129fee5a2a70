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
        let durations = [
            ("webHiddenLockSeconds", hiddenLockSeconds), ("webDesktopHiddenLockSeconds", desktopHiddenLockSeconds),
            ("webIdleLockSeconds", idleLockSeconds), ("webSessionSeconds", sessionSeconds),
            ("webSessionIdleSeconds", sessionIdleSeconds),
        ]
        for (name, value) in durations where value < 1 {
            throw DaemonError.configuration("\(name) must be 1 or more")
        }
    }
}
