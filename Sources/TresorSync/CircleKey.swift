import Crypto
import Foundation
import TresorCrypto

/// One epoch's circle key: a random 256-bit key from which every record of that epoch gets its
/// own key (``SealedRecord``). A new epoch starts at each removal, shared to the remaining
/// devices only, so what is written after a removal does not open with what the removed device holds.
public struct CircleKey: Sendable {
    /// The epoch, as the trusted-device list names it.
    public let epoch: UInt64
    let key: SymmetricKey

    /// A new random key for `epoch`.
    /// - Parameter epoch: the epoch of the list that starts it (1 for a new circle).
    /// - Returns: the key, to be shared with ``share(to:account:from:)``.
    public static func generate(epoch: UInt64) -> CircleKey {
        CircleKey(epoch: epoch, key: SecureRandom.key(bitCount: 256))
    }

    static let ciphersuite = HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly
    static let domain = "tresor.sync.v1.circle-key-share"

    /// Shares this key to one device by HPKE (base mode, DHKEM(X25519, HKDF-SHA256),
    /// HKDF-SHA256, ChaCha20-Poly1305), the HPKE info and associated data binding the account,
    /// the epoch, the recipient and the sender; signed by the sender, so a server cannot slip in
    /// a key of its own (anyone can encrypt to a public key).
    /// - Parameters:
    ///   - recipient: a member of the list, or its recovery identity.
    ///   - account: the sync account.
    ///   - sender: this device, a member of the list.
    /// - Returns: the share, for the server to hand to `recipient`.
    /// - Throws: an HPKE error for a recipient key swift-crypto refuses.
    public func share(to recipient: DeviceIdentity, account: String, from sender: LocalDevice) throws -> CircleKeyShare {
        let binding = CircleKeyShare.binding(account: account, epoch: epoch, recipientID: recipient.deviceID, senderID: sender.deviceID)
        let publicKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: recipient.agreementKey)
        var context = try HPKE.Sender(recipientKey: publicKey, ciphersuite: Self.ciphersuite, info: binding)
        let ciphertext = try key.withUnsafeBytes { try context.seal(Data($0), authenticating: binding) }
        var share = CircleKeyShare(
            account: account, epoch: epoch, recipientID: recipient.deviceID, senderID: sender.deviceID,
            encapsulatedKey: context.encapsulatedKey, ciphertext: ciphertext, signature: Data())
        share.signature = try sender.sign(share.signedBytes)
        return share
    }
}

/// A circle key sealed to one device (``CircleKey/share(to:account:from:)``), as the server
/// stores and serves it.
public struct CircleKeyShare: Sendable, Equatable {
    public let account: String
    public let epoch: UInt64
    public let recipientID: String
    public let senderID: String
    let encapsulatedKey: Data
    let ciphertext: Data
    var signature: Data

    static func binding(account: String, epoch: UInt64, recipientID: String, senderID: String) -> Data {
        var writer = CanonicalWriter(domain: CircleKey.domain)
        writer.append(account)
        writer.append(epoch)
        writer.append(recipientID)
        writer.append(senderID)
        return writer.bytes
    }

    var signedBytes: Data {
        var writer = CanonicalWriter(domain: CircleKey.domain + ".signature")
        writer.append(Self.binding(account: account, epoch: epoch, recipientID: recipientID, senderID: senderID))
        writer.append(encapsulatedKey)
        writer.append(ciphertext)
        return writer.bytes
    }

    /// The bytes the server stores.
    public var encoded: Data {
        var writer = CanonicalWriter(domain: CircleKey.domain)
        writer.append(account)
        writer.append(epoch)
        writer.append(recipientID)
        writer.append(senderID)
        writer.append(encapsulatedKey)
        writer.append(ciphertext)
        writer.append(signature)
        return writer.bytes
    }

    init(account: String, epoch: UInt64, recipientID: String, senderID: String, encapsulatedKey: Data, ciphertext: Data, signature: Data) {
        self.account = account
        self.epoch = epoch
        self.recipientID = recipientID
        self.senderID = senderID
        // Copies, so that every byte string starts at index 0 (HPKE returns slices).
        self.encapsulatedKey = Data(encapsulatedKey)
        self.ciphertext = Data(ciphertext)
        self.signature = Data(signature)
    }

