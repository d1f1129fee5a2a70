import Crypto
import Foundation

/// A self-describing AES-GCM ciphertext: version, algorithm and IV travel with the data and
/// are authenticated with it. The byte layout is specified in `docs/FORMAT.md`:
///
/// ```
/// version (1 byte) = 1 | algorithm (1 byte) | IV length n (1 byte) | IV (n) | ciphertext | tag (16)
/// ```
///
/// The three header bytes are prepended to the caller's associated data, so changing the
/// version, the algorithm or the IV length is detected like any other tampering.
public enum Envelope {
    public static let currentVersion: UInt8 = 1

    /// The cipher named in an envelope's header.
    public enum Algorithm: UInt8, Sendable {
        case aes128GCM = 1
        case aes256GCM = 2

        var keyBitCount: Int { self == .aes128GCM ? 128 : 256 }

        init(key: SymmetricKey) throws {
            switch key.bitCount {
            case 128: self = .aes128GCM
            case 256: self = .aes256GCM
            default: throw CryptoError.invalidKeySize(expected: [16, 32], actual: key.bitCount / 8)
            }
        }
    }

    static let headerByteCount = 3

    /// Seals `plaintext` under `key` (128 or 256 bits) into an envelope, binding `associatedData`.
    public static func seal<Plaintext: DataProtocol, AAD: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, authenticating associatedData: AAD = Data()
    ) throws -> Data {
        let (header, body) = try sealParts(plaintext, using: key, authenticating: associatedData)
        var envelope = Data(capacity: header.count + body.count)
        envelope.append(header)
        envelope.append(body)
        return envelope
    }

    /// Seals like ``seal(_:using:authenticating:)`` but returns the envelope unjoined: its
    /// 3-byte header and the rest (IV ‖ ciphertext ‖ tag, the buffer swift-crypto sealed into).
    /// `header + body` is exactly the envelope ``seal(_:using:authenticating:)`` makes. For writers
    /// that put both pieces into a file one after the other, so a large plaintext is not copied
    /// again just to prepend three bytes.
    public static func sealParts<Plaintext: DataProtocol, AAD: DataProtocol>(
        _ plaintext: Plaintext, using key: SymmetricKey, authenticating associatedData: AAD = Data()
    ) throws -> (header: Data, body: Data) {
        let algorithm = try Algorithm(key: key)
        let header = Data([currentVersion, algorithm.rawValue, UInt8(AESGCM.defaultIVByteCount)])
        let body = try AESGCM.sealCombined(plaintext, using: key, authenticating: header + associatedData)
        return (header, body)
    }

    /// Opens an envelope made by ``seal(_:using:authenticating:)`` with the same key and
    /// associated data.
    public static func open<AAD: DataProtocol>(
        _ envelope: Data, using key: SymmetricKey, authenticating associatedData: AAD = Data()
    ) throws -> Data {
        let parsed = try parse(envelope)
        guard parsed.algorithm.keyBitCount == key.bitCount else {
            throw CryptoError.invalidKeySize(expected: [parsed.algorithm.keyBitCount / 8], actual: key.bitCount / 8)
        }
        let authenticated = parsed.header + associatedData
        if parsed.sealed.iv.count == AESGCM.defaultIVByteCount {
            // What Tresor writes: the rest of the envelope is swift-crypto's combined form.
            return try AESGCM.openCombined(
                envelope[(envelope.startIndex + headerByteCount)...], using: key, authenticating: authenticated)
        }
        return try AESGCM.open(parsed.sealed, using: key, authenticating: authenticated)
    }

    static func parse(_ envelope: Data) throws -> (header: Data, algorithm: Algorithm, sealed: AESGCM.Sealed) {
        // Offsets from `start`, so a slice (a record inside a page or a file) is parsed in place
        // instead of being copied first.
        let start = envelope.startIndex, count = envelope.count
        guard count >= headerByteCount else { throw CryptoError.malformedEnvelope("shorter than its header") }
        let version = envelope[start]
        guard version == currentVersion else { throw CryptoError.unsupportedVersion(version) }
        guard let algorithm = Algorithm(rawValue: envelope[start + 1]) else {
            throw CryptoError.malformedEnvelope("unknown algorithm \(envelope[start + 1])")
        }
        let ivCount = Int(envelope[start + 2])
        guard ivCount >= AESGCM.defaultIVByteCount else {
            throw CryptoError.malformedEnvelope("IV of \(ivCount) bytes is shorter than 12")
        }
        let ivEnd = start + headerByteCount + ivCount
        guard count >= headerByteCount + ivCount + AESGCM.tagByteCount else {
            throw CryptoError.malformedEnvelope("truncated: \(count) bytes cannot hold IV and tag")
        }
        let tagStart = envelope.endIndex - AESGCM.tagByteCount
        let sealed = AESGCM.Sealed(
            iv: envelope[(start + headerByteCount)..<ivEnd], ciphertext: envelope[ivEnd..<tagStart],
            tag: envelope[tagStart...])
        return (envelope[start..<(start + headerByteCount)], algorithm, sealed)
    }
}
