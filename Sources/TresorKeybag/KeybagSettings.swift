import Foundation
import TresorCrypto

/// How a keybag derives keys from the passcode and reads the time.
///
/// Production code uses ``production``. Only tests may lower the PBKDF2 cost, and only
/// through ``insecureForTesting(kdfRounds:clock:)``, whose name says what it is.
public struct KeybagSettings: Sendable {
    /// PBKDF2-HMAC-SHA256 rounds written with a new passcode.
    public let kdfRounds: Int
    /// The wall clock, for the failed-attempt delays (they must survive a restart).
    public let clock: @Sendable () -> Date

    public static let production = KeybagSettings(kdfRounds: PBKDF2Parameters.defaultRounds, clock: { Date() })

    /// Settings for tests: a cheap KDF and, optionally, a controllable clock. Never use outside tests.
    public static func insecureForTesting(kdfRounds: Int, clock: @escaping @Sendable () -> Date = { Date() }) -> KeybagSettings {
        KeybagSettings(kdfRounds: kdfRounds, clock: clock)
    }

    private init(kdfRounds: Int, clock: @escaping @Sendable () -> Date) {
        self.kdfRounds = kdfRounds
        self.clock = clock
    }
}
