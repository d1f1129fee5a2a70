import Crypto
import Foundation

/// ChaCha20-Poly1305 (RFC 8439) with caller-chosen nonces, in the combined
/// `ciphertext ‖ tag` shape: how age seals its stanza bodies and payload chunks, each nonce
/// used once per key by construction of that format (docs/FORMAT.md).
public enum ChaChaPoly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    /// Seals `plaintext`.
    /// - Parameters:
    ///   - plaintext: The bytes to seal.
    ///   - key: A 256-bit key.
    ///   - nonce: 12 bytes, never reused under `key`.
    ///   - associatedData: Bytes authenticated but not sealed (age uses none).
    /// - Returns: The ciphertext followed by the 16-byte tag.
    /// - Throws: ``CryptoError/invalidKeySize(expected:actual:)`` or
    ///   ``CryptoError/invalidParameter(_:)`` for a nonce that is not 12 bytes.
    public static func seal<Plaintext: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, nonce: Data, authenticating associatedData: Data = Data()
    ) throws -> Data {
        try checkKey(key)
        let box = try ChaChaPoly.seal(plaintext, using: key, nonce: try chachaNonce(nonce), authenticating: associatedData)
        return box.ciphertext + box.tag
    }

    /// Opens what ``seal(_:using:nonce:authenticating:)`` made.
    /// - Parameters:
    ///   - sealed: The ciphertext followed by its tag.
    ///   - key: The key it was sealed under.
    ///   - nonce: The nonce it was sealed with.
    ///   - associatedData: The associated data it was sealed with.
    /// - Returns: The plaintext.
    /// - Throws: ``CryptoError/authenticationFailed`` for a wrong key or nonce or altered
    ///   bytes; the size errors as for sealing.
    public static func open(
        _ sealed: Data, using key: SymmetricKey, nonce: Data, authenticating associatedData: Data = Data()
    ) throws -> Data {
        try checkKey(key)
        guard sealed.count >= tagByteCount else { throw CryptoError.authenticationFailed }
        let tagStart = sealed.endIndex - tagByteCount
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: try chachaNonce(nonce), ciphertext: sealed[sealed.startIndex..<tagStart], tag: sealed[tagStart...])
            return try ChaChaPoly.open(box, using: key, authenticating: associatedData)
        } catch let error as CryptoError {
            throw error
        } catch {
            throw CryptoError.authenticationFailed
        }
    }

    private static func checkKey(_ key: SymmetricKey) throws {
        guard key.bitCount == keyByteCount * 8 else {
            throw CryptoError.invalidKeySize(expected: [keyByteCount], actual: key.bitCount / 8)
        }
    }

    private static func chachaNonce(_ nonce: Data) throws -> ChaChaPoly.Nonce {
        guard nonce.count == nonceByteCount else {
            throw CryptoError.invalidParameter("a ChaCha20-Poly1305 nonce is \(nonceByteCount) bytes")
        }
        return try ChaChaPoly.Nonce(data: nonce)
    }
}
