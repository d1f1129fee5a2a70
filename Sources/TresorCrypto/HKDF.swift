import Crypto
import Foundation

/// HKDF-SHA256 (RFC 5869): derives independent subkeys from one key. Tresor gives every use
/// its own `info` label, so a key derived for one purpose never serves another.
public enum KeyDerivation {
    public static func hkdfSHA256<Salt: DataProtocol>(
        inputKeyMaterial: SymmetricKey, salt: Salt, info: String, outputByteCount: Int = 32
    ) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKeyMaterial, salt: salt, info: Data(info.utf8), outputByteCount: outputByteCount)
    }

    /// HKDF-SHA256 with raw `info` bytes, for callers (and test vectors) whose label is binary.
    public static func hkdfSHA256<Salt: DataProtocol, Info: DataProtocol>(
        inputKeyMaterial: SymmetricKey, salt: Salt, info: Info, outputByteCount: Int = 32
    ) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: inputKeyMaterial, salt: salt, info: info, outputByteCount: outputByteCount)
    }

    /// The AES-128 key of a Secret Service `dh-ietf1024-sha256-aes128-cbc-pkcs7` session:
    /// HKDF-SHA256 of the Diffie–Hellman shared secret with no salt (RFC 5869 then uses a
    /// block of zeros) and empty info, 16 bytes. `sharedSecret` must be the 128-byte padded
    /// value ``DiffieHellman/KeyPair/sharedSecret(peerPublicKey:)`` returns; anything else
    /// throws ``CryptoError/invalidParameter(_:)``, since the same number without its leading
    /// zeros would silently give another key.
    public static func secretServiceSessionKey(sharedSecret: Data) throws -> SymmetricKey {
        guard sharedSecret.count == DiffieHellman.byteCount else {
            throw CryptoError.invalidParameter("a Secret Service shared secret is \(DiffieHellman.byteCount) bytes")
        }
        return hkdfSHA256(inputKeyMaterial: SymmetricKey(data: sharedSecret), salt: Data(), info: Data(), outputByteCount: 16)
    }
}
