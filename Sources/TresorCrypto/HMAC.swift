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
