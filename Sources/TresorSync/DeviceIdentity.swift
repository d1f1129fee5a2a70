import Crypto
import Foundation
import TresorSyncProtocol

/// The public part of a device of a sync circle, as the trusted-device list carries it: its
/// name and its two public keys. Its ``deviceID`` is computed from the signing key, so a list
/// cannot pair a known id with another device's key.
public struct DeviceIdentity: Sendable, Hashable, Codable {
    /// What the user calls the device ("laptop"); shown with the fingerprint words.
    public let name: String
    /// The Ed25519 public key the device signs lists, key shares and records with (32 bytes).
    public let signingKey: Data
    /// The X25519 public key circle keys are shared to it under, by HPKE (32 bytes).
    public let agreementKey: Data
    /// The device's id: the first 16 bytes of SHA-256 of its signing public key, in lowercase hex
    /// (``SyncDeviceID``, the rule the server checks too). Derived once: a pull looks a record's
    /// writer up by it for every record.
    public let deviceID: String

    private enum CodingKeys: String, CodingKey {
        case name, signingKey, agreementKey
    }

    /// Makes an identity from its parts, checking that both keys are keys.
    /// - Parameters:
    ///   - name: the device's name (1 to 64 characters of text).
    ///   - signingKey: an Ed25519 public key, 32 bytes.
    ///   - agreementKey: an X25519 public key, 32 bytes.
    /// - Throws: ``SyncError/malformed(_:)`` when a key or the name is not one.
    public init(name: String, signingKey: Data, agreementKey: Data) throws {
        guard (1...64).contains(name.count), !name.contains(where: \.isNewline) else {
            throw SyncError.malformed("a device name is 1 to 64 characters on one line")
        }
        guard (try? Curve25519.Signing.PublicKey(rawRepresentation: signingKey)) != nil,
            (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: agreementKey)) != nil
        else { throw SyncError.malformed("a device's public keys are 32 bytes each") }
        self.name = name
        self.signingKey = Data(signingKey)
        deviceID = SyncDeviceID.of(signingKey: signingKey)
        self.agreementKey = Data(agreementKey)
    }

    /// Reads an identity from JSON (keys in base64), checking it as ``init(name:signingKey:agreementKey:)`` does.
    /// - Parameter decoder: the decoder.
    /// - Throws: ``SyncError/malformed(_:)``, or the decoder's error for a missing field.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            name: try container.decode(String.self, forKey: .name), signingKey: try container.decode(Data.self, forKey: .signingKey),
            agreementKey: try container.decode(Data.self, forKey: .agreementKey))
    }

    /// Whether `signature` is this device's over `message`.
    func isValidSignature(_ signature: Data, for message: Data) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: signingKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    func write(to writer: inout CanonicalWriter) {
        writer.append(name)
        writer.append(signingKey)
        writer.append(agreementKey)
    }

    static func read(from reader: inout CanonicalReader) throws -> DeviceIdentity {
        try DeviceIdentity(name: try reader.readString(), signingKey: try reader.readData(), agreementKey: try reader.readData())
    }
}

/// This device in a sync circle: its public ``identity`` and the two private keys behind it.
/// The private keys never leave the device: they are kept sealed in the home under a key that
/// only this home's keybag gives (``save(to:keybag:)``), never synced and never in a backup.
public struct LocalDevice: Sendable {
    public let identity: DeviceIdentity
    let signingKey: Curve25519.Signing.PrivateKey
    let agreementKey: Curve25519.KeyAgreement.PrivateKey

    /// A new device identity with fresh random keys, made when a device joins a circle.
    /// - Parameter name: the device's name (1 to 64 characters).
    /// - Returns: the device, not yet saved.
    /// - Throws: ``SyncError/malformed(_:)`` for a name that is not one.
    public static func create(name: String) throws -> LocalDevice {
        try LocalDevice(name: name, signingKey: Curve25519.Signing.PrivateKey(), agreementKey: Curve25519.KeyAgreement.PrivateKey())
    }

    init(name: String, signingKey: Curve25519.Signing.PrivateKey, agreementKey: Curve25519.KeyAgreement.PrivateKey) throws {
        self.signingKey = signingKey
        self.agreementKey = agreementKey
        identity = try DeviceIdentity(
            name: name, signingKey: signingKey.publicKey.rawRepresentation, agreementKey: agreementKey.publicKey.rawRepresentation)
    }

    /// This device's id (``DeviceIdentity/deviceID``).
    public var deviceID: String { identity.deviceID }

    func sign(_ message: Data) throws -> Data {
        try signingKey.signature(for: message)
    }
}
