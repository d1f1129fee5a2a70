import Crypto
import Foundation
import TresorCrypto
import TresorModel

/// A device's request to join a circle: its public identity and a fresh random nonce. Both
/// devices show fingerprint words of it (``fingerprintWords(circleID:)``), each with the circle
/// id it knows: the joining device the id the server gave it, the approving device its own
/// circle's. The user approves only when both screens show the same words; so a server that
/// swapped in a device of its own, or pointed the new device at a circle of its own, would have
/// to find an identity and nonce with the same words.
public struct JoinRequest: Sendable, Equatable, Codable {
    public let identity: DeviceIdentity
    /// 16 random bytes, new for every request.
    public let nonce: Data

    /// A new request for `device`.
    /// - Parameter device: the joining device.
    /// - Returns: the request, with a fresh nonce.
    public static func make(for device: LocalDevice) -> JoinRequest {
        JoinRequest(identity: device.identity, nonce: SecureRandom.bytes(count: 16))
    }

    /// A request as the approving device receives it.
    /// - Parameters:
    ///   - identity: the joining device's public identity.
    ///   - nonce: the request's nonce.
    public init(identity: DeviceIdentity, nonce: Data) {
        self.identity = identity
        self.nonce = Data(nonce)
    }

    /// Reads a request from JSON (the nonce in base64), as the approving device receives it.
    /// - Parameter decoder: the decoder.
    /// - Throws: ``SyncError/malformed(_:)`` for a nonce that is not 16 bytes or a bad identity.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let nonce = try container.decode(Data.self, forKey: .nonce)
        guard nonce.count == 16 else { throw SyncError.malformed("a join request's nonce is 16 bytes") }
        self.init(identity: try container.decode(DeviceIdentity.self, forKey: .identity), nonce: nonce)
    }

    /// The words to show (``FingerprintWords/words(for:nonce:circleID:)``).
    /// - Parameter circleID: the circle's id as this side knows it (``TrustedDeviceList/circleID``).
    /// - Returns: the words.
    public func fingerprintWords(circleID: String) -> [String] {
        FingerprintWords.words(for: identity, nonce: nonce, circleID: circleID)
    }
}

/// Words that stand for a device's public identity, a join request's nonce and the circle it
/// asks to join, the same on both devices when all three are: SHA-256 of
/// (`tresor.sync.v1.fingerprint`, name, signing key, agreement key, nonce, circle id — each
/// length-prefixed), read as a big-endian number and written in base 7,776 with EFF's Long
/// Wordlist, most significant word first. Six words are 77 bits.
public enum FingerprintWords {
    /// How many words are shown.
    public static let count = 6
    static var list: [String] { EFFLongWordList.words }

    /// The words for a join request.
    /// - Parameters:
    ///   - identity: the joining device's public identity.
    ///   - nonce: the join request's nonce.
    ///   - circleID: the circle's id (``TrustedDeviceList/circleID``).
    /// - Returns: ``count`` words of EFF's Long Wordlist.
    public static func words(for identity: DeviceIdentity, nonce: Data, circleID: String) -> [String] {
        var writer = CanonicalWriter(domain: "tresor.sync.v1.fingerprint")
        identity.write(to: &writer)
        writer.append(nonce)
        writer.append(circleID)
        // Base-7776 digits of the 256-bit digest by repeated long division; the 6 lowest are
        // taken, so the words are uniform to within 2^-170.
        var number = [UInt8](Digest.sha256(writer.bytes))
        var digits: [Int] = []
        for _ in 0..<count {
            var remainder = 0
            for index in number.indices {
                let value = remainder << 8 | Int(number[index])
                number[index] = UInt8(value / list.count)
                remainder = value % list.count
            }
            digits.append(remainder)
        }
        return digits.reversed().map { list[$0] }
    }
}
