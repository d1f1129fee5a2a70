import Crypto
import Foundation
import TresorCrypto

/// The recovery key: 32 random bytes shown to the user once, as 56 base32 characters in groups
/// of four (the last three bytes a checksum, so a mistyped key is told apart from a wrong one).
/// It is the only way back into the circle when every device is lost. It is never stored: what
/// the circle keeps is the public half of the signing identity it derives
/// (``TrustedDeviceList/recoveryKey``), with which a recovering device signs the list that adds it.
public struct RecoveryKey: Sendable {
    static let secretByteCount = 32
    static let checksumByteCount = 3
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    let secret: SymmetricKey

    /// A new random recovery key, made by the first device of a circle.
    public static func generate() -> RecoveryKey {
        RecoveryKey(secret: SecureRandom.key(bitCount: secretByteCount * 8))
    }

    init(secret: SymmetricKey) {
        self.secret = secret
    }

    /// Reads a recovery key as the user types it back: case, spaces and dashes do not matter.
    /// - Parameter text: the 56 characters ``text`` showed.
    /// - Throws: ``SyncError/invalidRecoveryKey(_:)`` for a wrong length, a character outside
    ///   the base32 alphabet, or a checksum that does not match (a typing mistake).
    public init(text: String) throws {
        let characters = text.uppercased().filter { $0 != " " && $0 != "-" }
        let expected = (Self.secretByteCount + Self.checksumByteCount) * 8 / 5
        guard characters.count == expected else {
            throw SyncError.invalidRecoveryKey("\(characters.count) characters where a recovery key has \(expected)")
        }
        var bits: UInt32 = 0, bitCount = 0
        var bytes = Data()
        for (position, character) in characters.enumerated() {
            guard let value = Self.alphabet.firstIndex(of: character) else {
                throw SyncError.invalidRecoveryKey("character \(position + 1) is not one of A–Z, 2–7")
            }
            bits = bits << 5 | UInt32(value)
            bitCount += 5
            if bitCount >= 8 {
                bitCount -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(bitCount)))
            }
        }
        let secret = bytes.prefix(Self.secretByteCount)
        guard Self.checksum(secret) == bytes.suffix(Self.checksumByteCount) else {
            throw SyncError.invalidRecoveryKey("the checksum does not match: a character is mistyped")
        }
        self.secret = SymmetricKey(data: secret)
    }

    static func checksum(_ secret: Data) -> Data {
        Digest.sha256(Data("tresor.sync.v1.recovery-key-checksum".utf8) + secret).prefix(checksumByteCount)
    }

    /// The key as shown to the user: 14 groups of four base32 characters joined by dashes.
    public var text: String {
        let bytes = secret.withUnsafeBytes { Data($0) }
        var characters: [Character] = []
        var bits: UInt32 = 0, bitCount = 0
        for byte in bytes + Self.checksum(bytes) {
            bits = bits << 8 | UInt32(byte)
            bitCount += 8
            while bitCount >= 5 {
                bitCount -= 5
                characters.append(Self.alphabet[Int(bits >> UInt32(bitCount) & 31)])
            }
        }
        return stride(from: 0, to: characters.count, by: 4).map { String(characters[$0..<min($0 + 4, characters.count)]) }
            .joined(separator: "-")
    }

    /// The recovery identity, derived from the secret alone so the user's typed key gives it
    /// back on any machine: its Ed25519 seed is HKDF-SHA256 of the secret (no salt, info
    /// `tresor.sync.v1.recovery-signing-key`, 32 bytes), its X25519 key the same with info
    /// `tresor.sync.v1.recovery-agreement-key`. It signs the list that adds a recovering device
    /// and receives every epoch's circle key, so a recovered device reads what the circle wrote.
    public var identity: LocalDevice {
        func seed(_ label: String) -> Data {
            KeyDerivation.hkdfSHA256(inputKeyMaterial: secret, salt: Data(), info: label).withUnsafeBytes { Data($0) }
        }
        // 32 bytes are always a valid Ed25519 seed and X25519 private key, and the name is valid.
        return try! LocalDevice(
            name: Self.identityName,
            signingKey: Curve25519.Signing.PrivateKey(rawRepresentation: seed("tresor.sync.v1.recovery-signing-key")),
            agreementKey: Curve25519.KeyAgreement.PrivateKey(rawRepresentation: seed("tresor.sync.v1.recovery-agreement-key")))
    }

    static let identityName = "recovery key"
}
