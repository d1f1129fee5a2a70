import Crypto
import Foundation
import Testing
import TresorCrypto

/// One published RFC 3394 example.
struct KeyWrapVector: Sendable, CustomTestStringConvertible {
    let section: String
    let kek: String
    let keyData: String
    let ciphertext: String
    var testDescription: String { "RFC 3394 §\(section)" }
}

// RFC 3394 (Schaad & Housley, "Advanced Encryption Standard (AES) Key Wrap Algorithm",
// September 2002), section 4 "Test Vectors", §4.1–§4.6. Cross-checked with Python
// `cryptography` 48 (aes_key_wrap / aes_key_unwrap) before being written here.
let rfc3394Vectors: [KeyWrapVector] = [
    // §4.1 Wrap 128 bits of Key Data with a 128-bit KEK
    KeyWrapVector(
        section: "4.1", kek: "000102030405060708090A0B0C0D0E0F",
        keyData: "00112233445566778899AABBCCDDEEFF",
        ciphertext: "1FA68B0A8112B447 AEF34BD8FB5A7B82 9D3E862371D2CFE5"),
    // §4.2 Wrap 128 bits of Key Data with a 192-bit KEK
    KeyWrapVector(
        section: "4.2", kek: "000102030405060708090A0B0C0D0E0F1011121314151617",
        keyData: "00112233445566778899AABBCCDDEEFF",
        ciphertext: "96778B25AE6CA435 F92B5B97C050AED2 468AB8A17AD84E5D"),
    // §4.3 Wrap 128 bits of Key Data with a 256-bit KEK
    KeyWrapVector(
        section: "4.3", kek: "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
        keyData: "00112233445566778899AABBCCDDEEFF",
        ciphertext: "64E8C3F9CE0F5BA2 63E9777905818A2A 93C8191E7D6E8AE7"),
    // §4.4 Wrap 192 bits of Key Data with a 192-bit KEK
    KeyWrapVector(
        section: "4.4", kek: "000102030405060708090A0B0C0D0E0F1011121314151617",
        keyData: "00112233445566778899AABBCCDDEEFF0001020304050607",
        ciphertext: "031D33264E15D332 68F24EC260743EDC E1C6C7DDEE725A93 6BA814915C6762D2"),
    // §4.5 Wrap 192 bits of Key Data with a 256-bit KEK
    KeyWrapVector(
        section: "4.5", kek: "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
        keyData: "00112233445566778899AABBCCDDEEFF0001020304050607",
        ciphertext: "A8F9BC1612C68B3F F6E6F4FBE30E71E4 769C8B80A32CB895 8CD5D17D6B254DA1"),
    // §4.6 Wrap 256 bits of Key Data with a 256-bit KEK
    KeyWrapVector(
        section: "4.6", kek: "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
        keyData: "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
        ciphertext: "28C9F404C4B810F4 CBCCB35CFB87F826 3F5786E2D80ED326 CBC7F0E71A99F43B FB988B9B7A02DD21"),
]

@Suite("KeyWrap (RFC 3394)")
struct KeyWrapTests {
    @Test("RFC 3394 §4 vectors: wrap gives the published ciphertext", arguments: rfc3394Vectors)
    func wrapMatchesPublishedVector(_ vector: KeyWrapVector) throws {
        let wrapped = try KeyWrap.wrap(SymmetricKey(hex: vector.keyData), using: SymmetricKey(hex: vector.kek))
        #expect(wrapped == Data(hex: vector.ciphertext))
    }

    @Test("RFC 3394 §4 vectors: unwrap gives back the key data", arguments: rfc3394Vectors)
    func unwrapMatchesPublishedVector(_ vector: KeyWrapVector) throws {
        let key = try KeyWrap.unwrap(Data(hex: vector.ciphertext), using: SymmetricKey(hex: vector.kek))
        #expect(key.bytes == Data(hex: vector.keyData))
    }

