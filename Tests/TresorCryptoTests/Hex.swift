import Crypto
import Foundation
import TresorCrypto

// Tiny helpers shared by the TresorCrypto tests.

/// swift-crypto (imported for `SymmetricKey`) also declares a `CryptoError`; in these tests
/// the name always means Tresor's.
typealias CryptoError = TresorCrypto.CryptoError

extension Data {
    /// Bytes from a hex string; whitespace is ignored so vectors can be pasted as published.
    /// Traps on anything else: a malformed vector is a bug in the test itself.
    init(hex: String) {
        let digits = hex.filter { !$0.isWhitespace }
        precondition(digits.count % 2 == 0, "odd number of hex digits")
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { preconditionFailure("bad hex \(digits[index..<next])") }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }

    var hex: String { map { String(format: "%02x", $0) }.joined() }

    /// A copy with bit `bit` (0 = least significant bit of byte 0) inverted.
    func flippingBit(_ bit: Int) -> Data {
        var copy = Data(self)
        copy[copy.startIndex + bit / 8] ^= UInt8(1) << UInt8(bit % 8)
        return copy
    }
}

extension SymmetricKey {
    init(hex: String) { self.init(data: Data(hex: hex)) }

    var bytes: Data { withUnsafeBytes { Data($0) } }
}

extension CryptoError {
    /// The case, ignoring its message, for tests that only care which kind of refusal it was.
    var kind: String {
        switch self {
        case .authenticationFailed: return "authenticationFailed"
        case .unwrapFailed: return "unwrapFailed"
        case .invalidKeySize: return "invalidKeySize"
        case .malformedEnvelope: return "malformedEnvelope"
        case .unsupportedVersion: return "unsupportedVersion"
        case .invalidParameter: return "invalidParameter"
        case .invalidPublicKey: return "invalidPublicKey"
        case .badPadding: return "badPadding"
        }
    }
}
