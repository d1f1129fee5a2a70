import Crypto
import Foundation
import TresorSyncProtocol

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
        guard SyncDeviceID.of(signingKey: signingKey) == signerID,
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: signingKey),
            key.isValidSignature(signature, for: list.signedBytes)
        else { throw SyncError.badSignature(signerID: signerID) }
    }
}
