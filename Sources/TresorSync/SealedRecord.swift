import Crypto
import Foundation
import TresorCrypto
import TresorSyncProtocol

/// A keychain record sealed for the circle and signed by the device that wrote it — the
/// ``SyncUpload/body`` (docs/SYNC.md, "Records").
///
/// The record's key is HKDF-SHA256 of the epoch's circle key over (account, record id, device
/// id, device sequence), so every change has a key of its own; the padded plaintext
/// (``RecordPadding``) is sealed with AES-256-GCM (``Envelope``), its associated data binding
/// the account, record id, device id, device sequence, base counter and epoch. The signed part
/// repeats those fields, and the writing device's Ed25519 signature covers it whole.
public struct SealedRecord: Sendable, Equatable {
    public let account: String
    public let recordID: String
    public let deviceID: String
    public let deviceSequence: UInt64
    public let baseCounter: UInt64
    public let epoch: UInt64
    let envelope: Data
    let signature: Data

    static let domain = "tresor.sync.v1.record"
    static let bodyLimit = RecordPadding.maximumSize + 64 * 1024

    /// Seals and signs a change of this device.
    /// - Parameters:
    ///   - content: the item's encoded form, or a tombstone.
    ///   - recordID: the item's record id (a UUID in its string form).
    ///   - deviceSequence: this device's next number (1 for its first change).
    ///   - baseCounter: the server counter of the version the change was made from; 0 for new.
    ///   - account: the sync account.
    ///   - key: the newest circle key this device holds (``CircleKeyring/current``).
    ///   - device: this device.
    /// - Returns: the upload to send.
    /// - Throws: ``SyncError/cannotSeal(_:)`` for a record id that is not a UUID, sequence 0,
    ///   or a payload over the size limit.
    public static func seal(
        _ content: RecordContent, recordID: String, deviceSequence: UInt64, baseCounter: UInt64, account: String, key: CircleKey,
        device: LocalDevice
    ) throws -> SyncUpload {
        guard UUID(uuidString: recordID) != nil else { throw SyncError.cannotSeal("the record id is not a UUID") }
        guard deviceSequence >= 1 else { throw SyncError.cannotSeal("device sequences start at 1") }
        let fields = Fields(
            account: account, recordID: recordID, deviceID: device.deviceID, deviceSequence: deviceSequence, baseCounter: baseCounter,
            epoch: key.epoch)
        let envelope = try Envelope.seal(try RecordPadding.pad(content), using: fields.recordKey(key), authenticating: fields.associatedData)
        let unsigned = SealedRecord(fields: fields, envelope: envelope, signature: Data())
        let record = SealedRecord(fields: fields, envelope: envelope, signature: try device.sign(unsigned.signedBytes))
        return SyncUpload(recordID: recordID, deviceID: device.deviceID, deviceSequence: deviceSequence, baseCounter: baseCounter, body: record.body)
    }

    /// The fields bound to a record: what its key is derived over and what its AEAD authenticates.
    struct Fields {
        var account: String
        var recordID: String
        var deviceID: String
        var deviceSequence: UInt64
        var baseCounter: UInt64
        var epoch: UInt64

        func recordKey(_ key: CircleKey) -> SymmetricKey {
            var info = CanonicalWriter(domain: SealedRecord.domain + ".key")
            info.append(account)
            info.append(recordID)
            info.append(deviceID)
            info.append(deviceSequence)
            return KeyDerivation.hkdfSHA256(inputKeyMaterial: key.key, salt: Data(), info: info.bytes)
        }

        var associatedData: Data {
            var writer = CanonicalWriter(domain: SealedRecord.domain + ".data")
            write(to: &writer)
            return writer.bytes
        }

        func write(to writer: inout CanonicalWriter) {
            writer.append(account)
            writer.append(recordID)
            writer.append(deviceID)
            writer.append(deviceSequence)
            writer.append(baseCounter)
            writer.append(epoch)
        }
    }

    init(fields: Fields, envelope: Data, signature: Data) {
        account = fields.account
        recordID = fields.recordID
        deviceID = fields.deviceID
        deviceSequence = fields.deviceSequence
        baseCounter = fields.baseCounter
        epoch = fields.epoch
        self.envelope = Data(envelope)
        self.signature = Data(signature)
    }

    var fields: Fields {
        Fields(account: account, recordID: recordID, deviceID: deviceID, deviceSequence: deviceSequence, baseCounter: baseCounter, epoch: epoch)
    }

    /// The signed part: the domain, every field, the ciphertext.
    var signedBytes: Data {
        var writer = CanonicalWriter(domain: Self.domain + ".signed")
        fields.write(to: &writer)
        writer.append(envelope)
        return writer.bytes
    }

    /// The body the server stores: the signed part and the signature.
    var body: Data {
        var writer = CanonicalWriter(domain: Self.domain)
        writer.append(signedBytes)
        writer.append(signature)
        return writer.bytes
    }

    /// Reads a body (nothing is verified yet).
    /// - Parameter body: a ``SyncUpload/body``.
    /// - Throws: ``RecordRefusal/malformed(_:)``.
    init(body: Data) throws {
        guard body.count <= Self.bodyLimit else { throw RecordRefusal.malformed("a body of \(body.count) bytes") }
        do {
            var outer = try CanonicalReader(body, domain: Self.domain)
            let signed = try outer.readData()
            signature = try outer.readData()
            try outer.finish()
            var inner = try CanonicalReader(signed, domain: Self.domain + ".signed")
            account = try inner.readString()
            recordID = try inner.readString()
            deviceID = try inner.readString()
            deviceSequence = try inner.readUInt64()
            baseCounter = try inner.readUInt64()
            epoch = try inner.readUInt64()
            envelope = try inner.readData()
            try inner.finish()
        } catch let error as SyncError {
            throw RecordRefusal.malformed(error.description)
        }
    }

    /// Opens the record with the circle key of its epoch (its signature already verified). A
    /// record that opens but whose padding is wrong is ``RecordContent/badlyPadded``: only a
    /// device holding the circle key could have sealed it, so it is no attack on this device —
    /// refusing its page would stall every device at it — but nothing of it is read.
    func open(with key: CircleKey) throws -> RecordContent {
        let fields = self.fields
        guard let padded = try? Envelope.open(envelope, using: fields.recordKey(key), authenticating: fields.associatedData) else {
            throw RecordRefusal.notOpened
        }
        do {
            return try RecordPadding.unpad(padded)
        } catch RecordRefusal.badPadding {
            return .badlyPadded
        }
    }
}
