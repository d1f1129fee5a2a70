import Crypto
import Foundation
import Testing
import TresorCrypto

/// One published GCM test case.
struct GCMVector: Sendable, CustomTestStringConvertible {
    let name: String
    let key: String
    let iv: String
    let plaintext: String
    let aad: String
    let ciphertext: String
    let tag: String
    var testDescription: String { name }
}

// Shared inputs of the McGrew–Viega test cases.
private let kFeffe = "feffe9928665731c6d6a8f9467308308"
private let ivCafe = "cafebabefacedbaddecaf888"
private let p64 = """
    d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72
    1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255
    """
private let p60 = """
    d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72
    1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39
    """
private let aadFeed = "feedfacedeadbeeffeedfacedeadbeefabaddad2"
private let iv60 = """
    9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728
    c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b
    """

// D. McGrew and J. Viega, "The Galois/Counter Mode of Operation (GCM)", revised May 2005,
// Appendix B "AES Test Vectors" (the same cases NIST's GCM validation files start with).
// Every case below was cross-checked with Python `cryptography` 48 (AESGCM, which accepts
// non-96-bit nonces) before being written here.
let gcmVectors: [GCMVector] = [
    // Test Case 1: AES-128, zero key, 96-bit zero IV, empty plaintext, no AAD.
    GCMVector(
        name: "McGrew–Viega Test Case 1 (AES-128, empty)", key: "00000000000000000000000000000000",
        iv: "000000000000000000000000", plaintext: "", aad: "", ciphertext: "",
        tag: "58e2fccefa7e3061367f1d57a4e7455a"),
    // Test Case 2: AES-128, zero key, 96-bit zero IV, one zero block, no AAD.
    GCMVector(
        name: "McGrew–Viega Test Case 2 (AES-128)", key: "00000000000000000000000000000000",
        iv: "000000000000000000000000", plaintext: "00000000000000000000000000000000", aad: "",
        ciphertext: "0388dace60b6a392f328c2b971b2fe78", tag: "ab6e47d42cec13bdf53a67b21257bddf"),
    // Test Case 3: AES-128, 96-bit IV, 64-byte plaintext, no AAD.
    GCMVector(
        name: "McGrew–Viega Test Case 3 (AES-128, no AAD)", key: kFeffe, iv: ivCafe, plaintext: p64, aad: "",
        ciphertext: """
            42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e
            21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985
            """,
        tag: "4d5c2af327cd64a62cf35abd2ba6fab4"),
    // Test Case 4: AES-128, 96-bit IV, 60-byte plaintext, 20-byte AAD.
    GCMVector(
        name: "McGrew–Viega Test Case 4 (AES-128, with AAD)", key: kFeffe, iv: ivCafe, plaintext: p60, aad: aadFeed,
        ciphertext: """
            42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e
            21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091
            """,
        tag: "5bc94fbc3221a5db94fae95ae7121a47"),
    // Test Case 6: AES-128, 60-byte (480-bit) IV — the non-96-bit IV path (GHASH of the IV).
    GCMVector(
        name: "McGrew–Viega Test Case 6 (AES-128, 60-byte IV)", key: kFeffe, iv: iv60, plaintext: p60, aad: aadFeed,
        ciphertext: """
            8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca7
            01e4a9a4fba43c90ccdcb281d48c7c6fd62875d2aca417034c34aee5
            """,
        tag: "619cc5aefffe0bfa462af43c1699d050"),
    // Test Case 13: AES-256, zero key, 96-bit zero IV, empty plaintext.
    GCMVector(
        name: "McGrew–Viega Test Case 13 (AES-256, empty)",
        key: "0000000000000000000000000000000000000000000000000000000000000000",
        iv: "000000000000000000000000", plaintext: "", aad: "", ciphertext: "",
        tag: "530f8afbc74536b9a963b4f1c4cb738b"),
    // Test Case 14: AES-256, zero key, 96-bit zero IV, one zero block.
    GCMVector(
        name: "McGrew–Viega Test Case 14 (AES-256)",
        key: "0000000000000000000000000000000000000000000000000000000000000000",
        iv: "000000000000000000000000", plaintext: "00000000000000000000000000000000", aad: "",
        ciphertext: "cea7403d4d606b6e074ec5d3baf39d18", tag: "d0d1c8a799996bf0265b98b5d48ab919"),
    // Test Case 15: AES-256, 96-bit IV, 64-byte plaintext, no AAD.
    GCMVector(
        name: "McGrew–Viega Test Case 15 (AES-256, no AAD)", key: kFeffe + kFeffe, iv: ivCafe, plaintext: p64, aad: "",
        ciphertext: """
            522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa
            8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad
            """,
        tag: "b094dac5d93471bdec1a502270e3cc6c"),
    // Test Case 16: AES-256, 96-bit IV, 60-byte plaintext, 20-byte AAD.
    GCMVector(
        name: "McGrew–Viega Test Case 16 (AES-256, with AAD)", key: kFeffe + kFeffe, iv: ivCafe, plaintext: p60,
        aad: aadFeed,
        ciphertext: """
            522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa
            8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662
            """,
        tag: "76fc6ece0f4e1768cddf8853bb2d551b"),
    // Test Case 18: AES-256, 60-byte IV.
    GCMVector(
        name: "McGrew–Viega Test Case 18 (AES-256, 60-byte IV)", key: kFeffe + kFeffe, iv: iv60, plaintext: p60,
        aad: aadFeed,
        ciphertext: """
            5a8def2f0c9e53f1f75d7853659e2a20eeb2b22aafde6419a058ab4f6f746bf4
            0fc0c3b780f244452da3ebf1c5d82cdea2418997200ef82e44ae7e3f
            """,
        tag: "a44a8266ee1c8eb0c8b5d4cf5ae9f19a"),
]

