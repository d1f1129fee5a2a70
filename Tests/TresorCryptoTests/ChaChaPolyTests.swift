import Crypto
import Foundation
import Testing
import TresorCrypto

/// ChaCha20-Poly1305 against RFC 8439 §2.8.2's AEAD example.
@Suite struct ChaChaPolyTests {
    let key = SymmetricKey(hex: "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
    let nonce = Data(hex: "07000000 4041424344454647")
    let associatedData = Data(hex: "50515253c0c1c2c3c4c5c6c7")
    let plaintext = Data(
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
    let sealed = Data(
        hex: """
            d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6\
            3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36\
            92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc\
            3ff4def08e4b7a9de576d26586cec64b6116\
            1ae10b594f09e26a7e902ecbd0600691
            """)

    @Test func rfc8439SealsToThePublishedCiphertextAndTag() throws {
        #expect(try ChaChaPoly1305.seal(plaintext, using: key, nonce: nonce, authenticating: associatedData) == sealed)
    }

    @Test func rfc8439Opens() throws {
        #expect(try ChaChaPoly1305.open(sealed, using: key, nonce: nonce, authenticating: associatedData) == plaintext)
    }

    @Test func anyChangedBitOrNonceIsRefused() {
        for bit in [0, 8 * 57, sealed.count * 8 - 1] {
            #expect(throws: CryptoError.authenticationFailed) {
                try ChaChaPoly1305.open(sealed.flippingBit(bit), using: key, nonce: nonce, authenticating: associatedData)
            }
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try ChaChaPoly1305.open(sealed, using: key, nonce: nonce.flippingBit(0), authenticating: associatedData)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try ChaChaPoly1305.open(Data(count: 15), using: key, nonce: nonce)
        }
    }

    @Test func wrongSizesAreClearErrors() {
        #expect(throws: CryptoError.invalidKeySize(expected: [32], actual: 16)) {
            try ChaChaPoly1305.seal(plaintext, using: SymmetricKey(size: .bits128), nonce: nonce)
        }
        #expect(throws: CryptoError.self) { try ChaChaPoly1305.seal(plaintext, using: key, nonce: Data(count: 8)) }
    }
}
