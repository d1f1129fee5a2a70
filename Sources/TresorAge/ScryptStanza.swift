import Crypto
import Foundation
import TresorCrypto

/// The passphrase recipient of age v1: the file key sealed under scrypt(passphrase), with the
/// salt and work factor in the stanza's arguments.
public enum ScryptStanza {
    /// The work factor Tresor writes, `log2(N)` with r = 8, p = 1: the one `age -p` uses,
    /// 256 MiB and about a second of one core (BENCHMARKS.md measures it).
    public static let defaultWorkFactor = 18
    /// The largest work factor a reader accepts: anything above asks for more than 1 GiB.
    public static let maximumWorkFactor = Scrypt.maximumLog2Rounds

    static let type = "scrypt"
    static let saltByteCount = 16
    /// The sealed file key: 16 bytes and ChaCha20-Poly1305's tag.
    static let fileKeyBodyByteCount = 32
    static let saltLabel = Data("age-encryption.org/v1/scrypt".utf8)

    /// A stanza holding `fileKey` for `passphrase`.
    static func seal(fileKey: SymmetricKey, passphrase: SecretText, workFactor: Int, salt: Data) throws -> AgeStanza {
        let key = try passphrase.withUnsafeBytes { try Scrypt.deriveKey(from: $0, salt: saltLabel + salt, log2Rounds: workFactor) }
        let body = try ChaChaPoly1305.seal(fileKey.withUnsafeBytes { Data($0) }, using: key, nonce: Data(count: 12))
        return AgeStanza(arguments: [type, AgeBase64.encode(salt), String(workFactor)], body: body)
    }

    /// The file key in `stanza`, which must be the header's only stanza.
    static func open(_ stanza: AgeStanza, passphrase: SecretText, maximumWorkFactor: Int) throws -> SymmetricKey {
        guard stanza.arguments.count == 3 else { throw AgeError.malformedHeader("a scrypt stanza has a salt and a work factor") }
        guard let salt = AgeBase64.decode(Substring(stanza.arguments[1])), salt.count == saltByteCount else {
            throw AgeError.malformedHeader("the scrypt salt is not 16 bytes of canonical Base64")
        }
        let factorText = stanza.arguments[2]
        guard let first = factorText.first, first != "0", factorText.count <= 2, factorText.allSatisfy(\.isASCIIDigit),
            let workFactor = Int(factorText)
        else { throw AgeError.malformedHeader("the scrypt work factor is not a decimal number from 1 to 99") }
        guard workFactor <= maximumWorkFactor else {
            throw AgeError.workFactorTooHigh(workFactor, maximum: maximumWorkFactor)
        }
        guard stanza.body.count == fileKeyBodyByteCount else { throw AgeError.malformedHeader("a scrypt stanza's body is 32 bytes") }
        guard passphrase.byteCount > 0 else { throw AgeError.wrongPassphrase }
        let key = try passphrase.withUnsafeBytes { try Scrypt.deriveKey(from: $0, salt: saltLabel + salt, log2Rounds: workFactor) }
        do {
            return SymmetricKey(data: try ChaChaPoly1305.open(stanza.body, using: key, nonce: Data(count: 12)))
        } catch {
            throw AgeError.wrongPassphrase
        }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
