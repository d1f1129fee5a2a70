import Foundation
import TresorSyncProtocol

/// What a circle's devices keep on the server as the device list (`PUT /v1/sync/device-list`,
/// opaque to it): every signed list from the circle's first, and the recovery identity's
/// endorsement of the circle. A device that holds no list yet — joining, or recovering —
/// verifies the lists from the first (``TrustedDeviceList/verifyingChain(_:circleID:)``); a
/// device that holds one accepts the last (``TrustedDeviceList/accepting(_:)``).
public struct CircleHistory: Sendable, Equatable {
    /// The signed lists, version 1 first.
    public let lists: [SignedTrustedDeviceList]
    /// The recovery identity's signature of the circle's id.
    public let endorsement: RecoveryEndorsement

    static let domain = "tresor.sync.v1.circle-history"
    static let listLimit = 10_000

    /// A history.
    /// - Parameters:
    ///   - lists: the signed lists, version 1 first.
    ///   - endorsement: the recovery endorsement made with the circle.
    public init(lists: [SignedTrustedDeviceList], endorsement: RecoveryEndorsement) {
        self.lists = lists
        self.endorsement = endorsement
    }

    /// The newest list.
    public var latest: SignedTrustedDeviceList? { lists.last }

    /// The circle's id (``TrustedDeviceList/circleID`` of the first list).
    public var circleID: String? { lists.first?.list.circleID }

    /// The history with `list` after the others.
    /// - Parameter list: the next signed list.
    /// - Returns: the longer history.
    public func appending(_ list: SignedTrustedDeviceList) -> CircleHistory {
        CircleHistory(lists: lists + [list], endorsement: endorsement)
    }

    /// The bytes the server stores.
    public var encoded: Data {
        var writer = CanonicalWriter(domain: Self.domain)
        writer.append(endorsement.encoded)
        writer.append(UInt64(lists.count))
        for list in lists { writer.append(list.encoded) }
        return writer.bytes
    }

    /// Reads a history the server served (nothing in it is trusted yet).
    /// - Parameter encoded: the bytes ``encoded`` made.
    /// - Throws: ``SyncError/malformed(_:)``, ``SyncError/invalidList(_:)``.
    public init(encoded: Data) throws {
        guard encoded.count <= 64 << 20 else { throw SyncError.malformed("a circle history of \(encoded.count) bytes") }
        var reader = try CanonicalReader(encoded, domain: Self.domain)
        let endorsement = try RecoveryEndorsement(encoded: try reader.readData())
        let count = try reader.readUInt64()
        guard (1...UInt64(Self.listLimit)).contains(count) else { throw SyncError.malformed("a circle history of \(count) lists") }
        var lists: [SignedTrustedDeviceList] = []
        for _ in 0..<count { lists.append(try SignedTrustedDeviceList(encoded: try reader.readData())) }
        try reader.finish()
        self.init(lists: lists, endorsement: endorsement)
    }
}

extension LocalDevice {
    /// This device's answer to a sync server's sign-in challenge: its Ed25519 signature of
    /// ``SyncChallenge/signedMessage(account:deviceID:)`` (a message of its own label, which no
    /// list, share or record signature can be mistaken for).
    /// - Parameters:
    ///   - challenge: the server's challenge.
    ///   - account: the web account's name.
    /// - Returns: the signature.
    /// - Throws: a signing error from swift-crypto.
    public func answer(_ challenge: SyncChallenge, account: String) throws -> Data {
        try sign(challenge.signedMessage(account: account, deviceID: deviceID))
    }
}

extension RecoveryKey {
    /// The recovery identity's signature letting `request`'s device in when no trusted device
    /// is left (``SyncJoinRequest/recoveryMessage()``).
    /// - Parameter request: the recovering device's own join request.
    /// - Returns: the signature.
    /// - Throws: a signing error from swift-crypto.
    public func signRecovery(of request: SyncJoinRequest) throws -> Data {
        try identity.sign(request.recoveryMessage())
    }
}
