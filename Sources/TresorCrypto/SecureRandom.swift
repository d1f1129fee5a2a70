import Crypto
import Foundation

/// Random bytes and keys from the system's cryptographically secure generator
/// (through swift-crypto, which reads the kernel's CSPRNG).
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(count: Int) -> Data {
        // SymmetricKey(size:) draws from BoringSSL's RAND_bytes; copying it out is the
        // one documented way swift-crypto offers raw random bytes.
        precondition(count >= 0, "negative byte count")
        guard count > 0 else { return Data() }
        return SymmetricKey(size: .init(bitCount: count * 8)).withUnsafeBytes { Data($0) }
    }

    /// A fresh random key of `bitCount` bits (128 or 256 in Tresor).
    public static func key(bitCount: Int) -> SymmetricKey {
        SymmetricKey(size: .init(bitCount: bitCount))
    }
}
