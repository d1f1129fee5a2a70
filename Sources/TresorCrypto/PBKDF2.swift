import Crypto
import CryptoExtras
import Foundation

/// The parameters of a PBKDF2-HMAC-SHA256 derivation. They are stored beside whatever the
/// derived key protects, so a record can always be opened with the count it was written with.
public struct PBKDF2Parameters: Codable, Equatable, Sendable {
    /// The count Tresor writes by default (OWASP's 2023 figure for PBKDF2-HMAC-SHA256).
    public static let defaultRounds = 600_000

    public var salt: Data
    public var rounds: Int
    public var outputByteCount: Int

    public init(salt: Data, rounds: Int, outputByteCount: Int) {
        self.salt = salt
        self.rounds = rounds
        self.outputByteCount = outputByteCount
    }

    /// Fresh parameters with a random salt of `saltByteCount` bytes.
    public static func random(
        rounds: Int = defaultRounds, saltByteCount: Int = 16, outputByteCount: Int = 32
    ) -> PBKDF2Parameters {
        PBKDF2Parameters(salt: SecureRandom.bytes(count: saltByteCount), rounds: rounds, outputByteCount: outputByteCount)
    }
}

/// PBKDF2-HMAC-SHA256 (RFC 8018) through swift-crypto.
public enum PBKDF2 {
    /// Derives a key from a password. Any round count ≥ 1 is accepted, because imported
    /// data (Apple Notes uses 20,000) must open; what Tresor *writes* is chosen by the caller,
    /// normally ``PBKDF2Parameters/defaultRounds``.
    public static func deriveKey<Password: DataProtocol>(
        from password: Password, parameters: PBKDF2Parameters
    ) throws -> SymmetricKey {
        guard parameters.rounds >= 1 else { throw CryptoError.invalidParameter("PBKDF2 rounds must be at least 1") }
        guard (1...1024).contains(parameters.outputByteCount) else {
            throw CryptoError.invalidParameter("PBKDF2 output must be 1 to 1024 bytes")
        }
        return try KDF.Insecure.PBKDF2.deriveKey(
            from: password, salt: parameters.salt, using: .sha256,
            outputByteCount: parameters.outputByteCount, unsafeUncheckedRounds: parameters.rounds)
    }

    /// Derives a key from a secret the user typed, read where it is kept (no copy).
    /// - Parameters:
    ///   - password: the passcode, passphrase or password.
    ///   - parameters: the salt, rounds and output size.
    /// - Returns: the derived key.
    /// - Throws: ``CryptoError/invalidParameter(_:)`` for rounds below 1 or an output size
    ///   outside 1 to 1,024 bytes.
    public static func deriveKey(from password: SecretText, parameters: PBKDF2Parameters) throws -> SymmetricKey {
        try password.withUnsafeBytes { try deriveKey(from: $0, parameters: parameters) }
    }
}
