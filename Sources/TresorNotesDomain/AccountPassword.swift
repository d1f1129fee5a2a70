import Foundation
import TresorCrypto

/// A web account's password (docs/WEB.md). Like a notes passphrase it never prints, so a password
/// interpolated into a log line or an error by mistake reveals nothing.
public struct AccountPassword: TypedSecret, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public static let minimumByteCount = 8
    /// Longer passwords are refused so that a hostile request cannot make PBKDF2 hash megabytes.
    public static let maximumByteCount = 1024

    /// Its UTF-8, zeroed when released.
    package let text: SecretText

    /// A password as typed (UTF-8). Shorter than 8 or longer than 1024 bytes is refused.
    public init(_ text: String) throws {
        try self.init(SecretText(text))
    }

    /// A password that arrived as a secret already (taken out of its request).
    /// - Parameter secret: its UTF-8.
    /// - Throws: `NotesError.invalid` for one shorter than 8 or longer than 1024 bytes.
    public init(_ secret: SecretText) throws {
        guard secret.byteCount >= Self.minimumByteCount else {
            throw NotesError.invalid("the password must be at least \(Self.minimumByteCount) characters")
        }
        guard secret.byteCount <= Self.maximumByteCount else {
            throw NotesError.invalid("the password is longer than \(Self.maximumByteCount) bytes")
        }
        self.text = secret
    }

    public var description: String { "<password>" }
    public var debugDescription: String { "<password>" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