@Suite("AESGCM")
struct AESGCMTests {
    @Test("Published GCM vectors: seal with the given IV gives the exact ciphertext and tag", arguments: gcmVectors)
    func sealMatchesPublishedVector(_ v: GCMVector) throws {
        let sealed = try AESGCM.seal(
            Data(hex: v.plaintext), using: SymmetricKey(hex: v.key), iv: Data(hex: v.iv),
            authenticating: Data(hex: v.aad))
        #expect(sealed.iv == Data(hex: v.iv))
        #expect(sealed.ciphertext.hex == Data(hex: v.ciphertext).hex)
        #expect(sealed.tag.hex == Data(hex: v.tag).hex)
    }

    @Test(
        "Published GCM vectors with 12-byte IVs: sealCombined gives exactly IV ‖ ciphertext ‖ tag",
        arguments: gcmVectors.filter { $0.iv.count == 24 })
    func sealCombinedMatchesPublishedVector(_ v: GCMVector) throws {
        let combined = try AESGCM.sealCombined(
            Data(hex: v.plaintext), using: SymmetricKey(hex: v.key), iv: Data(hex: v.iv),
            authenticating: Data(hex: v.aad))
        #expect(combined.hex == (Data(hex: v.iv) + Data(hex: v.ciphertext) + Data(hex: v.tag)).hex)
    }

