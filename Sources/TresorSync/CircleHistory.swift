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

    static let domain = "tresor.sync.v2.circle-history"
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

    /// The devices no longer in the newest list that held its epoch's key — members of a list of
    /// that epoch: each left, or was removed without a new epoch, so the key must roll
    /// (``TrustedDeviceList/rolled()``). Empty when the epoch started after the last one went (a
    /// removal's own new epoch).
    public var keyHoldersGone: [String] {
        guard let latest = latest?.list else { return [] }
        let holders = Set(lists.filter { $0.list.epoch == latest.epoch }.flatMap { $0.list.members.map(\.deviceID) })
        return latest.removed.map(\.identity.deviceID).filter(holders.contains)
    }

    /// The history with `list` after the others.
    /// - Parameter list: the next signed list.
    /// - Returns: the longer history.
    public func appending(_ list: SignedTrustedDeviceList) -> CircleHistory {
        CircleHistory(lists: lists + [list], endorsement: endorsement)
    }

    /// The bytes the server stores. Each list after the first is written as its change from the
    /// one before — the members gone and added, the devices newly removed, its version, epoch and
    /// signature — so the history grows by the change, not by the whole list again
    /// (docs/SYNC.md, "The trusted-device list"); a list that is no such change is written whole.
    /// Read back, each list is rebuilt exactly and verified as signed.
    public var encoded: Data {
        var writer = CanonicalWriter(domain: Self.domain)
        writer.append(endorsement.encoded)
        writer.append(UInt64(lists.count))
        for (index, list) in lists.enumerated() {
            if index > 0, let change = ListChange(from: lists[index - 1].list, to: list) {
                writer.append(Self.changeEntry)
                change.write(to: &writer)
            } else {
                writer.append(Self.wholeEntry)
                writer.append(list.encoded)
            }
        }
        return writer.bytes
    }

    static let wholeEntry: UInt8 = 0
    static let changeEntry: UInt8 = 1

    /// Reads a history the server served (nothing in it is trusted yet): the form ``encoded``
    /// writes, or the earlier one of whole lists only.
    /// - Parameter encoded: the bytes ``encoded`` made.
    /// - Throws: ``SyncError/malformed(_:)``, ``SyncError/invalidList(_:)``.
    public init(encoded: Data) throws {
        guard encoded.count <= 64 << 20 else { throw SyncError.malformed("a circle history of \(encoded.count) bytes") }
        if let whole = try? CanonicalReader(encoded, domain: Self.wholeListsDomain) {
            try self.init(wholeLists: whole)
            return
        }
        var reader = try CanonicalReader(encoded, domain: Self.domain)
        let endorsement = try RecoveryEndorsement(encoded: try reader.readData())
        let count = try reader.readUInt64()
        guard (1...UInt64(Self.listLimit)).contains(count) else { throw SyncError.malformed("a circle history of \(count) lists") }
        var lists: [SignedTrustedDeviceList] = []
        for _ in 0..<count {
            switch try reader.readByte() {
            case Self.wholeEntry: lists.append(try SignedTrustedDeviceList(encoded: try reader.readData()))
            case Self.changeEntry:
                guard let previous = lists.last?.list else { throw SyncError.malformed("a circle history starting with a change") }
                lists.append(try ListChange.read(from: &reader).applied(to: previous))
            case let kind: throw SyncError.malformed("a circle history entry of kind \(kind)")
            }
        }
        try reader.finish()
        self.init(lists: lists, endorsement: endorsement)
    }

    /// The earlier form: every list whole.
    static let wholeListsDomain = "tresor.sync.v1.circle-history"

    private init(wholeLists reader: CanonicalReader) throws {
        var reader = reader
        let endorsement = try RecoveryEndorsement(encoded: try reader.readData())
        let count = try reader.readUInt64()
        guard (1...UInt64(Self.listLimit)).contains(count) else { throw SyncError.malformed("a circle history of \(count) lists") }
        var lists: [SignedTrustedDeviceList] = []
        for _ in 0..<count { lists.append(try SignedTrustedDeviceList(encoded: try reader.readData())) }
        try reader.finish()
        self.init(lists: lists, endorsement: endorsement)
    }
}

