import Crypto
import Foundation

/// The recovery identity's signature on its circle's id, made once when the circle is created
/// (``RecoveryKey/endorse(circleID:)``) and kept by the server. A recovering device holds no
/// list, and the recovery key alone does not name the circle: the endorsement does, so a server
/// cannot hand the recovering device a circle of its own (``TrustedDeviceList/verifyingChain(_:recoveryKey:endorsement:)``).
public struct RecoveryEndorsement: Sendable, Equatable {
    /// The circle the recovery key is for (``TrustedDeviceList/circleID``).
    public let circleID: String
    let signature: Data

    static let domain = "tresor.sync.v1.recovery-endorsement"

    static func signedBytes(circleID: String) -> Data {
        var writer = CanonicalWriter(domain: domain + ".signed")
        writer.append(circleID)
        return writer.bytes
    }

    /// The bytes the server stores.
    public var encoded: Data {
        var writer = CanonicalWriter(domain: Self.domain)
        writer.append(circleID)
        writer.append(signature)
        return writer.bytes
    }

    init(circleID: String, signature: Data) {
        self.circleID = circleID
        self.signature = Data(signature)
    }

    /// Reads an endorsement the server served (verified by ``TrustedDeviceList/verifyingChain(_:recoveryKey:endorsement:)``).
    /// - Parameter encoded: the bytes ``encoded`` made.
    /// - Throws: ``SyncError/malformed(_:)``.
    public init(encoded: Data) throws {
        guard encoded.count <= 4096 else { throw SyncError.malformed("a recovery endorsement of \(encoded.count) bytes") }
        var reader = try CanonicalReader(encoded, domain: Self.domain)
        self.init(circleID: try reader.readString(), signature: try reader.readData())
        try reader.finish()
    }
}

extension RecoveryKey {
    /// Signs the circle's id with the recovery identity, when the circle is created and the key
    /// is shown to the user.
    /// - Parameter circleID: the id of the circle's version-1 list.
    /// - Returns: the endorsement, for the server to keep.
    /// - Throws: a signing error from swift-crypto.
    public func endorse(circleID: String) throws -> RecoveryEndorsement {
        RecoveryEndorsement(circleID: circleID, signature: try identity.sign(RecoveryEndorsement.signedBytes(circleID: circleID)))
    }
}

extension TrustedDeviceList {
    /// The list a recovering device builds on, when no device is left to approve it: the
    /// endorsement must be the typed recovery key's, and the circle's lists must start at the
    /// circle it endorses (``verifyingChain(_:circleID:)``) and name its recovery identity. The
    /// device then adds itself and signs with ``RecoveryKey/identity``. A server serving an older
    /// chain makes the next list's version one the other devices refuse as a rollback.
    /// - Parameters:
    ///   - chain: the signed lists, version 1 first.
    ///   - recoveryKey: the recovery key the user typed.
    ///   - endorsement: the endorsement the server kept.
    /// - Returns: the last list.
    /// - Throws: ``SyncError/invalidRecoveryKey(_:)`` when the endorsement or the lists are not
    ///   this recovery key's; what ``verifyingChain(_:circleID:)`` throws.
    public static func verifyingChain(
        _ chain: [SignedTrustedDeviceList], recoveryKey: RecoveryKey, endorsement: RecoveryEndorsement
    ) throws -> TrustedDeviceList {
        let recovery = recoveryKey.identity.identity
        guard recovery.isValidSignature(endorsement.signature, for: RecoveryEndorsement.signedBytes(circleID: endorsement.circleID)) else {
            throw SyncError.invalidRecoveryKey("the circle's endorsement is not signed by this recovery key")
        }
        let list = try verifyingChain(chain, circleID: endorsement.circleID)
        guard list.recovery == recovery else { throw SyncError.invalidRecoveryKey("it is not this circle's recovery key") }
        return list
    }
}
