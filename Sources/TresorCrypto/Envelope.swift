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
        let algorithm = try Algorithm(key: key)
        let header = Data([currentVersion, algorithm.rawValue, UInt8(AESGCM.defaultIVByteCount)])
        let sealed = try AESGCM.seal(plaintext, using: key, authenticating: header + associatedData)
        var envelope = Data(capacity: header.count + sealed.iv.count + sealed.ciphertext.count + AESGCM.tagByteCount)
        envelope.append(header)
        envelope.append(sealed.iv)
        envelope.append(sealed.ciphertext)
        envelope.append(sealed.tag)
        return envelope
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
        return try AESGCM.open(parsed.sealed, using: key, authenticating: parsed.header + associatedData)
    }

    static func parse(_ envelope: Data) throws -> (header: Data, algorithm: Algorithm, sealed: AESGCM.Sealed) {
        let bytes = Data(envelope)  // rebase indices at 0 whatever slice we were given
        guard bytes.count >= headerByteCount else { throw CryptoError.malformedEnvelope("shorter than its header") }
        guard bytes[0] == currentVersion else { throw CryptoError.unsupportedVersion(bytes[0]) }
        guard let algorithm = Algorithm(rawValue: bytes[1]) else {
            throw CryptoError.malformedEnvelope("unknown algorithm \(bytes[1])")
        }
        let ivCount = Int(bytes[2])
        guard ivCount >= AESGCM.defaultIVByteCount else {
            throw CryptoError.malformedEnvelope("IV of \(ivCount) bytes is shorter than 12")
        }
        let ivEnd = headerByteCount + ivCount
        guard bytes.count >= ivEnd + AESGCM.tagByteCount else {
            throw CryptoError.malformedEnvelope("truncated: \(bytes.count) bytes cannot hold IV and tag")
        }
        let tagStart = bytes.count - AESGCM.tagByteCount
        let sealed = AESGCM.Sealed(
            iv: bytes[headerByteCount..<ivEnd], ciphertext: bytes[ivEnd..<tagStart], tag: bytes[tagStart...])
        return (bytes[0..<headerByteCount], algorithm, sealed)
    }
}
