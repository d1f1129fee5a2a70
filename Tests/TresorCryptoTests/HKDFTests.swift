import Crypto
import Foundation
import Testing
import TresorCrypto

struct HKDFVector: Sendable, CustomTestStringConvertible {
    let name: String
    let ikm: String
    let salt: String
    let info: String
    let length: Int
    let okm: String
    var testDescription: String { name }
}

// RFC 5869 (Krawczyk & Eronen, "HMAC-based Extract-and-Expand Key Derivation Function"),
// Appendix A, test cases 1–3 (SHA-256). Cross-checked with Python `cryptography`'s HKDF.
let rfc5869Vectors: [HKDFVector] = [
    // A.1 Test Case 1: basic test case with SHA-256
    HKDFVector(
        name: "RFC 5869 A.1 Test Case 1",
        ikm: "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", salt: "000102030405060708090a0b0c",
        info: "f0f1f2f3f4f5f6f7f8f9", length: 42,
        okm: """
            3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf
            34007208d5b887185865
            """),
    // A.2 Test Case 2: test with SHA-256 and longer inputs/outputs
    HKDFVector(
        name: "RFC 5869 A.2 Test Case 2",
        ikm: """
            000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
            202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f
            404142434445464748494a4b4c4d4e4f
            """,
        salt: """
            606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f
            808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f
            a0a1a2a3a4a5a6a7a8a9aaabacadaeaf
            """,
        info: """
            b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecf
            d0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef
            f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
            """,
        length: 82,
        okm: """
            b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c
            59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71
            cc30c58179ec3e87c14c01d5c1f3434f1d87
            """),
    // A.3 Test Case 3: test with SHA-256 and zero-length salt/info
    HKDFVector(
        name: "RFC 5869 A.3 Test Case 3",
        ikm: "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", salt: "", info: "", length: 42,
        okm: """
            8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d
            9d201395faa4b61a96c8
            """),
]

@Suite("HKDF-SHA256")
struct HKDFTests {
    @Test("RFC 5869 vectors (OKM)", arguments: rfc5869Vectors)
    func publishedVectors(_ v: HKDFVector) {
        let okm = KeyDerivation.hkdfSHA256(
            inputKeyMaterial: SymmetricKey(hex: v.ikm), salt: Data(hex: v.salt), info: Data(hex: v.info),
            outputByteCount: v.length)
        #expect(okm.bytes.hex == Data(hex: v.okm).hex)
    }

    @Test("A String label is its UTF-8 bytes; the default output is 32 bytes")
    func stringLabel() {
        let ikm = SymmetricKey(hex: "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b")
        let salt = Data("salt".utf8)
        let fromString = KeyDerivation.hkdfSHA256(inputKeyMaterial: ikm, salt: salt, info: "tresor.metadata.v1")
        let fromBytes = KeyDerivation.hkdfSHA256(
            inputKeyMaterial: ikm, salt: salt, info: Data("tresor.metadata.v1".utf8), outputByteCount: 32)
        #expect(fromString.bitCount == 256)
        #expect(fromString.bytes == fromBytes.bytes)
    }

    @Test("Different labels, salts or input keys give independent keys")
    func separation() {
        let ikm = SecureRandom.key(bitCount: 256)
        let salt = SecureRandom.bytes(count: 16)
        let a = KeyDerivation.hkdfSHA256(inputKeyMaterial: ikm, salt: salt, info: "tresor.index.v1")
        let b = KeyDerivation.hkdfSHA256(inputKeyMaterial: ikm, salt: salt, info: "tresor.metadata.v1")
        let c = KeyDerivation.hkdfSHA256(inputKeyMaterial: ikm, salt: SecureRandom.bytes(count: 16), info: "tresor.index.v1")
        let d = KeyDerivation.hkdfSHA256(inputKeyMaterial: SecureRandom.key(bitCount: 256), salt: salt, info: "tresor.index.v1")
        let again = KeyDerivation.hkdfSHA256(inputKeyMaterial: ikm, salt: salt, info: "tresor.index.v1")
        #expect(Set([a.bytes, b.bytes, c.bytes, d.bytes]).count == 4)
        #expect(again.bytes == a.bytes)
    }
}
