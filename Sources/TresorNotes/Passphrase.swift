import Foundation
import TresorCrypto
import TresorNotesDomain

/// A notes account's secret for locked notes: a secret of its own, never the keybag passcode.
/// It never prints: `description` is a placeholder, so a passphrase interpolated into a log
/// line or an error by mistake reveals nothing.
public struct Passphrase: TypedSecret, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Longer passphrases are refused so that a hostile request cannot make PBKDF2 hash megabytes.
    public static let maximumByteCount = 1024

    /// Its UTF-8, zeroed when released.
    let text: SecretText

    /// A passphrase from what the user typed (UTF-8, as Apple Notes derives it). Empty and
    /// over-long passphrases are refused.
    public init(_ text: String) throws {
        let secret = SecretText(text)
        guard secret.byteCount > 0 else { throw NotesError.invalid("the passphrase is empty") }
        guard secret.byteCount <= Self.maximumByteCount else {
            throw NotesError.invalid("the passphrase is longer than \(Self.maximumByteCount) bytes")
        }
        self.text = secret
    }

    public var description: String { "<passphrase>" }
    public var debugDescription: String { "<passphrase>" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
