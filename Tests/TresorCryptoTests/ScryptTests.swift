import Foundation
import Testing
import TresorCrypto

/// scrypt against RFC 7914 §12's published vectors (the third, N = 2²⁰ with 1 GiB, is left
/// out for time; its parameters are still accepted by ``Scrypt/maximumLog2Rounds``).
@Suite struct ScryptTests {
    @Test func rfc7914PasswordNaCl() throws {
        let key = try Scrypt.deriveKey(
            from: Data("password".utf8), salt: Data("NaCl".utf8), log2Rounds: 10, blockSize: 8, parallelism: 16,
            outputByteCount: 64)
        #expect(
            key.bytes.hex == """
                fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162\
                2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640
                """)
    }

    @Test func rfc7914PleaseLetMeIn() throws {
        let key = try Scrypt.deriveKey(
            from: Data("pleaseletmein".utf8), salt: Data("SodiumChloride".utf8), log2Rounds: 14, outputByteCount: 64)
        #expect(
            key.bytes.hex == """
                7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2\
                d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887
                """)
    }

    @Test(arguments: [0, -1, Scrypt.maximumLog2Rounds + 1, 64])
    func absurdWorkFactorsAreRefusedBeforeAnyMemoryIsTaken(log2Rounds: Int) {
        #expect(throws: CryptoError.self) {
            try Scrypt.deriveKey(from: Data("p".utf8), salt: Data("s".utf8), log2Rounds: log2Rounds)
        }
    }

    @Test func emptyPassphraseOrSaltIsRefusedNotCrashed() {
        #expect(throws: CryptoError.self) { try Scrypt.deriveKey(from: Data(), salt: Data("s".utf8), log2Rounds: 1) }
        #expect(throws: CryptoError.self) { try Scrypt.deriveKey(from: Data("p".utf8), salt: Data(), log2Rounds: 1) }
    }
}
