import Crypto
import Foundation
import TresorCrypto

/// Our side of gcr's secret exchange, protocol `sx-aes-1`: how the desktop's prompter hands a
/// typed password over D-Bus without it lying in plain text in the bus's buffers or a monitor's
/// log. Diffie-Hellman in RFC 3526's 1536-bit group, HKDF-SHA256 (no salt, no info) of the
/// shared secret to a 16-byte key, AES-128-CBC with PKCS#7 padding and a random IV — each step
/// TresorCrypto's. Like the Secret Service's session it stops a passive reader, not an active
/// attacker on the bus.
///
/// Messages are GLib key files: `[sx-aes-1]` then `public=`, and with a secret `secret=` and
/// `iv=`, each base64. The prompter begins (its public key); we answer with ours; its last
/// message carries the password sealed to the agreed key.
struct SecretExchange {
    static let protocolName = "sx-aes-1"

    private let pair: DiffieHellman.KeyPair
    private let key: SymmetricKey

    /// Agrees a key with the prompter's first message.
    /// - Parameter begun: the prompter's message, with its public key.
    /// - Throws: ``PrompterError/protocolFailure(_:)`` for a message that is not `sx-aes-1` or a
    ///   public key the group refuses.
    init(begun: String) throws {
        try self.init(begun: begun, drawing: { DiffieHellman.KeyPair(group: .modp1536) })
    }

    /// Agrees a key with key pairs from `draw` (a fixed one in known-answer tests).
    init(begun: String, drawing draw: () throws -> DiffieHellman.KeyPair) throws {
        let fields = try Self.fields(of: begun)
        guard let peer = fields["public"] else { throw PrompterError.protocolFailure("the prompter's exchange has no public key") }
        // gcr 3 hashes the shared secret without its leading zero bytes, gcr 4 with them: a pair
        // whose secret starts with zero (1 in 256) is drawn again, so both derive the same key.
        for _ in 0..<64 {
            let pair = try draw()
            let shared: Data
            do {
                shared = try pair.sharedSecret(peerPublicKey: peer)
            } catch {
                throw PrompterError.protocolFailure("the prompter's public key is refused: \(error)")
            }
            guard shared.first != 0 else { continue }
            self.pair = pair
            key = KeyDerivation.hkdfSHA256(inputKeyMaterial: SymmetricKey(data: shared), salt: Data(), info: Data(), outputByteCount: 16)
            return
        }
        throw PrompterError.protocolFailure("no key pair gave a shared secret without a leading zero byte")
    }

    /// Our answer: our public key, no secret.
    var answer: String {
        "[\(Self.protocolName)]\npublic=\(pair.publicKey.base64EncodedString())\n"
    }

    /// The secret the prompter sealed in `message`; nil when the message carries none.
    /// - Throws: ``PrompterError/protocolFailure(_:)`` when it does not open with the agreed key.
    func secret(in message: String) throws -> SecretText? {
        let fields = try Self.fields(of: message)
        guard let sealed = fields["secret"] else { return nil }
        guard let iv = fields["iv"] else { throw PrompterError.protocolFailure("the prompter's secret has no iv") }
        do {
            return SecretText(utf8: try AESCBC.decrypt(sealed, using: key, iv: iv))
        } catch {
            throw PrompterError.protocolFailure("the prompter's secret does not open with the agreed key")
        }
    }

    /// The base64 fields of an `sx-aes-1` key file. Only that group is read; comments and blank
    /// lines are skipped as GLib skips them.
    private static func fields(of message: String) throws -> [String: Data] {
        var fields: [String: Data] = [:]
        var group: Substring?
        for line in message.split(whereSeparator: \.isNewline) {
            let line = line.drop(while: { $0 == " " || $0 == "\t" })
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = line.dropFirst().dropLast()
                continue
            }
            guard group == Substring(protocolName), let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard let bytes = Data(base64Encoded: value) else {
                throw PrompterError.protocolFailure("the prompter's exchange field \(name.prefix(20)) is not base64")
            }
            fields[name] = bytes
        }
        guard message.contains("[\(protocolName)]") else {
            throw PrompterError.protocolFailure("the prompter does not speak the \(protocolName) secret exchange")
        }
        return fields
    }
}
