import Crypto
import CryptoExtras
import Foundation

/// scrypt (RFC 7914) through swift-crypto: the passphrase KDF of age files, which Tresor's
/// backups are (docs/FORMAT.md).
public enum Scrypt {
    /// The largest `log2(N)` Tresor accepts with `r = 8`: 2²⁰ needs 1 GiB of memory. A file
    /// that asks for more is refused before any memory is taken, so a crafted work factor
    /// cannot exhaust the machine.
    public static let maximumLog2Rounds = 20

    /// Derives `outputByteCount` bytes from `passphrase` with `N = 2^log2Rounds`, `r` and `p`.
    /// - Parameters:
    ///   - passphrase: The passphrase bytes (UTF-8 for typed passphrases).
    ///   - salt: The salt, as the caller's format defines it.
    ///   - log2Rounds: `log2(N)`, 1 through ``maximumLog2Rounds``.
    ///   - blockSize: `r` (age uses 8).
    ///   - parallelism: `p` (age uses 1).
    ///   - outputByteCount: The key length, 1 to 1024 bytes.
    /// - Returns: The derived key.
    /// - Throws: ``CryptoError/invalidParameter(_:)`` for parameters out of range or an empty
    ///   passphrase or salt.
    public static func deriveKey<Passphrase: DataProtocol, Salt: DataProtocol>(
        from passphrase: Passphrase, salt: Salt, log2Rounds: Int, blockSize: Int = 8, parallelism: Int = 1,
        outputByteCount: Int = 32
    ) throws -> SymmetricKey {
        guard (1...maximumLog2Rounds).contains(log2Rounds) else {
            throw CryptoError.invalidParameter("scrypt work factor must be 1 to \(maximumLog2Rounds), not \(log2Rounds)")
        }
        guard (1...32).contains(blockSize), (1...16).contains(parallelism) else {
            throw CryptoError.invalidParameter("scrypt r must be 1 to 32 and p 1 to 16")
        }
        guard (1...1024).contains(outputByteCount) else {
            throw CryptoError.invalidParameter("scrypt output must be 1 to 1024 bytes")
        }
        // swift-crypto hands BoringSSL the buffers' base addresses, which empty inputs lack.
        guard !passphrase.isEmpty, !salt.isEmpty else {
            throw CryptoError.invalidParameter("scrypt needs a non-empty passphrase and salt")
        }
        return try KDF.Scrypt.deriveKey(
            from: passphrase, salt: salt, outputByteCount: outputByteCount, rounds: 1 << log2Rounds,
            blockSize: blockSize, parallelism: parallelism)
    }
}
