import Crypto
import FoundationEssentials
import TresorCrypto
import TresorDBus

/// The `dh-ietf1024-sha256-aes128-cbc-pkcs7` transfer encryption of one session: a
/// Diffie-Hellman agreement in the RFC 2409 Second Oakley Group, HKDF-SHA256 to a 16-byte key,
/// then AES-128-CBC with PKCS#7 padding and a random IV per secret (TresorCrypto does each step).
struct SessionEncryption: Sendable {
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// This side's public key, sent back to the client.
    let publicKey: [UInt8]
    private let key: SymmetricKey

    /// Agrees a key with a client. - Throws: `InvalidArgs` for a public key the group refuses
    /// (0, 1, p−1, ≥ p, over 512 bytes).
    init(peerPublicKey: [UInt8]) throws {
        let pair = DiffieHellman.KeyPair()
        do {
            let shared = try pair.sharedSecret(peerPublicKey: Data(peerPublicKey))
            key = try KeyDerivation.secretServiceSessionKey(sharedSecret: shared)
        } catch let error as TresorCrypto.CryptoError {
            throw DBusError.invalidArguments("the client's public key is refused: \(error)")
        }
        publicKey = Array(pair.publicKey)
    }

    /// A secret sealed for the client: the IV (the secret's "parameters") and the ciphertext.
    func seal(_ plaintext: [UInt8]) throws -> (parameters: [UInt8], ciphertext: [UInt8]) {
        let sealed = try AESCBC.encrypt(plaintext, using: key)
        return (Array(sealed.iv), Array(sealed.ciphertext))
    }

    /// A secret the client sealed. - Throws: `InvalidArgs` when it does not open (wrong IV
    /// size, length or padding).
    func open(_ ciphertext: [UInt8], parameters: [UInt8]) throws -> [UInt8] {
        do {
            return Array(try AESCBC.decrypt(ciphertext, using: key, iv: Data(parameters)))
        } catch {
            throw DBusError.invalidArguments("the secret does not decrypt with this session's key")
        }
    }
}
