/// Why a cryptographic operation refused its input.
///
/// None of the cases carries key material, plaintext or passphrases, so an error can be
/// logged or shown as it is.
public enum CryptoError: Error, Equatable, Sendable {
    /// AES-GCM rejected the ciphertext: wrong key, or the IV, ciphertext, tag or
    /// associated data was changed.
    case authenticationFailed
    /// RFC 3394 unwrap failed its integrity check: wrong key-encryption key, or the
    /// wrapped key was changed.
    case unwrapFailed
    /// A key had a size the operation does not accept.
    case invalidKeySize(expected: [Int], actual: Int)
    /// A serialized envelope could not be parsed.
    case malformedEnvelope(String)
    /// An envelope declares a format version this build does not read.
    case unsupportedVersion(UInt8)
    /// A parameter is outside the range the operation accepts.
    case invalidParameter(String)
    /// A peer's Diffie–Hellman public key was refused (empty, too long, or not strictly
    /// between 1 and p − 1). The reason names the rule, never the key's bytes.
    case invalidPublicKey(String)
    /// AES-CBC decryption found no valid PKCS#7 padding: wrong key or IV, or the ciphertext
    /// was altered. (CBC authenticates nothing: a wrong key shows as bad padding
    /// most of the time, not always.)
    case badPadding
}

extension CryptoError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .authenticationFailed:
            return "authentication failed: wrong key, or the data was altered"
        case .unwrapFailed:
            return "key unwrap failed: wrong key-encryption key, or the wrapped key was altered"
        case .invalidKeySize(let expected, let actual):
            let sizes = expected.map { String($0 * 8) }.joined(separator: " or ")
            return "invalid key size: \(actual * 8) bits, expected \(sizes)"
        case .malformedEnvelope(let reason):
            return "malformed envelope: \(reason)"
        case .unsupportedVersion(let version):
            return "unsupported envelope format version \(version)"
        case .invalidParameter(let reason):
            return "invalid parameter: \(reason)"
        case .invalidPublicKey(let reason):
            return "invalid Diffie-Hellman public key: \(reason)"
        case .badPadding:
            return "decryption failed: invalid padding (wrong key or IV, or the data was altered)"
        }
    }
}