    @Test("sealCombined: a random IV each time, the parts open as a Sealed, other IV lengths refused")
    func sealCombinedRoundTrip() throws {
        for bits in [128, 256] {
            let key = SecureRandom.key(bitCount: bits)
            let aad = Data("chunk 7".utf8)
            for count in [0, 1, 16, 1 << 20] {
                let plaintext = SecureRandom.bytes(count: count)
                let a = try AESGCM.sealCombined(plaintext, using: key, authenticating: aad)
                let b = try AESGCM.sealCombined(plaintext, using: key, authenticating: aad)
                #expect(a.count == 12 + count + 16)
                #expect(a.prefix(12) != b.prefix(12), "a fresh IV for every seal")
                let sealed = AESGCM.Sealed(iv: a.prefix(12), ciphertext: a.dropFirst(12).dropLast(16), tag: a.suffix(16))
                #expect(try AESGCM.open(sealed, using: key, authenticating: aad) == plaintext)
                #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(sealed, using: key, authenticating: Data()) }
            }
        }
        let key = SecureRandom.key(bitCount: 128)
        for count in [8, 11, 13, 16] {
            let error = #expect(throws: CryptoError.self, "IV of \(count) bytes") {
                try AESGCM.sealCombined(Data("x".utf8), using: key, iv: Data(count: count), authenticating: Data())
            }
            #expect(error?.kind == "invalidParameter")
        }
        #expect(throws: CryptoError.self) {
            try AESGCM.sealCombined(Data("x".utf8), using: SecureRandom.key(bitCount: 192), authenticating: Data())
        }
    }

    @Test("Published GCM vectors: open gives back the plaintext", arguments: gcmVectors)
    func openMatchesPublishedVector(_ v: GCMVector) throws {
        let sealed = AESGCM.Sealed(iv: Data(hex: v.iv), ciphertext: Data(hex: v.ciphertext), tag: Data(hex: v.tag))
        let plaintext = try AESGCM.open(sealed, using: SymmetricKey(hex: v.key), authenticating: Data(hex: v.aad))
        #expect(plaintext == Data(hex: v.plaintext))
    }

    @Test(
        "Published GCM vectors with 12-byte IVs: openCombined gives back the plaintext; any flipped bit, a wrong key or AAD, or too few bytes fail",
        arguments: gcmVectors.filter { $0.iv.count == 24 })
    func openCombinedMatchesPublishedVector(_ v: GCMVector) throws {
        let key = SymmetricKey(hex: v.key), aad = Data(hex: v.aad)
        let combined = Data(hex: v.iv) + Data(hex: v.ciphertext) + Data(hex: v.tag)
        #expect(try AESGCM.openCombined(combined, using: key, authenticating: aad) == Data(hex: v.plaintext))
        // A slice of a larger buffer (an envelope after its header) opens the same.
        let padded = Data([1, 2, 3]) + combined + Data([4])
        #expect(try AESGCM.openCombined(padded.dropFirst(3).dropLast(), using: key, authenticating: aad) == Data(hex: v.plaintext))
        for bit in 0..<(combined.count * 8) {
            var altered = combined
            altered[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(throws: CryptoError.authenticationFailed, "bit \(bit)") { try AESGCM.openCombined(altered, using: key, authenticating: aad) }
        }
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.openCombined(combined, using: key, authenticating: aad + Data([0])) }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.openCombined(combined, using: SecureRandom.key(bitCount: key.bitCount), authenticating: aad)
        }
        for count in [0, 12, 27] {
            let error = #expect(throws: CryptoError.self, "\(count) bytes") {
                try AESGCM.openCombined(combined.prefix(count), using: key, authenticating: aad)
            }
            #expect(error?.kind == "invalidParameter")
        }
    }

    @Test("Published GCM vectors: one flipped bit anywhere in IV, ciphertext, tag or AAD fails", arguments: gcmVectors)
    func publishedVectorTampering(_ v: GCMVector) throws {
        let key = SymmetricKey(hex: v.key)
        let good = AESGCM.Sealed(iv: Data(hex: v.iv), ciphertext: Data(hex: v.ciphertext), tag: Data(hex: v.tag))
        let aad = Data(hex: v.aad)
        try expectEveryBitFlipRejected(good, key: key, aad: aad)
    }

    @Test("McGrew–Viega Test Case 5 (64-bit IV) is rejected: Tresor reads only IVs of 12 bytes or more")
    func shortIVRejected() throws {
        // Test Case 5: AES-128, IV cafebabefacedbad (8 bytes), 60-byte plaintext, AAD feedface….
        // Its published output (cross-checked with Python `cryptography`) is given to open().
        let key = SymmetricKey(hex: kFeffe)
        let iv8 = Data(hex: "cafebabefacedbad")
        let tc5 = AESGCM.Sealed(
            iv: iv8,
            ciphertext: Data(
                hex: """
                    61353b4c2806934a777ff51fa22a4755699b2a714fcdc6f83766e5f97b6c7423
                    73806900e49f24b22b097544d4896b424989b5e1ebac0f07c23f4598
                    """),
            tag: Data(hex: "3612d2e79e3b0785561be14aaca2fccb"))
        let openError = #expect(throws: CryptoError.self) {
            try AESGCM.open(tc5, using: key, authenticating: Data(hex: aadFeed))
        }
        #expect(openError?.kind == "invalidParameter")
        #expect(openError?.description.contains("IV") == true)
        let sealError = #expect(throws: CryptoError.self) {
            try AESGCM.seal(Data(hex: p60), using: key, iv: iv8, authenticating: Data(hex: aadFeed))
        }
        #expect(sealError?.kind == "invalidParameter")
        for count in [0, 1, 8, 11] {
            let error = #expect(throws: CryptoError.self, "IV of \(count) bytes") {
                try AESGCM.seal(Data("x".utf8), using: key, iv: Data(count: count), authenticating: Data())
            }
            #expect(error?.kind == "invalidParameter")
        }
    }

    @Test("Every bit flip of a freshly sealed message is rejected, for 12- and 16-byte IVs and both key sizes")
    func freshSealTampering() throws {
        for bits in [128, 256] {
            let key = SecureRandom.key(bitCount: bits)
            let aad = Data("table=items;row=7".utf8)
            let random = try AESGCM.seal(Data("secret".utf8), using: key, authenticating: aad)
            try expectEveryBitFlipRejected(random, key: key, aad: aad)
            let iv16 = try AESGCM.seal(
                Data("secret".utf8), using: key, iv: SecureRandom.bytes(count: 16), authenticating: aad)
            try expectEveryBitFlipRejected(iv16, key: key, aad: aad)
        }
    }

    @Test("Changing the length of ciphertext, AAD or IV is rejected")
    func lengthChanges() throws {
        let key = SecureRandom.key(bitCount: 128)
        let aad = Data("aad".utf8)
        let sealed = try AESGCM.seal(Data("hello, world".utf8), using: key, authenticating: aad)
        var shorter = sealed
        shorter.ciphertext = sealed.ciphertext.dropLast()
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(shorter, using: key, authenticating: aad) }
        var longer = sealed
        longer.ciphertext = sealed.ciphertext + Data([0])
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(longer, using: key, authenticating: aad) }
        var longerIV = sealed
        longerIV.iv = sealed.iv + Data([0])
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(longerIV, using: key, authenticating: aad) }
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(sealed, using: key, authenticating: Data()) }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, using: key, authenticating: aad + Data([0]))
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, using: key, authenticating: aad.dropLast())
        }
    }

    @Test("A tag that is not 16 bytes is rejected with invalidParameter")
    func badTagLength() throws {
        let key = SecureRandom.key(bitCount: 256)
        let sealed = try AESGCM.seal(Data("hello".utf8), using: key, authenticating: Data())
        for count in [0, 4, 12, 15, 17, 32] {
            var bad = sealed
            bad.tag = Data(sealed.tag.prefix(count)) + Data(count: max(0, count - 16))
            let error = #expect(throws: CryptoError.self, "tag of \(count) bytes") {
                try AESGCM.open(bad, using: key, authenticating: Data())
            }
            #expect(error?.kind == "invalidParameter")
        }
    }

    @Test("A wrong key is rejected with authenticationFailed")
    func wrongKey() throws {
        for bits in [128, 256] {
            let key = SecureRandom.key(bitCount: bits)
            let sealed = try AESGCM.seal(Data("hello".utf8), using: key, authenticating: Data("a".utf8))
            #expect(throws: CryptoError.authenticationFailed) {
                try AESGCM.open(sealed, using: SecureRandom.key(bitCount: bits), authenticating: Data("a".utf8))
            }
            let nearKey = SymmetricKey(data: key.bytes.flippingBit(bits - 1))
            #expect(throws: CryptoError.authenticationFailed) {
                try AESGCM.open(sealed, using: nearKey, authenticating: Data("a".utf8))
            }
        }
        // Same key bytes, other size: a 128-bit key that is the first half of the 256-bit one.
        let key256 = SecureRandom.key(bitCount: 256)
        let sealed = try AESGCM.seal(Data("hello".utf8), using: key256, authenticating: Data())
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, using: SymmetricKey(data: key256.bytes.prefix(16)), authenticating: Data())
        }
    }

    @Test("Keys other than 128 or 256 bits are rejected with invalidKeySize")
    func badKeySizes() throws {
        let good = try AESGCM.seal(Data("x".utf8), using: SecureRandom.key(bitCount: 128), authenticating: Data())
        for bytes in [0, 8, 15, 24, 31, 33, 64] {
            let key = SymmetricKey(data: Data(repeating: 3, count: bytes))
            #expect(throws: CryptoError.invalidKeySize(expected: [16, 32], actual: bytes)) {
                try AESGCM.seal(Data("x".utf8), using: key, authenticating: Data())
            }
            #expect(throws: CryptoError.invalidKeySize(expected: [16, 32], actual: bytes)) {
                try AESGCM.seal(Data("x".utf8), using: key, iv: Data(count: 12), authenticating: Data())
            }
            #expect(throws: CryptoError.invalidKeySize(expected: [16, 32], actual: bytes)) {
                try AESGCM.open(good, using: key, authenticating: Data())
            }
        }
    }

    @Test("Random IVs are 12 bytes and fresh; tags are 16 bytes")
    func randomIVs() throws {
        let key = SecureRandom.key(bitCount: 128)
        var ivs = Set<Data>()
        for _ in 0..<64 {
            let sealed = try AESGCM.seal(Data("same".utf8), using: key, authenticating: Data())
            #expect(sealed.iv.count == AESGCM.defaultIVByteCount)
            #expect(sealed.tag.count == AESGCM.tagByteCount)
            ivs.insert(sealed.iv)
        }
        #expect(ivs.count == 64)
    }

    @Test("Round trips: empty and 1 MiB plaintexts, both key sizes", arguments: [128, 256])
    func roundTrips(bits: Int) throws {
        let key = SecureRandom.key(bitCount: bits)
        for plaintext in [Data(), SecureRandom.bytes(count: 1 << 20)] {
            let aad = Data("column=secret".utf8)
            let sealed = try AESGCM.seal(plaintext, using: key, authenticating: aad)
            #expect(sealed.ciphertext.count == plaintext.count)
            #expect(try AESGCM.open(sealed, using: key, authenticating: aad) == plaintext)
        }
    }

    @Test("Open accepts fields that are slices of a larger buffer (as parsed from storage)")
    func slicedFields() throws {
        let key = SecureRandom.key(bitCount: 128)
        let sealed = try AESGCM.seal(Data("slice me".utf8), using: key, iv: SecureRandom.bytes(count: 16), authenticating: Data("ad".utf8))
        let buffer = Data([9, 9]) + sealed.iv + sealed.ciphertext + sealed.tag + Data("xxad".utf8)
        var offset = 2
        func take(_ n: Int) -> Data { defer { offset += n }; return buffer[offset..<(offset + n)] }
        let sliced = AESGCM.Sealed(iv: take(16), ciphertext: take(sealed.ciphertext.count), tag: take(16))
        let aad = buffer[(buffer.count - 2)...]
        #expect(try AESGCM.open(sliced, using: key, authenticating: aad) == Data("slice me".utf8))
    }
}

