import FoundationEssentials
import TresorDBus

/// The `dh-ietf1024-sha256-aes128-cbc-pkcs7` transfer encryption of one session.
struct SessionEncryption: Sendable {
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    let publicKey: [UInt8]

    init(peerPublicKey: [UInt8]) throws {
        throw DBusError("org.freedesktop.DBus.Error.NotSupported", "not yet")
    }

    func seal(_ plaintext: [UInt8]) throws -> (parameters: [UInt8], ciphertext: [UInt8]) {
        throw DBusError("org.freedesktop.DBus.Error.NotSupported", "not yet")
    }

    func open(_ ciphertext: [UInt8], parameters: [UInt8]) throws -> [UInt8] {
        throw DBusError("org.freedesktop.DBus.Error.NotSupported", "not yet")
    }
}
