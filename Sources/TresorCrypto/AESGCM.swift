import Crypto
import Foundation

/// AES-GCM with 128- or 256-bit keys, as separate fields (IV, ciphertext, tag): the shape in
/// which Apple's NoteStore and Tresor's notes store a sealed object. For a self-describing
/// byte string use ``Envelope``.
public enum AESGCM {
    /// The IV length Tresor writes. Any length ≥ 12 is read (Apple Notes writes 16).
    public static let defaultIVByteCount = 12
    public static let tagByteCount = 16

    /// The three stored parts of a sealed message.
    public struct Sealed: Equatable, Sendable {
        public var iv: Data
        public var ciphertext: Data
        public var tag: Data

        public init(iv: Data, ciphertext: Data, tag: Data) {
            self.iv = iv
            self.ciphertext = ciphertext
            self.tag = tag
        }
    }

    /// Seals `plaintext` under `key` with a fresh random 12-byte IV.
    public static func seal<Plaintext: DataProtocol, AAD: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, authenticating associatedData: AAD
    ) throws -> Sealed {
        try checkKey(key)
        let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: associatedData)
        return Sealed(iv: Data(box.nonce), ciphertext: box.ciphertext, tag: box.tag)
    }

    /// Seals with a caller-chosen IV. Only for known-answer tests and interoperability:
    /// reusing an IV under one key destroys GCM's security.
    public static func seal<Plaintext: DataProtocol, AAD: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, iv: Data, authenticating associatedData: AAD
    ) throws -> Sealed {
        try checkKey(key)
        let box = try AES.GCM.seal(plaintext, using: key, nonce: nonce(iv), authenticating: associatedData)
        return Sealed(iv: iv, ciphertext: box.ciphertext, tag: box.tag)
    }

    /// Seals `plaintext` under `key` with a fresh random 12-byte IV and returns IV ‖ ciphertext ‖
    /// tag as one buffer. That is swift-crypto's own combined representation, handed over as it is:
    /// splitting it into ``Sealed`` and joining the parts again would copy every byte once more,
    /// which is what large sealed chunks (attachments) cannot afford.
    public static func sealCombined<Plaintext: DataProtocol, AAD: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, authenticating associatedData: AAD
    ) throws -> Data {
        try sealCombined(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: associatedData)
    }

    /// ``sealCombined(_:using:authenticating:)`` with a caller-chosen 12-byte IV (the combined
    /// form exists only for 12-byte IVs). Only for known-answer tests: reusing an IV under one key
    /// destroys GCM's security.
    public static func sealCombined<Plaintext: DataProtocol, AAD: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, iv: Data, authenticating associatedData: AAD
    ) throws -> Data {
        guard iv.count == defaultIVByteCount else {
            throw CryptoError.invalidParameter("a combined GCM message has a \(defaultIVByteCount)-byte IV")
        }
        return try sealCombined(plaintext, using: key, nonce: nonce(iv), authenticating: associatedData)
    }

    private static func sealCombined<Plaintext: DataProtocol, AAD: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, nonce: AES.GCM.Nonce, authenticating associatedData: AAD
    ) throws -> Data {
        try checkKey(key)
        let box = try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: associatedData)
        // Always present for a 12-byte nonce.
        guard let combined = box.combined else { throw CryptoError.invalidParameter("GCM IV must be 12 bytes") }
        return combined
    }

    /// Opens a sealed message. Throws ``CryptoError/authenticationFailed`` when the key is wrong
    /// or any of IV, ciphertext, tag or associated data was changed.
    public static func open<AAD: DataProtocol>(
        _ sealed: Sealed, using key: SymmetricKey, authenticating associatedData: AAD
    ) throws -> Data {
        try checkKey(key)
        guard sealed.tag.count == tagByteCount else {
            throw CryptoError.invalidParameter("GCM tag must be \(tagByteCount) bytes")
        }
        return try open(
            AES.GCM.SealedBox(nonce: nonce(sealed.iv), ciphertext: sealed.ciphertext, tag: sealed.tag),
            using: key, authenticating: associatedData)
    }

    /// Opens IV ‖ ciphertext ‖ tag with a 12-byte IV — swift-crypto's combined form, what
    /// ``sealCombined(_:using:authenticating:)`` returns — taken as it is: rebuilding it from
    /// separate parts (``open(_:using:authenticating:)``) copies every byte once more, a
    /// quarter of opening a small message. Throws as that does.
    public static func openCombined<AAD: DataProtocol>(
        _ combined: Data, using key: SymmetricKey, authenticating associatedData: AAD
    ) throws -> Data {
        try checkKey(key)
        guard combined.count >= defaultIVByteCount + tagByteCount else {
            throw CryptoError.invalidParameter("a combined GCM message holds at least a 12-byte IV and a 16-byte tag")
        }
        return try open(AES.GCM.SealedBox(combined: combined), using: key, authenticating: associatedData)
    }

    /// Any failure to open — wrong key, altered bytes or associated data — as one error.
    private static func open<AAD: DataProtocol>(
        _ box: AES.GCM.SealedBox, using key: SymmetricKey, authenticating associatedData: AAD
    ) throws -> Data {
        do {
            return try AES.GCM.open(box, using: key, authenticating: associatedData)
        } catch {
            throw CryptoError.authenticationFailed
        }
    }

    private static func nonce(_ iv: Data) throws -> AES.GCM.Nonce {
        guard iv.count >= defaultIVByteCount else {
            throw CryptoError.invalidParameter("GCM IV must be at least \(defaultIVByteCount) bytes")
        }
        return try AES.GCM.Nonce(data: iv)
    }

    static func checkKey(_ key: SymmetricKey) throws {
        guard key.bitCount == 128 || key.bitCount == 256 else {
            throw CryptoError.invalidKeySize(expected: [16, 32], actual: key.bitCount / 8)
        }
    }
}