/// Asserts that flipping any one bit of IV, ciphertext, tag or associated data makes
/// `AESGCM.open` throw exactly ``CryptoError/authenticationFailed``, and that the untouched
/// message still opens.
func expectEveryBitFlipRejected(
    _ good: AESGCM.Sealed, key: SymmetricKey, aad: Data, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    _ = try AESGCM.open(good, using: key, authenticating: aad)
    for bit in 0..<(good.iv.count * 8) {
        var bad = good
        bad.iv = good.iv.flippingBit(bit)
        #expect(throws: CryptoError.authenticationFailed, "IV bit \(bit)", sourceLocation: sourceLocation) {
            try AESGCM.open(bad, using: key, authenticating: aad)
        }
    }
    for bit in 0..<(good.ciphertext.count * 8) {
        var bad = good
        bad.ciphertext = good.ciphertext.flippingBit(bit)
        #expect(throws: CryptoError.authenticationFailed, "ciphertext bit \(bit)", sourceLocation: sourceLocation) {
            try AESGCM.open(bad, using: key, authenticating: aad)
        }
    }
    for bit in 0..<(good.tag.count * 8) {
        var bad = good
        bad.tag = good.tag.flippingBit(bit)
        #expect(throws: CryptoError.authenticationFailed, "tag bit \(bit)", sourceLocation: sourceLocation) {
            try AESGCM.open(bad, using: key, authenticating: aad)
        }
    }
    for bit in 0..<(aad.count * 8) {
        #expect(throws: CryptoError.authenticationFailed, "AAD bit \(bit)", sourceLocation: sourceLocation) {
            try AESGCM.open(good, using: key, authenticating: aad.flippingBit(bit))
        }
    }
}
