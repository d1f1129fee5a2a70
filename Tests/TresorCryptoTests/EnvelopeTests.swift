import Crypto
import Foundation
import Testing
import TresorCrypto

/// Builds an envelope by hand, following the layout documented in Envelope.swift and
/// docs/FORMAT.md: `[version, algorithm, n] + IV(n) + ciphertext + tag(16)`, with the three
/// header bytes prepended to the caller's associated data.
func handMadeEnvelope(
    _ plaintext: Data, key: SymmetricKey, iv: Data, aad: Data = Data(),
    version: UInt8 = 1, algorithm: UInt8? = nil, bindHeader: Bool = true
) throws -> Data {
    let algorithm = algorithm ?? (key.bitCount == 128 ? 1 : 2)
    let header = Data([version, algorithm, UInt8(iv.count)])
    let sealed = try AESGCM.seal(plaintext, using: key, iv: iv, authenticating: bindHeader ? header + aad : aad)
    return header + sealed.iv + sealed.ciphertext + sealed.tag
}

/// What `Envelope.open` must throw for `envelope`, a one-bit corruption of a good envelope
/// sealed under a key of `keyBits` bits.
func expectedError(forCorrupted envelope: Data, keyBits: Int) -> CryptoError {
    let bytes = [UInt8](envelope)
    if bytes[0] != 1 { return .unsupportedVersion(bytes[0]) }
    guard bytes[1] == 1 || bytes[1] == 2 else { return .malformedEnvelope("") }
    let ivCount = Int(bytes[2])
    if ivCount < 12 || bytes.count < 3 + ivCount + 16 { return .malformedEnvelope("") }
    let algorithmBits = bytes[1] == 1 ? 128 : 256
    if algorithmBits != keyBits { return .invalidKeySize(expected: [algorithmBits / 8], actual: keyBits / 8) }
    return .authenticationFailed
}

/// Compares errors, ignoring the human-readable reason of `malformedEnvelope`.
func sameError(_ a: CryptoError?, _ b: CryptoError) -> Bool {
    guard let a else { return false }
    if case .malformedEnvelope = b { return a.kind == "malformedEnvelope" }
    return a == b
}

