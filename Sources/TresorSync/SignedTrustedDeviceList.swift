import Crypto
import Foundation

/// A trusted-device list with the signature of a member (or of the recovery identity), as the
/// server stores and serves it.
public struct SignedTrustedDeviceList: Sendable, Equatable {
    public let list: TrustedDeviceList
    /// The id of the device (or recovery identity) that signed.
    public let signerID: String
    let signature: Data

    static let domain = "tresor.sync.v1.signed-trusted-device-list"

    init(list: TrustedDeviceList, signerID: String, signature: Data) {
        self.list = list
        self.signerID = signerID
        self.signature = signature
    }

    /// The bytes the server stores.
    public var encoded: Data {
        var writer = CanonicalWriter(domain: Self.domain)
        writer.append(list.encoded)
        writer.append(signerID)
        writer.append(signature)
        return writer.bytes
    }

    /// Reads a signed list the server served (nothing is trusted yet: see
    /// ``TrustedDeviceList/accepting(_:)`` and ``TrustedDeviceList/verifyingChain(_:circleID:)``).
    /// - Parameter encoded: the bytes ``encoded`` made.
    /// - Throws: ``SyncError/malformed(_:)``, ``SyncError/invalidList(_:)``.
    public init(encoded: Data) throws {
        guard encoded.count <= 4 << 20 else { throw SyncError.malformed("a trusted-device list of \(encoded.count) bytes") }
        var reader = try CanonicalReader(encoded, domain: Self.domain)
        list = try TrustedDeviceList(encoded: try reader.readData())
        signerID = try reader.readString()
        signature = try reader.readData()
        try reader.finish()
    }

    func verify(with signingKey: Data) throws {
        guard DeviceIdentity.id(ofSigningKey: signingKey) == signerID,
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: signingKey),
            key.isValidSignature(signature, for: list.signedBytes)
        else { throw SyncError.badSignature(signerID: signerID) }
    }

    /// The list a recovering device starts from (it holds none, and no device is left to
    /// approve it): accepted when signed by one of its own signers and naming the recovery
    /// identity of `recoveryKey`. The device then adds itself and signs with
    /// ``RecoveryKey/identity``. A server serving an older list makes the next list's version one
    /// the other devices refuse as a rollback. Unlike a join, nothing the user compared binds the
    /// circle: a server that made a list of its own naming the recovery identity's public key
    /// would pass this check (docs/SYNC.md, "What a hostile server can and cannot do").
    /// - Parameter recoveryKey: the recovery key the user typed.
    /// - Returns: the list to build on.
    /// - Throws: ``SyncError/invalidRecoveryKey(_:)`` when it is not this circle's;
    ///   ``SyncError/listSignerNotTrusted(signerID:)``; ``SyncError/badSignature(signerID:)``.
    public func acceptedForRecovery(with recoveryKey: RecoveryKey) throws -> TrustedDeviceList {
        guard list.recovery == recoveryKey.identity.identity else {
            throw SyncError.invalidRecoveryKey("it is not this circle's recovery key")
        }
        guard let signer = list.signer(signerID) else { throw SyncError.listSignerNotTrusted(signerID: signerID) }
        try verify(with: signer.signingKey)
        return list
    }
}