/// A signed list written as its change from the list before it (``CircleHistory/encoded``):
/// the same account and recovery identity, the members that stay in their order followed by
/// the ones added, the removed devices followed by the newly removed (each a member before).
struct ListChange {
    var version: UInt64
    var epoch: UInt64
    var gone: [String]
    var added: [DeviceIdentity]
    var newlyRemoved: [(deviceID: String, lastAcceptedSequence: UInt64)]
    var signerID: String
    var signature: Data

    /// The change from `previous` to `next`, or nil when `next` is not one this form rebuilds exactly.
    init?(from previous: TrustedDeviceList, to next: SignedTrustedDeviceList) {
        let list = next.list
        guard list.account == previous.account, list.recovery == previous.recovery, list.removed.starts(with: previous.removed) else {
            return nil
        }
        let nextIDs = Set(list.members.map(\.deviceID)), previousIDs = Set(previous.members.map(\.deviceID))
        version = list.version
        epoch = list.epoch
        gone = previous.members.map(\.deviceID).filter { !nextIDs.contains($0) }
        added = list.members.filter { !previousIDs.contains($0.deviceID) }
        newlyRemoved = list.removed.dropFirst(previous.removed.count).map { ($0.identity.deviceID, $0.lastAcceptedSequence) }
        signerID = next.signerID
        signature = next.signature
        guard (try? applied(to: previous)) == next else { return nil }
    }

    private init(
        version: UInt64, epoch: UInt64, gone: [String], added: [DeviceIdentity], newlyRemoved: [(deviceID: String, lastAcceptedSequence: UInt64)],
        signerID: String, signature: Data
    ) {
        self.version = version
        self.epoch = epoch
        self.gone = gone
        self.added = added
        self.newlyRemoved = newlyRemoved
        self.signerID = signerID
        self.signature = signature
    }

    /// The signed list this change makes of `previous` (its signature not verified yet).
    func applied(to previous: TrustedDeviceList) throws -> SignedTrustedDeviceList {
        let removed = try newlyRemoved.map { entry in
            guard let identity = previous.member(entry.deviceID) else {
                throw SyncError.malformed("a list change removes \(entry.deviceID), which was not a member")
            }
            return RemovedDevice(identity: identity, lastAcceptedSequence: entry.lastAcceptedSequence)
        }
        let list = try TrustedDeviceList(
            account: previous.account, version: version, epoch: epoch,
            members: previous.members.filter { !gone.contains($0.deviceID) } + added, recovery: previous.recovery,
            removed: previous.removed + removed)
        return SignedTrustedDeviceList(list: list, signerID: signerID, signature: signature)
    }

    func write(to writer: inout CanonicalWriter) {
        writer.append(version)
        writer.append(epoch)
        writer.append(UInt64(gone.count))
        for id in gone { writer.append(id) }
        writer.append(UInt64(added.count))
        for identity in added { identity.write(to: &writer) }
        writer.append(UInt64(newlyRemoved.count))
        for entry in newlyRemoved {
            writer.append(entry.deviceID)
            writer.append(entry.lastAcceptedSequence)
        }
        writer.append(signerID)
        writer.append(signature)
    }

    static func read(from reader: inout CanonicalReader) throws -> ListChange {
        let version = try reader.readUInt64(), epoch = try reader.readUInt64()
        let limit = UInt64(TrustedDeviceList.memberLimit)
        let goneCount = try reader.readUInt64()
        guard goneCount <= limit else { throw SyncError.malformed("a list change of \(goneCount) devices gone") }
        var gone: [String] = []
        for _ in 0..<goneCount { gone.append(try reader.readString()) }
        let addedCount = try reader.readUInt64()
        guard addedCount <= limit else { throw SyncError.malformed("a list change of \(addedCount) devices added") }
        var added: [DeviceIdentity] = []
        for _ in 0..<addedCount { added.append(try DeviceIdentity.read(from: &reader)) }
        let removedCount = try reader.readUInt64()
        guard removedCount <= limit else { throw SyncError.malformed("a list change of \(removedCount) devices removed") }
        var removed: [(deviceID: String, lastAcceptedSequence: UInt64)] = []
        for _ in 0..<removedCount { removed.append((try reader.readString(), try reader.readUInt64())) }
        return ListChange(
            version: version, epoch: epoch, gone: gone, added: added, newlyRemoved: removed, signerID: try reader.readString(),
            signature: try reader.readData())
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
