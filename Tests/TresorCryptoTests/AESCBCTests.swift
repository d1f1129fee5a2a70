import Crypto
import Foundation
import Testing
import TresorCrypto

/// One published CBC example: four blocks, no padding.
struct CBCVector: Sendable, CustomTestStringConvertible {
    let name: String
    let key: String
    let iv: String
    let plaintext: String
    let ciphertext: String
    /// The same plaintext with PKCS#7 padding (a whole block of 0x10): the published
    /// ciphertext and one more block.
    let paddedCiphertext: String
    var testDescription: String { name }
}

// NIST SP 800-38A (Dworkin, "Recommendation for Block Cipher Modes of Operation", 2001),
// Appendix F.2 "CBC Example Vectors": F.2.1/F.2.2 CBC-AES128.Encrypt/Decrypt and
// F.2.5/F.2.6 CBC-AES256.Encrypt/Decrypt (each Decrypt example is its Encrypt example read
// backwards). The fifth, padded block is not published: it was produced with Python
// `cryptography` 48 (PKCS7(128) padder, then AES-CBC), which also reproduced the four
// published blocks.
private let sp800_38aPlaintext = """
    6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51
    30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710
    """
let cbcVectors: [CBCVector] = [
    CBCVector(
        name: "SP 800-38A F.2.1/F.2.2 CBC-AES128", key: "2b7e151628aed2a6abf7158809cf4f3c",
        iv: "000102030405060708090a0b0c0d0e0f", plaintext: sp800_38aPlaintext,
        ciphertext: """
            7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2
            73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7
            """,
        paddedCiphertext: "8cb82807230e1321d3fae00d18cc2012"),
    CBCVector(
        name: "SP 800-38A F.2.5/F.2.6 CBC-AES256",
        key: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
        iv: "000102030405060708090a0b0c0d0e0f", plaintext: sp800_38aPlaintext,
        ciphertext: """
            f58c4c04d6e5f1ba779eabfb5f7bfbd6 9cfc4e967edb808d679f777bc6702c7d
            39f23369a9d9bacfa530e26304231461 b2eb05e2c39be9fcda6c19078c6a9d1b
            """,
        paddedCiphertext: "3f461796d6b0d6b2e0c2a72b4d80e644"),
]

@Suite("AES-CBC")
struct AESCBCTests {
    @Test("SP 800-38A vectors without padding: encrypt and decrypt", arguments: cbcVectors)
    func publishedVectors(_ v: CBCVector) throws {
        let key = SymmetricKey(hex: v.key), iv = Data(hex: v.iv)
        let ciphertext = try AESCBC.encrypt(Data(hex: v.plaintext), using: key, iv: iv, padding: .none)
        #expect(ciphertext.hex == Data(hex: v.ciphertext).hex)
        #expect(try AESCBC.decrypt(Data(hex: v.ciphertext), using: key, iv: iv, padding: .none) == Data(hex: v.plaintext))
    }

    @Test("PKCS#7 on whole blocks appends a block of 0x10: the published blocks, then one more", arguments: cbcVectors)
    func paddedVectors(_ v: CBCVector) throws {
        let key = SymmetricKey(hex: v.key), iv = Data(hex: v.iv)
        let expected = Data(hex: v.ciphertext) + Data(hex: v.paddedCiphertext)
        #expect(try AESCBC.encrypt(Data(hex: v.plaintext), using: key, iv: iv).hex == expected.hex)
        #expect(try AESCBC.decrypt(expected, using: key, iv: iv) == Data(hex: v.plaintext))
        let raw = try AESCBC.decrypt(expected, using: key, iv: iv, padding: .none)
        #expect(raw.suffix(16) == Data(repeating: 0x10, count: 16))
    }

    @Test("Padding sizes: empty → one full block, 15 → one, 16 → two, 17 → two; every length round-trips")
    func paddingEdges() throws {
        let key = SecureRandom.key(bitCount: 128), iv = SecureRandom.bytes(count: 16)
        for (length, blocks) in [(0, 1), (1, 1), (15, 1), (16, 2), (17, 2), (31, 2), (32, 3)] {
            let ciphertext = try AESCBC.encrypt(Data(repeating: 0x61, count: length), using: key, iv: iv)
            #expect(ciphertext.count == blocks * 16, "\(length) bytes")
            let raw = try AESCBC.decrypt(ciphertext, using: key, iv: iv, padding: .none)
            let pad = UInt8(blocks * 16 - length)
            #expect(raw.suffix(Int(pad)) == Data(repeating: pad, count: Int(pad)), "\(length) bytes")
        }
        for keyBits in [128, 256] {
            let key = SecureRandom.key(bitCount: keyBits)
            for length in 0...48 {
                let plaintext = SecureRandom.bytes(count: length)
                let encrypted = try AESCBC.encrypt(plaintext, using: key)
                #expect(try AESCBC.decrypt(encrypted.ciphertext, using: key, iv: encrypted.iv) == plaintext)
            }
        }
    }

    @Test("A random IV is 16 fresh bytes per message")
    func randomIV() throws {
        let key = SecureRandom.key(bitCount: 128)
        let first = try AESCBC.encrypt(Data("same secret".utf8), using: key)
        let second = try AESCBC.encrypt(Data("same secret".utf8), using: key)
        #expect(first.iv.count == 16 && second.iv.count == 16)
        #expect(first.iv != second.iv)
        #expect(first.ciphertext != second.ciphertext)
    }

    @Test("Decrypting accepts a slice of a larger buffer")
    func decryptSlice() throws {
        let v = cbcVectors[0]
        let buffer = Data([0xAA]) + Data(hex: v.ciphertext) + Data(hex: v.paddedCiphertext) + Data([0xBB])
        let slice = buffer[1..<(buffer.count - 1)]
        #expect(try AESCBC.decrypt(slice, using: SymmetricKey(hex: v.key), iv: Data(hex: v.iv)) == Data(hex: v.plaintext))
    }

