import Crypto
import Foundation
import TresorCrypto

/// age's STREAM payload: a 16-byte nonce, then 64 KiB chunks sealed with ChaCha20-Poly1305
/// under HKDF(file key, nonce, "payload"); each chunk's nonce is an 11-byte big-endian counter
/// and a last byte of 1 on the final chunk — so chunks cannot be reordered, dropped or cut
/// without a failed tag.
enum PayloadStream {
    static let chunkByteCount = 64 * 1024
    static let sealedChunkByteCount = chunkByteCount + ChaChaPoly1305.tagByteCount
    static let nonceByteCount = 16

    static func key(fileKey: SymmetricKey, nonce: Data) -> SymmetricKey {
        KeyDerivation.hkdfSHA256(inputKeyMaterial: fileKey, salt: nonce, info: "payload")
    }

    static func chunkNonce(_ counter: UInt64, isFinal: Bool) -> Data {
        var nonce = Data(count: 12)
        for index in 0..<8 { nonce[10 - index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index))) }
        nonce[11] = isFinal ? 1 : 0
        return nonce
    }
}