    @Test("Flipping any single bit of a wrapped key makes unwrap fail", arguments: rfc3394Vectors)
    func everyBitFlipIsDetected(_ vector: KeyWrapVector) throws {
        let kek = SymmetricKey(hex: vector.kek)
        let wrapped = Data(hex: vector.ciphertext)
        for bit in 0..<(wrapped.count * 8) {
            #expect(throws: CryptoError.unwrapFailed, "bit \(bit)") {
                try KeyWrap.unwrap(wrapped.flippingBit(bit), using: kek)
            }
        }
    }

    @Test("A wrong KEK makes unwrap fail")
    func wrongKEK() throws {
        for kekBits in [128, 192, 256] {
            let kek = SecureRandom.key(bitCount: kekBits)
            let wrapped = try KeyWrap.wrap(SecureRandom.key(bitCount: 128), using: kek)
            #expect(throws: CryptoError.unwrapFailed) {
                try KeyWrap.unwrap(wrapped, using: SecureRandom.key(bitCount: kekBits))
            }
            // A KEK differing in one bit only.
            let nearKEK = SymmetricKey(data: kek.bytes.flippingBit(0))
            #expect(throws: CryptoError.unwrapFailed) { try KeyWrap.unwrap(wrapped, using: nearKEK) }
        }
        // RFC 3394 §4.1's ciphertext under §4.3's KEK.
        let v41 = rfc3394Vectors[0], v43 = rfc3394Vectors[2]
        #expect(throws: CryptoError.unwrapFailed) {
            try KeyWrap.unwrap(Data(hex: v41.ciphertext), using: SymmetricKey(hex: v43.kek))
        }
    }

    @Test("Round trips for every KEK size and key sizes 128…512 bits; output is 8 bytes longer")
    func roundTrips() throws {
        for kekBits in [128, 192, 256] {
            let kek = SecureRandom.key(bitCount: kekBits)
            for keyBytes in [16, 24, 32, 40, 64] {
                let key = SymmetricKey(data: SecureRandom.bytes(count: keyBytes))
                let wrapped = try KeyWrap.wrap(key, using: kek)
                #expect(wrapped.count == keyBytes + 8)
                #expect(try KeyWrap.unwrap(wrapped, using: kek).bytes == key.bytes)
            }
        }
    }

    @Test("Unwrap accepts a slice of a larger buffer")
    func unwrapFromSlice() throws {
        let vector = rfc3394Vectors[5]
        let buffer = Data([0xAA, 0xBB, 0xCC]) + Data(hex: vector.ciphertext) + Data([0xDD])
        let slice = buffer[3..<(buffer.count - 1)]
        #expect(try KeyWrap.unwrap(slice, using: SymmetricKey(hex: vector.kek)).bytes == Data(hex: vector.keyData))
    }

    @Test("KEKs other than 128/192/256 bits are rejected with invalidKeySize")
    func badKEKSizes() throws {
        let key = SecureRandom.key(bitCount: 128)
        let wrapped = try KeyWrap.wrap(key, using: SecureRandom.key(bitCount: 128))
        for kekBytes in [0, 8, 15, 17, 20, 31, 33, 64] {
            let kek = SymmetricKey(data: Data(repeating: 7, count: kekBytes))
            #expect(throws: CryptoError.invalidKeySize(expected: [16, 24, 32], actual: kekBytes)) {
                try KeyWrap.wrap(key, using: kek)
            }
            #expect(throws: CryptoError.invalidKeySize(expected: [16, 24, 32], actual: kekBytes)) {
                try KeyWrap.unwrap(wrapped, using: kek)
            }
        }
    }

    @Test("Keys to wrap that are not ≥ 128 bits and a multiple of 64 are rejected with invalidParameter")
    func badKeySizes() {
        let kek = SecureRandom.key(bitCount: 256)
        for keyBytes in [0, 1, 8, 12, 15, 17, 20, 31, 33] {
            let error = #expect(throws: CryptoError.self, "key of \(keyBytes) bytes") {
                try KeyWrap.wrap(SymmetricKey(data: Data(repeating: 1, count: keyBytes)), using: kek)
            }
            #expect(error?.kind == "invalidParameter", "key of \(keyBytes) bytes: \(String(describing: error))")
        }
    }

    @Test("Wrapped inputs that are not ≥ 24 bytes and a multiple of 8 are rejected with invalidParameter")
    func badWrappedSizes() {
        let kek = SecureRandom.key(bitCount: 128)
        for count in [0, 1, 8, 16, 23, 25, 31, 33, 39] {
            let error = #expect(throws: CryptoError.self, "wrapped of \(count) bytes") {
                try KeyWrap.unwrap(Data(repeating: 0xA6, count: count), using: kek)
            }
            #expect(error?.kind == "invalidParameter", "wrapped of \(count) bytes: \(String(describing: error))")
        }
    }

    @Test("Truncated or extended wrapped keys never unwrap")
    func truncatedOrExtended() throws {
        let vector = rfc3394Vectors[5]  // 40 bytes
        let kek = SymmetricKey(hex: vector.kek)
        let wrapped = Data(hex: vector.ciphertext)
        for count in 0..<wrapped.count {
            #expect(throws: CryptoError.self, "\(count) bytes") { try KeyWrap.unwrap(wrapped.prefix(count), using: kek) }
        }
        // Dropping the last 8-byte block keeps a valid size but must fail the integrity check.
        #expect(throws: CryptoError.unwrapFailed) { try KeyWrap.unwrap(wrapped.prefix(32), using: kek) }
        #expect(throws: CryptoError.unwrapFailed) { try KeyWrap.unwrap(wrapped + Data(count: 8), using: kek) }
    }
}
