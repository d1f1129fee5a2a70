import Crypto
import CryptoExtras
import Foundation

/// AES-CBC with 128- or 256-bit keys and PKCS#7 padding, over swift-crypto's `AES._CBC`
/// (whose padding check runs in constant time) — for the Secret Service's
/// `dh-ietf1024-sha256-aes128-cbc-pkcs7` session, which sends each secret as a 16-byte IV and
/// its ciphertext. CBC authenticates nothing: Tresor's own data is sealed with ``AESGCM``.
public enum AESCBC {
    public static let blockByteCount = 16
    public static let ivByteCount = 16

    /// How the plaintext is brought to whole blocks.
    public enum Padding: Sendable {
        /// PKCS#7 (RFC 5652 §6.3): 1 to 16 bytes, each holding the count; always added.
        case pkcs7
        /// None: the plaintext must already be whole blocks, at least one. For known-answer tests.
        case none
    }

    /// A ciphertext and the random IV it was made with (what ``encrypt(_:using:padding:)`` returns).
    public struct Encrypted: Equatable, Sendable {
        public let iv: Data
        public let ciphertext: Data
    }

    /// Encrypts `plaintext` under `key` with a fresh random IV.
    public static func encrypt<Plaintext: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, padding: Padding = .pkcs7
    ) throws -> Encrypted {
        let iv = SecureRandom.bytes(count: ivByteCount)
        return Encrypted(iv: iv, ciphertext: try encrypt(plaintext, using: key, iv: iv, padding: padding))
    }

    /// Encrypts with a caller-chosen 16-byte IV. For known-answer tests and interoperability:
    /// an IV must never be predictable or reused under one key.
    public static func encrypt<Plaintext: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, iv: Data, padding: Padding = .pkcs7
    ) throws -> Data {
        try AESGCM.checkKey(key)
        let cbcIV = try checkedIV(iv)
        if padding == .none {
            try checkWholeBlocks(plaintext.count, of: "unpadded AES-CBC plaintext")
        }
        return try AES._CBC.encrypt(plaintext, using: key, iv: cbcIV, noPadding: padding == .none)
    }

    /// Decrypts `ciphertext` made under `key` with `iv`, removing the padding. Throws
    /// ``CryptoError/invalidKeySize(expected:actual:)`` for a key of another size,
    /// ``CryptoError/invalidParameter(_:)`` for an IV that is not 16 bytes or a ciphertext
    /// that is not a non-empty multiple of 16 bytes, and ``CryptoError/badPadding`` when the
    /// last block holds no valid PKCS#7 padding.
    public static func decrypt<Ciphertext: DataProtocol>(
        _ ciphertext: Ciphertext, using key: SymmetricKey, iv: Data, padding: Padding = .pkcs7
    ) throws -> Data {
        try AESGCM.checkKey(key)
        let cbcIV = try checkedIV(iv)
        try checkWholeBlocks(ciphertext.count, of: "AES-CBC ciphertext")
        do {
            return try AES._CBC.decrypt(ciphertext, using: key, iv: cbcIV, noPadding: padding == .none)
        } catch {
            // Key, IV and length were checked above: what is left is the padding.
            throw CryptoError.badPadding
        }
    }

    private static func checkWholeBlocks(_ count: Int, of what: String) throws {
        guard count > 0, count % blockByteCount == 0 else {
            throw CryptoError.invalidParameter("\(what) must be a non-empty multiple of 16 bytes")
        }
    }

    private static func checkedIV(_ iv: Data) throws -> AES._CBC.IV {
        guard iv.count == ivByteCount else { throw CryptoError.invalidParameter("AES-CBC IV must be 16 bytes") }
        return try AES._CBC.IV(ivBytes: iv)
    }
}
