import Crypto
import Foundation

/// HMAC-SHA256 (RFC 2104) for integrity tags and blind indexes.
public enum MessageAuthentication {
    /// The 32-byte HMAC-SHA256 of `message` under `key`.
    public static func hmacSHA256<Message: DataProtocol>(_ message: Message, key: SymmetricKey) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }

    /// Whether `code` is the HMAC-SHA256 of `message` under `key`, compared in constant time.
    public static func isValidHMACSHA256<Code: DataProtocol, Message: DataProtocol>(
        _ code: Code, for message: Message, key: SymmetricKey
    ) -> Bool {
        // swift-crypto's isValidAuthenticationCode wants ContiguousBytes, which a generic
        // DataProtocol (e.g. a non-contiguous DispatchData) is not: compute and compare here.
        ConstantTime.equals(hmacSHA256(message, key: key), code)
    }
}

/// An HMAC-SHA256 key made ready once, for a key that tags many messages (a blind index):
/// the padded key is hashed when this is made, not again for every message — in a keychain
/// lookup that preparation was half of each tag's cost.
public struct PreparedHMACKey: Sendable {
    /// The HMAC state after the key: copied for each message (swift-crypto's digests are
    /// copy-on-write, so concurrent uses do not share a state).
    private let keyed: HMAC<SHA256>

    public init(_ key: SymmetricKey) {
        keyed = HMAC<SHA256>(key: key)
    }

    /// The 32-byte HMAC-SHA256 of `message`: the same bytes as
    /// ``MessageAuthentication/hmacSHA256(_:key:)`` under this key.
    public func authenticationCode<Message: DataProtocol>(for message: Message) -> Data {
        var hmac = keyed
        hmac.update(data: message)
        return Data(hmac.finalize())
    }
}
