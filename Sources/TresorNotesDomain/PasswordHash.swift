import Foundation
import TresorCrypto

/// How a web account's password is kept: PBKDF2-HMAC-SHA256 over a random 16-byte salt of its
/// own, with the store's round count (600,000 in production), compared in constant time
/// (docs/WEB.md, "Accounts and sessions"). The password itself is never stored.
public struct PasswordHash: Sendable, Equatable {
    public var salt: Data
    public var rounds: Int
    public var hash: Data

    public init(salt: Data, rounds: Int, hash: Data) {
        self.salt = salt
        self.rounds = rounds
        self.hash = hash
    }

    /// A new hash of `password` under a fresh random salt.
    /// - Parameters:
    ///   - password: the password.
    ///   - rounds: PBKDF2 rounds.
    /// - Returns: salt, rounds and hash to store.
    /// - Throws: a `CryptoError` when the KDF refuses its parameters.
    public static func make(_ password: AccountPassword, rounds: Int) throws -> PasswordHash {
        let parameters = PBKDF2Parameters.random(rounds: rounds, saltByteCount: 16, outputByteCount: 32)
        let hash = try PBKDF2.deriveKey(from: password.text, parameters: parameters).withUnsafeBytes { Data($0) }
        return PasswordHash(salt: parameters.salt, rounds: parameters.rounds, hash: hash)
    }

    /// Whether `password` is the password of this hash.
    /// - Parameter password: what was typed.
    /// - Returns: true when it matches.
    /// - Throws: a `CryptoError` when the stored parameters are unusable.
    public func matches(_ password: AccountPassword) throws -> Bool {
        let derived = try PBKDF2.deriveKey(
            from: password.text, parameters: PBKDF2Parameters(salt: salt, rounds: rounds, outputByteCount: hash.count))
        return derived.withUnsafeBytes { ConstantTime.equals(Data($0), hash) }
    }

    /// Spends the time of one check on a name nobody has, so timing does not tell which
    /// names exist.
    /// - Parameters:
    ///   - password: what was typed.
    ///   - rounds: the rounds a real check would run.
    public static func checkNobody(_ password: AccountPassword, rounds: Int) {
        _ = try? PasswordHash(salt: Data(count: 16), rounds: rounds, hash: Data(count: 32)).matches(password)
    }
}
