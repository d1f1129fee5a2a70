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
}
