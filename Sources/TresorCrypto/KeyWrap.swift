import Crypto
import Foundation

/// RFC 3394 AES key wrap. Tresor wraps class keys and note keys with it; a failed unwrap is
/// how a wrong passcode or passphrase shows itself.
public enum KeyWrap {
    /// Wraps `key` (16, 24 or 32 bytes… any multiple of 8 from 16) under `kek` (128, 192 or 256 bits).
    /// The result is 8 bytes longer than the key.
    public static func wrap(_ key: SymmetricKey, using kek: SymmetricKey) throws -> Data {
        try checkKEK(kek)
        guard key.bitCount >= 128, key.bitCount % 64 == 0 else {
            throw CryptoError.invalidParameter("key to wrap must be a multiple of 64 bits, at least 128")
        }
        return try AES.KeyWrap.wrap(key, using: kek)
    }

    /// Unwraps a key wrapped by ``wrap(_:using:)``. Throws ``CryptoError/unwrapFailed`` when the
    /// integrity check fails.
    public static func unwrap<Wrapped: DataProtocol>(_ wrapped: Wrapped, using kek: SymmetricKey) throws -> SymmetricKey {
        try checkKEK(kek)
        guard wrapped.count >= 24, wrapped.count % 8 == 0 else {
            throw CryptoError.invalidParameter("wrapped key must be a multiple of 8 bytes, at least 24")
        }
        do {
            return try AES.KeyWrap.unwrap(wrapped, using: kek)
        } catch {
            throw CryptoError.unwrapFailed
        }
    }

    private static func checkKEK(_ kek: SymmetricKey) throws {
        guard [128, 192, 256].contains(kek.bitCount) else {
            throw CryptoError.invalidKeySize(expected: [16, 24, 32], actual: kek.bitCount / 8)
        }
    }
}