@Suite("Envelope")
struct EnvelopeTests {
    @Test("Layout: [1, algorithm, 12] + 12-byte IV + ciphertext + 16-byte tag, header bound into the AAD")
    func layout() throws {
        for (bits, algorithm) in [(128, UInt8(1)), (256, UInt8(2))] {
            let key = SecureRandom.key(bitCount: bits)
            let plaintext = Data("five!".utf8)
            let aad = Data("row 42".utf8)
            let envelope = try Envelope.seal(plaintext, using: key, authenticating: aad)
            let bytes = [UInt8](envelope)
            #expect(bytes.count == 3 + 12 + plaintext.count + 16)
            #expect(bytes[0] == 1)
            #expect(bytes[0] == Envelope.currentVersion)
            #expect(bytes[1] == algorithm)
            #expect(bytes[2] == 12)
            // Open the parts with the plain AESGCM API, AAD = header || caller AAD.
            let sealed = AESGCM.Sealed(
                iv: Data(bytes[3..<15]), ciphertext: Data(bytes[15..<(15 + plaintext.count)]),
                tag: Data(bytes[(bytes.count - 16)...]))
            let header = Data(bytes[0..<3])
            #expect(try AESGCM.open(sealed, using: key, authenticating: header + aad) == plaintext)
            #expect(throws: CryptoError.authenticationFailed) {
                try AESGCM.open(sealed, using: key, authenticating: aad)
            }
        }
    }

    @Test("Envelope.Algorithm raw values are the documented format bytes")
    func algorithmBytes() {
        #expect(Envelope.Algorithm.aes128GCM.rawValue == 1)
        #expect(Envelope.Algorithm.aes256GCM.rawValue == 2)
        #expect(Envelope.Algorithm(rawValue: 0) == nil)
        #expect(Envelope.Algorithm(rawValue: 3) == nil)
    }

    @Test("Round trips: empty and 1 MiB plaintexts, with and without AAD, both key sizes", arguments: [128, 256])
    func roundTrips(bits: Int) throws {
        let key = SecureRandom.key(bitCount: bits)
        for plaintext in [Data(), SecureRandom.bytes(count: 1 << 20)] {
            let plain = try Envelope.seal(plaintext, using: key)
            #expect(plain.count == 3 + 12 + plaintext.count + 16)
            #expect(try Envelope.open(plain, using: key) == plaintext)
            let aad = Data("notes/7/body".utf8)
            let bound = try Envelope.seal(plaintext, using: key, authenticating: aad)
            #expect(try Envelope.open(bound, using: key, authenticating: aad) == plaintext)
        }
    }

    @Test("Every single-bit change of a small envelope is rejected with the specific error", arguments: [128, 256])
    func exhaustiveBitFlips(bits: Int) throws {
        let key = SecureRandom.key(bitCount: bits)
        let aad = Data("ad".utf8)
        let envelope = try Envelope.seal(Data("abc".utf8), using: key, authenticating: aad)
        try expectEveryEnvelopeBitFlipRejected(envelope, key: key, aad: aad)
    }

    @Test("Every single-bit change of a hand-made 16-byte-IV envelope is rejected with the specific error")
    func exhaustiveBitFlipsLongIV() throws {
        let key = SecureRandom.key(bitCount: 128)
        let aad = Data("ad".utf8)
        let envelope = try handMadeEnvelope(Data("abc".utf8), key: key, iv: SecureRandom.bytes(count: 16), aad: aad)
        #expect(try Envelope.open(envelope, using: key, authenticating: aad) == Data("abc".utf8))
        try expectEveryEnvelopeBitFlipRejected(envelope, key: key, aad: aad)
    }

    @Test("Flipping any bit of the caller's AAD, or dropping/adding AAD, is rejected")
    func aadTampering() throws {
        let key = SecureRandom.key(bitCount: 256)
        let aad = Data("items/secret/v1".utf8)
        let envelope = try Envelope.seal(Data("s3cr3t".utf8), using: key, authenticating: aad)
        for bit in 0..<(aad.count * 8) {
            #expect(throws: CryptoError.authenticationFailed, "AAD bit \(bit)") {
                try Envelope.open(envelope, using: key, authenticating: aad.flippingBit(bit))
            }
        }
        #expect(throws: CryptoError.authenticationFailed) { try Envelope.open(envelope, using: key) }
        #expect(throws: CryptoError.authenticationFailed) {
            try Envelope.open(envelope, using: key, authenticating: aad + Data([0]))
        }
        let unbound = try Envelope.seal(Data("s3cr3t".utf8), using: key)
        #expect(throws: CryptoError.authenticationFailed) {
            try Envelope.open(unbound, using: key, authenticating: aad)
        }
    }

    @Test("A wrong key of the right size is rejected with authenticationFailed", arguments: [128, 256])
    func wrongKey(bits: Int) throws {
        let key = SecureRandom.key(bitCount: bits)
        let envelope = try Envelope.seal(Data("hello".utf8), using: key)
        #expect(throws: CryptoError.authenticationFailed) {
            try Envelope.open(envelope, using: SecureRandom.key(bitCount: bits))
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try Envelope.open(envelope, using: SymmetricKey(data: key.bytes.flippingBit(0)))
        }
    }

    @Test("An AES-128 envelope does not open with an AES-256 key, nor the reverse")
    func keySizeMismatch() throws {
        let key128 = SecureRandom.key(bitCount: 128)
        let key256 = SecureRandom.key(bitCount: 256)
        let env128 = try Envelope.seal(Data("hello".utf8), using: key128)
        let env256 = try Envelope.seal(Data("hello".utf8), using: key256)
        #expect(throws: CryptoError.invalidKeySize(expected: [16], actual: 32)) { try Envelope.open(env128, using: key256) }
        #expect(throws: CryptoError.invalidKeySize(expected: [32], actual: 16)) { try Envelope.open(env256, using: key128) }
        // Even a 256-bit key whose first half is the right 128-bit key.
        let padded = SymmetricKey(data: key128.bytes + key128.bytes)
        #expect(throws: CryptoError.self) { try Envelope.open(env128, using: padded) }
        // An envelope whose header was relabelled to the other algorithm (with a matching key size)
        // fails authentication.
        var relabelled = env128
        relabelled[1] = 2
        #expect(throws: CryptoError.authenticationFailed) { try Envelope.open(relabelled, using: padded) }
    }

    @Test("Keys other than 128 or 256 bits are rejected with invalidKeySize")
    func badKeySizes() throws {
        let env128 = try Envelope.seal(Data("hello".utf8), using: SecureRandom.key(bitCount: 128))
        for bytes in [0, 8, 24, 31, 64] {
            let key = SymmetricKey(data: Data(repeating: 5, count: bytes))
            #expect(throws: CryptoError.invalidKeySize(expected: [16, 32], actual: bytes)) {
                try Envelope.seal(Data("x".utf8), using: key)
            }
            #expect(throws: CryptoError.invalidKeySize(expected: [16], actual: bytes)) {
                try Envelope.open(env128, using: key)
            }
        }
    }

    @Test("A truncated envelope fails at every length, with the specific error, never a crash", arguments: [128, 256])
    func truncationAtEveryLength(bits: Int) throws {
        let key = SecureRandom.key(bitCount: bits)
        let aad = Data("ad".utf8)
        let envelope = try Envelope.seal(Data("some plaintext".utf8), using: key, authenticating: aad)
        for length in 0..<envelope.count {
            let truncated = envelope.prefix(length)
            let error = #expect(throws: CryptoError.self, "length \(length)") {
                try Envelope.open(truncated, using: key, authenticating: aad)
            }
            if length < 3 + 12 + 16 {
                #expect(error?.kind == "malformedEnvelope", "length \(length): \(String(describing: error))")
            } else {
                #expect(error == .authenticationFailed, "length \(length): \(String(describing: error))")
            }
        }
        // Appending bytes is rejected too.
        #expect(throws: CryptoError.authenticationFailed) {
            try Envelope.open(envelope + Data([0]), using: key, authenticating: aad)
        }
    }

    @Test("Readers accept any IV of 12 bytes or more", arguments: [12, 13, 16, 32, 60, 255])
    func readsLongIVs(ivCount: Int) throws {
        for bits in [128, 256] {
            let key = SecureRandom.key(bitCount: bits)
            let aad = Data("apple-notes-import".utf8)
            let plaintext = Data("locked note body".utf8)
            let envelope = try handMadeEnvelope(plaintext, key: key, iv: SecureRandom.bytes(count: ivCount), aad: aad)
            #expect(envelope[2] == UInt8(ivCount))
            #expect(try Envelope.open(envelope, using: key, authenticating: aad) == plaintext)
            // Same but with the header left out of the AAD: the binding is required.
            let unbound = try handMadeEnvelope(
                plaintext, key: key, iv: SecureRandom.bytes(count: ivCount), aad: aad, bindHeader: false)
            #expect(throws: CryptoError.authenticationFailed) {
                try Envelope.open(unbound, using: key, authenticating: aad)
            }
        }
    }

    @Test("An IV length byte below 12 is rejected as malformed", arguments: [0, 1, 8, 11])
    func shortIVLengthByte(ivLength: Int) throws {
        let key = SecureRandom.key(bitCount: 128)
        // A well-formed 12-byte-IV envelope whose length byte is then rewritten.
        var envelope = try Envelope.seal(Data(repeating: 0x41, count: 40), using: key)
        envelope[2] = UInt8(ivLength)
        let error = #expect(throws: CryptoError.self) { try Envelope.open(envelope, using: key) }
        #expect(error?.kind == "malformedEnvelope")
    }

    @Test("Unknown versions are rejected with unsupportedVersion", arguments: [0, 2, 3, 0x81, 255])
    func unknownVersions(version: Int) throws {
        let key = SecureRandom.key(bitCount: 128)
        var envelope = try Envelope.seal(Data("x".utf8), using: key)
        envelope[0] = UInt8(version)
        #expect(throws: CryptoError.unsupportedVersion(UInt8(version))) { try Envelope.open(envelope, using: key) }
        // Also when the envelope was authenticated with that header (a future writer).
        let future = try handMadeEnvelope(
            Data("x".utf8), key: key, iv: SecureRandom.bytes(count: 12), version: UInt8(version))
        #expect(throws: CryptoError.unsupportedVersion(UInt8(version))) { try Envelope.open(future, using: key) }
        // Version is checked before anything else, even on a three-byte input.
        #expect(throws: CryptoError.unsupportedVersion(UInt8(version))) {
            try Envelope.open(Data([UInt8(version), 1, 12]), using: key)
        }
    }

    @Test("Unknown algorithm bytes are rejected as malformed", arguments: [0, 3, 4, 0x80, 255])
    func unknownAlgorithms(algorithm: Int) throws {
        let key = SecureRandom.key(bitCount: 128)
        let envelope = try handMadeEnvelope(
            Data("x".utf8), key: key, iv: SecureRandom.bytes(count: 12), algorithm: UInt8(algorithm))
        let error = #expect(throws: CryptoError.self) { try Envelope.open(envelope, using: key) }
        #expect(error?.kind == "malformedEnvelope")
    }

    @Test("An envelope that is a slice of a larger buffer opens")
    func openFromSlice() throws {
        let key = SecureRandom.key(bitCount: 256)
        let envelope = try Envelope.seal(Data("in a page".utf8), using: key, authenticating: Data("p".utf8))
        let page = Data(repeating: 0xEE, count: 7) + envelope + Data(repeating: 0xFF, count: 5)
        let slice = page[7..<(7 + envelope.count)]
        #expect(slice.startIndex == 7)
        #expect(try Envelope.open(slice, using: key, authenticating: Data("p".utf8)) == Data("in a page".utf8))
        // A slice that is one byte off either way is rejected.
        #expect(throws: CryptoError.self) {
            try Envelope.open(page[6..<(6 + envelope.count)], using: key, authenticating: Data("p".utf8))
        }
        #expect(throws: CryptoError.self) {
            try Envelope.open(page[8..<(8 + envelope.count)], using: key, authenticating: Data("p".utf8))
        }
    }

    @Test("sealParts: header ‖ body is an envelope that opens, also from a slice of a file")
    func sealPartsJoinToAnEnvelope() throws {
        for bits in [128, 256] {
            let key = SecureRandom.key(bitCount: bits)
            let aad = Data("attachments/a/chunk/0/final".utf8)
            for count in [0, 1, 1 << 20] {
                let plaintext = SecureRandom.bytes(count: count)
                let (header, body) = try Envelope.sealParts(plaintext, using: key, authenticating: aad)
                #expect(header == Data([1, bits == 128 ? 1 : 2, 12]))
                #expect(body.count == 12 + count + 16)
                let file = Data("prefix".utf8) + header + body
                let envelope = file[6...]
                #expect(try Envelope.open(envelope, using: key, authenticating: aad) == plaintext)
                #expect(try Envelope.open(header + body, using: key, authenticating: aad) == plaintext)
                #expect(throws: CryptoError.authenticationFailed) { try Envelope.open(header + body, using: key, authenticating: Data()) }
                // The header is authenticated: the body under another IV length does not open.
                #expect(throws: CryptoError.self) { try Envelope.open(Data([1, header[1], 13]) + body, using: key, authenticating: aad) }
            }
        }
    }

    @Test("Sealing the same plaintext twice gives different envelopes (fresh IV)")
    func freshIVs() throws {
        let key = SecureRandom.key(bitCount: 128)
        let a = try Envelope.seal(Data("same".utf8), using: key)
        let b = try Envelope.seal(Data("same".utf8), using: key)
        #expect(a != b)
        #expect(a[3..<15] != b[3..<15])
    }
}

/// Flips every bit of `envelope` in turn and checks `Envelope.open` throws the error the
/// format calls for (see ``expectedError(forCorrupted:keyBits:)``).
func expectEveryEnvelopeBitFlipRejected(
    _ envelope: Data, key: SymmetricKey, aad: Data, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    _ = try Envelope.open(envelope, using: key, authenticating: aad)
    var checked = 0
    for bit in 0..<(envelope.count * 8) {
        let corrupted = envelope.flippingBit(bit)
        let expected = expectedError(forCorrupted: corrupted, keyBits: key.bitCount)
        let error = #expect(throws: CryptoError.self, "bit \(bit)", sourceLocation: sourceLocation) {
            try Envelope.open(corrupted, using: key, authenticating: aad)
        }
        #expect(
            sameError(error, expected), "bit \(bit) (byte \(bit / 8)): got \(String(describing: error)), expected \(expected)",
            sourceLocation: sourceLocation)
        checked += 1
    }
    #expect(checked == envelope.count * 8, sourceLocation: sourceLocation)
}