    /// Reads a share the server served (nothing is trusted yet: see ``open(as:trusting:)``).
    /// - Parameter encoded: the bytes ``encoded`` made.
    /// - Throws: ``SyncError/malformed(_:)``.
    public init(encoded: Data) throws {
        guard encoded.count <= 4096 else { throw SyncError.malformed("a circle-key share of \(encoded.count) bytes") }
        var reader = try CanonicalReader(encoded, domain: CircleKey.domain)
        self.init(
            account: try reader.readString(), epoch: try reader.readUInt64(), recipientID: try reader.readString(),
            senderID: try reader.readString(), encapsulatedKey: try reader.readData(), ciphertext: try reader.readData(),
            signature: try reader.readData())
        try reader.finish()
    }

    /// Opens the share on the device it was made for.
    /// - Parameters:
    ///   - device: this device (or the recovery identity, for a recovery).
    ///   - list: the trusted-device list this device holds.
    /// - Returns: the circle key.
    /// - Throws: ``SyncError/otherAccount(expected:found:)``, ``SyncError/shareForAnotherDevice(recipientID:)``,
    ///   ``SyncError/shareSenderNotTrusted(senderID:)`` (the sender is not a member of `list`),
    ///   ``SyncError/shareForFutureEpoch(epoch:listEpoch:)``, ``SyncError/badSignature(signerID:)``,
    ///   ``SyncError/shareNotOpened``.
    public func open(as device: LocalDevice, trusting list: TrustedDeviceList) throws -> CircleKey {
        guard account == list.account else { throw SyncError.otherAccount(expected: list.account, found: account) }
        guard recipientID == device.deviceID else { throw SyncError.shareForAnotherDevice(recipientID: recipientID) }
        guard let sender = list.signer(senderID) else { throw SyncError.shareSenderNotTrusted(senderID: senderID) }
        guard epoch >= 1, epoch <= list.epoch else { throw SyncError.shareForFutureEpoch(epoch: epoch, listEpoch: list.epoch) }
        guard sender.isValidSignature(signature, for: signedBytes) else { throw SyncError.badSignature(signerID: senderID) }
        let binding = Self.binding(account: account, epoch: epoch, recipientID: recipientID, senderID: senderID)
        do {
            var context = try HPKE.Recipient(
                privateKey: device.agreementKey, ciphersuite: CircleKey.ciphersuite, info: binding, encapsulatedKey: encapsulatedKey)
            let key = try context.open(ciphertext, authenticating: binding)
            guard key.count == 32 else { throw SyncError.shareNotOpened }
            return CircleKey(epoch: epoch, key: SymmetricKey(data: key))
        } catch {
            throw SyncError.shareNotOpened
        }
    }
}

/// The circle keys a device holds, one per epoch: the newest seals what it writes, every one
/// opens what was written in its epoch. The caller keeps it sealed under this device's keybag
/// (``sealed(account:keybag:)``), as the device identity.
public struct CircleKeyring: Sendable {
    private var byEpoch: [UInt64: CircleKey] = [:]

    /// A keyring holding `keys`, one per epoch (a later key of the same epoch replaces an earlier).
    /// - Parameter keys: the circle keys this device opened or made.
    public init(_ keys: [CircleKey] = []) {
        for key in keys { insert(key) }
    }

    /// Adds (or replaces) the key of its epoch.
    /// - Parameter key: a circle key this device opened or made.
    public mutating func insert(_ key: CircleKey) {
        byEpoch[key.epoch] = key
    }

    /// The key of an epoch.
    /// - Parameter epoch: the epoch a record or share names.
    /// - Returns: the key, or nil when this device holds none of that epoch.
    public func key(for epoch: UInt64) -> CircleKey? { byEpoch[epoch] }

    /// The newest key: what this device seals with.
    public var current: CircleKey? { byEpoch.max { $0.key < $1.key }?.value }

    /// The keys held, oldest epoch first.
    public var keys: [CircleKey] { byEpoch.values.sorted { $0.epoch < $1.epoch } }

    /// The epochs held, oldest first.
    public var epochs: [UInt64] { keys.map(\.epoch) }
}
