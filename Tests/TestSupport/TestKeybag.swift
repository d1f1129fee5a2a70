import TresorKeybag

/// The keybag a unit test makes: one known passcode, and a key derivation cheap enough for a
/// test to create and unlock many.
public enum TestKeybag {
    /// The passcode a test home is created with (unless it is created without one).
    public static let passcodeText = "correct horse battery staple"

    /// Settings with a cheap key derivation (production derives with 600,000 rounds,
    /// ``KeybagSettings/production``).
    /// - Parameter clock: the clock the keybag's delays read; nil, the real one.
    /// - Returns: the settings.
    public static func settings(_ clock: TestClock? = nil) -> KeybagSettings {
        guard let clock else { return .insecureForTesting(kdfRounds: 1_000) }
        return .insecureForTesting(kdfRounds: 1_000, clock: clock.read)
    }
}

/// `text` as a passcode, for a test whose passcodes are known to be valid.
/// - Parameter text: the passcode's text.
/// - Returns: the passcode.
public func passcode(_ text: String) -> Passcode { try! Passcode(text) }
