import Crypto
import Foundation
import Testing
import TresorCrypto

// The whole `dh-ietf1024-sha256-aes128-cbc-pkcs7` chain on DH vector 2 (DiffieHellmanTests),
// whose shared secret begins with a zero byte: session key = HKDF-SHA256 of the 128-byte
// padded secret, no salt, empty info, 16 bytes; then one secret in AES-128-CBC with PKCS#7
// under a fixed IV (the first 16 bytes of SHA-256("tresor secret-service iv")). Produced on
// this machine with pyca/cryptography 48 (HKDF, PKCS7, AES-CBC) by
// Tests/Fixtures/secret-service-session-vectors.py.
private enum EndToEnd {
    static let exchange = dhVectors[1]
    static let sessionKey = "ead57b07ebc1abcb47ad322c6ee5e2fa"
    /// HKDF of the same secret without its leading zero byte: the key a client that forgot the
    /// padding would derive.
    static let keyFromUnpaddedSecret = "24c2a2337fa0e92827b53f3ebc7b940b"
    static let iv = "01d16b6a8c6c3aa97d352788323faba6"
    static let secret = "correct horse battery staple"
    static let ciphertext = "f7530d0b004dee3f5c1d52f3c94aa59d7df570f65c113b8a8dd91c6e41dc745d"
}

@Suite("Secret Service session (dh-ietf1024-sha256-aes128-cbc-pkcs7)")
struct SecretServiceSessionTests {
    @Test("A fixed exchange gives the pinned session key and ciphertext, from both sides")
    func endToEnd() throws {
        let service = try DiffieHellman.KeyPair(privateExponent: Data(hex: EndToEnd.exchange.a))
        let client = try DiffieHellman.KeyPair(privateExponent: Data(hex: EndToEnd.exchange.b))
        // The client sends its key minimally, as the specification's example does: 127 bytes.
        let clientKey = Data(client.publicKey.drop(while: { $0 == 0 }))
        #expect(clientKey.count == 127)
        let serviceKey = try KeyDerivation.secretServiceSessionKey(
            sharedSecret: service.sharedSecret(peerPublicKey: clientKey))
        let clientSessionKey = try KeyDerivation.secretServiceSessionKey(
            sharedSecret: client.sharedSecret(peerPublicKey: service.publicKey))
        #expect(serviceKey.bitCount == 128)
        #expect(serviceKey.bytes.hex == EndToEnd.sessionKey)
        #expect(clientSessionKey.bytes == serviceKey.bytes)

        let ciphertext = try AESCBC.encrypt(Data(EndToEnd.secret.utf8), using: serviceKey, iv: Data(hex: EndToEnd.iv))
        #expect(ciphertext.hex == EndToEnd.ciphertext)
        let opened = try AESCBC.decrypt(Data(hex: EndToEnd.ciphertext), using: clientSessionKey, iv: Data(hex: EndToEnd.iv))
        #expect(String(decoding: opened, as: UTF8.self) == EndToEnd.secret)
    }

    @Test("The session key is HKDF of the padded secret: without its leading zero the key differs")
    func paddingMatters() throws {
        let padded = Data(hex: EndToEnd.exchange.sharedSecret)
        #expect(padded.first == 0)
        let unpadded = Data(padded.dropFirst())
        let unpaddedKey = KeyDerivation.hkdfSHA256(
            inputKeyMaterial: SymmetricKey(data: unpadded), salt: Data(), info: Data(), outputByteCount: 16)
        #expect(unpaddedKey.bytes.hex == EndToEnd.keyFromUnpaddedSecret)
        #expect(try KeyDerivation.secretServiceSessionKey(sharedSecret: padded).bytes.hex == EndToEnd.sessionKey)
        // So a secret of any other length is refused rather than silently keyed.
        for count in [0, 16, 127, 129, 256] {
            let error = #expect(throws: CryptoError.self, "\(count) bytes") {
                try KeyDerivation.secretServiceSessionKey(sharedSecret: Data(repeating: 1, count: count))
            }
            #expect(error?.kind == "invalidParameter", "\(count) bytes")
        }
    }

    @Test("Fresh sessions: both sides derive one key, and a secret crosses with a random IV")
    func freshSession() throws {
        let service = DiffieHellman.KeyPair(), client = DiffieHellman.KeyPair()
        let serviceKey = try KeyDerivation.secretServiceSessionKey(
            sharedSecret: service.sharedSecret(peerPublicKey: client.publicKey))
        let clientKey = try KeyDerivation.secretServiceSessionKey(
            sharedSecret: client.sharedSecret(peerPublicKey: service.publicKey))
        #expect(serviceKey.bytes == clientKey.bytes)
        let secret = Data("s3cr3t".utf8)
        let sent = try AESCBC.encrypt(secret, using: clientKey)
        #expect(try AESCBC.decrypt(sent.ciphertext, using: serviceKey, iv: sent.iv) == secret)
    }
}
