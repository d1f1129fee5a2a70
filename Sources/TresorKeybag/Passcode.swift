import Foundation
import TresorCrypto

/// The user's secret that unlocks the keybag. It never prints: `description` is a placeholder,
/// so a passcode interpolated into a log line or an error by mistake reveals nothing.
public struct Passcode: TypedSecret, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Longer passcodes are refused so that a hostile request cannot make the KDF hash megabytes.
    public static let maximumByteCount = 1024

    /// Its UTF-8, zeroed when released.
    let text: SecretText

    /// A passcode from what the user typed. Empty and over-long passcodes are refused.
    /// - Parameter text: the passcode.
    /// - Throws: ``KeybagError/invalidPasscode(_:)`` for an empty or over-long one.
    public init(_ text: String) throws {
        try self.init(SecretText(text))
    }

    /// A passcode that arrived as a secret already (typed into the desktop's prompter).
    /// - Parameter secret: its UTF-8.
    /// - Throws: ``KeybagError/invalidPasscode(_:)`` for an empty or over-long one.
    public init(_ secret: SecretText) throws {
        guard secret.byteCount > 0 else { throw KeybagError.invalidPasscode("the passcode is empty") }
        guard secret.byteCount <= Self.maximumByteCount else {
            throw KeybagError.invalidPasscode("the passcode is longer than \(Self.maximumByteCount) bytes")
        }
        self.text = secret
    }

    public var description: String { "<passcode>" }
    public var debugDescription: String { "<passcode>" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
