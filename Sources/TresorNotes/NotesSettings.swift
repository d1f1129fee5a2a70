import Foundation
import TresorCrypto

/// How a notes store derives passphrase keys, reads the time and times out secure sessions.
///
/// Production code uses ``production``. Only tests may lower the PBKDF2 cost, through
/// ``insecureForTesting(kdfRounds:sessionIdleTimeout:clock:)``, whose name says what it is.
public struct NotesSettings: Sendable {
    /// PBKDF2-HMAC-SHA256 rounds written with a new passphrase (at least OWASP's 600,000).
    public let kdfRounds: Int
    /// How long a secure session may stay unused before its keys are dropped (docs/API.md,
    /// "Locked notes and secure sessions": 3 minutes by default).
    public var sessionIdleTimeout: TimeInterval
    /// The wall clock, for sessions, generations' dates and the failed-attempt delays.
    public let clock: @Sendable () -> Date
    /// The largest attachment an upload may add (``NoteLimits/attachmentBytes`` for the daemon).
    public private(set) var attachmentByteLimit = NoteLimits.attachmentBytes

    /// The default idle timeout of a secure session.
    public static let defaultSessionIdleTimeout: TimeInterval = 3 * 60

    public static let production = NotesSettings(
        kdfRounds: PBKDF2Parameters.defaultRounds, sessionIdleTimeout: defaultSessionIdleTimeout, clock: { Date() })

    /// Settings for tests: a cheap KDF and, optionally, a short session timeout and a
    /// controllable clock. Never use outside tests.
    public static func insecureForTesting(
        kdfRounds: Int, sessionIdleTimeout: TimeInterval = defaultSessionIdleTimeout,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) -> NotesSettings {
        NotesSettings(kdfRounds: kdfRounds, sessionIdleTimeout: sessionIdleTimeout, clock: clock)
    }

    /// These settings with another session idle timeout (the daemon's `config.json`).
    public func withSessionIdleTimeout(_ seconds: TimeInterval) -> NotesSettings {
        var copy = self
        copy.sessionIdleTimeout = seconds
        return copy
    }

    /// These settings with another limit on an attachment's size: for tools and tests that make
    /// homes holding larger attachments than the daemon accepts in one upload (a backup carries
    /// any size through), and for the daemon's own limit (`notesAttachmentBytes` in its
    /// `config.json`).
    /// - Parameter bytes: the largest attachment an upload may add.
    /// - Returns: these settings with that limit.
    public func withAttachmentByteLimit(_ bytes: Int) -> NotesSettings {
        var copy = self
        copy.attachmentByteLimit = bytes
        return copy
    }

    private init(kdfRounds: Int, sessionIdleTimeout: TimeInterval, clock: @escaping @Sendable () -> Date) {
        self.kdfRounds = kdfRounds
        self.sessionIdleTimeout = sessionIdleTimeout
        self.clock = clock
    }
}