    @Test("Bad PKCS#7 padding is refused with badPadding")
    func badPadding() throws {
        let key = SecureRandom.key(bitCount: 128), iv = SecureRandom.bytes(count: 16)
        // Last blocks whose padding is wrong: a zero count, a count over 16, counts that the
        // bytes before them do not repeat.
        let lastBlocks: [Data] = [
            Data(repeating: 0x41, count: 15) + [0x00],
            Data(repeating: 0x41, count: 15) + [0x11],
            Data(repeating: 0xFF, count: 16),
            Data(repeating: 0x41, count: 14) + [0x01, 0x02],
            Data(repeating: 0x41, count: 13) + [0x02, 0x03, 0x03],
            Data(repeating: 0x10, count: 15) + [0x0F],
            Data([0x0F]) + Data(repeating: 0x10, count: 15),
        ]
        for (index, last) in lastBlocks.enumerated() {
            for prefix in [Data(), Data(repeating: 0x10, count: 16)] {
                let ciphertext = try AESCBC.encrypt(prefix + last, using: key, iv: iv, padding: .none)
                #expect(throws: CryptoError.badPadding, "case \(index), \(prefix.count / 16 + 1) blocks") {
                    try AESCBC.decrypt(ciphertext, using: key, iv: iv)
                }
            }
        }
        // The good paddings of the same shape open.
        let good = try AESCBC.encrypt(Data(repeating: 0x41, count: 13) + [0x03, 0x03, 0x03], using: key, iv: iv, padding: .none)
        #expect(try AESCBC.decrypt(good, using: key, iv: iv) == Data(repeating: 0x41, count: 13))
    }

    @Test("A wrong key, IV or altered last block never returns the plaintext")
    func wrongKeyOrIV() throws {
        let key = SecureRandom.key(bitCount: 128)
        let plaintext = Data("a secret of some length".utf8)
        let encrypted = try AESCBC.encrypt(plaintext, using: key)
        // CBC has no tag: a wrong key yields bad padding or, rarely, garbage — never the plaintext.
        let wrongKey = try? AESCBC.decrypt(encrypted.ciphertext, using: SecureRandom.key(bitCount: 128), iv: encrypted.iv)
        #expect(wrongKey != plaintext)
        // A wrong IV changes only the first block.
        let wrongIV = try AESCBC.decrypt(encrypted.ciphertext, using: key, iv: encrypted.iv.flippingBit(0))
        #expect(wrongIV != plaintext && wrongIV.dropFirst(16) == plaintext.dropFirst(16))
        let altered = try? AESCBC.decrypt(encrypted.ciphertext.flippingBit(encrypted.ciphertext.count * 8 - 1), using: key, iv: encrypted.iv)
        #expect(altered != plaintext)
    }

    @Test("IVs that are not 16 bytes are refused with invalidParameter")
    func badIVSizes() throws {
        let key = SecureRandom.key(bitCount: 128)
        let ciphertext = try AESCBC.encrypt(Data("x".utf8), using: key, iv: Data(count: 16))
        for count in [0, 1, 8, 12, 15, 17, 24, 32] {
            let iv = Data(repeating: 7, count: count)
            let encryptError = #expect(throws: CryptoError.self, "IV of \(count) bytes") {
                try AESCBC.encrypt(Data("x".utf8), using: key, iv: iv)
            }
            let decryptError = #expect(throws: CryptoError.self, "IV of \(count) bytes") {
                try AESCBC.decrypt(ciphertext, using: key, iv: iv)
            }
            #expect(encryptError == .invalidParameter("AES-CBC IV must be 16 bytes"))
            #expect(decryptError == .invalidParameter("AES-CBC IV must be 16 bytes"))
        }
    }

    @Test("Ciphertexts that are not a non-empty multiple of 16 bytes are refused with invalidParameter")
    func badCiphertextLengths() {
        let key = SecureRandom.key(bitCount: 128), iv = Data(count: 16)
        for count in [0, 1, 15, 17, 31, 33] {
            for padding in [AESCBC.Padding.pkcs7, .none] {
                let error = #expect(throws: CryptoError.self, "\(count) bytes") {
                    try AESCBC.decrypt(Data(repeating: 0x5A, count: count), using: key, iv: iv, padding: padding)
                }
                #expect(error == .invalidParameter("AES-CBC ciphertext must be a non-empty multiple of 16 bytes"))
            }
        }
        for count in [0, 1, 15, 17] {
            let error = #expect(throws: CryptoError.self, "\(count) bytes") {
                try AESCBC.encrypt(Data(count: count), using: key, iv: iv, padding: .none)
            }
            #expect(error?.kind == "invalidParameter")
        }
    }

    @Test("Keys other than 128 or 256 bits are refused with invalidKeySize")
    func badKeySizes() throws {
        let iv = Data(count: 16)
        let ciphertext = try AESCBC.encrypt(Data("x".utf8), using: SecureRandom.key(bitCount: 128), iv: iv)
        for keyBytes in [0, 8, 15, 17, 24, 31, 33, 64] {
            let key = SymmetricKey(data: Data(repeating: 7, count: keyBytes))
            #expect(throws: CryptoError.invalidKeySize(expected: [16, 32], actual: keyBytes)) {
                try AESCBC.encrypt(Data("x".utf8), using: key, iv: iv)
            }
            #expect(throws: CryptoError.invalidKeySize(expected: [16, 32], actual: keyBytes)) {
                try AESCBC.decrypt(ciphertext, using: key, iv: iv)
            }
        }
    }
}
