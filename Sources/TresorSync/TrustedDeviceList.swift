import Crypto
import Foundation
import TresorCrypto
import TresorModel

/// The list of devices that may read a sync account's keychain: an ordered, versioned list
/// that only the account's devices sign, so a server that stores it cannot add a device to it.
///
/// A device holds one list. It accepts another (``accepting(_:)``) only when a device of the
/// list it holds — or the recovery identity it holds — signed it, with a higher version; the
/// epoch of the circle keys never goes back. The first list of a circle, version 1, is signed
/// by the device that creates the circle (``create(account:device:recoveryKey:)``).
public struct TrustedDeviceList: Sendable, Equatable {
    /// The sync account the list is for.
    public let account: String
    /// Raised by one at every change; a device never accepts a list not above the one it holds.
    public let version: UInt64
    /// The epoch of the newest circle key (``CircleKey``): raised by a removal.
    public let epoch: UInt64
    /// The trusted devices, in the order they joined.
    public let members: [DeviceIdentity]
    /// The recovery identity (``RecoveryKey/identity``): it may sign a list, as a member does,
    /// and receives the circle keys, but writes no record.
    public let recovery: DeviceIdentity
    /// Devices removed from the circle, each with the last of its records still accepted.
    public let removed: [RemovedDevice]

    static let domain = "tresor.sync.v1.trusted-device-list"
    static let signatureDomain = "tresor.sync.v1.trusted-device-list.signature"
    static let memberLimit = 1000

    /// Makes a list, checking the rules every list keeps.
    /// - Parameters:
    ///   - account: the sync account.
    ///   - version: the list's version, from 1.
    ///   - epoch: the newest circle key's epoch, from 1.
    ///   - members: the trusted devices, in the order they joined.
    ///   - recovery: the recovery identity's public part.
    ///   - removed: the devices removed so far.
    /// - Throws: ``SyncError/invalidList(_:)`` for an empty account, version or epoch 0, no
    ///   member, a device listed twice, a removed device still a member, or the recovery
    ///   identity listed as a device.
    public init(
        account: String, version: UInt64, epoch: UInt64, members: [DeviceIdentity], recovery: DeviceIdentity, removed: [RemovedDevice]
    ) throws {
        guard !account.isEmpty else { throw SyncError.invalidList("no account name") }
        guard version >= 1, epoch >= 1 else { throw SyncError.invalidList("version and epoch start at 1") }
        guard !members.isEmpty, members.count <= Self.memberLimit else {
            throw SyncError.invalidList("\(members.count) members (1 to \(Self.memberLimit))")
        }
        let memberIDs = members.map(\.deviceID)
        guard Set(memberIDs).count == members.count else { throw SyncError.invalidList("a device is listed twice") }
        let removedIDs = removed.map(\.identity.deviceID)
        guard Set(removedIDs).count == removed.count, Set(removedIDs).isDisjoint(with: memberIDs) else {
            throw SyncError.invalidList("a removed device is listed twice or still a member")
        }
        guard !memberIDs.contains(recovery.deviceID), !removedIDs.contains(recovery.deviceID) else {
            throw SyncError.invalidList("the recovery identity is listed as a device")
        }
        self.account = account
        self.version = version
        self.epoch = epoch
        self.members = members
        self.recovery = recovery
        self.removed = removed
    }

    /// The first list of a new circle: version 1, epoch 1, the creating device its only
    /// member, signed by it, naming the recovery identity.
    /// - Parameters:
    ///   - account: the sync account's name.
    ///   - device: the device creating the circle.
    ///   - recoveryKey: the recovery key made for the circle, to be shown to the user once.
    /// - Returns: the signed list.
    /// - Throws: ``SyncError/invalidList(_:)`` for an empty account name.
    public static func create(account: String, device: LocalDevice, recoveryKey: RecoveryKey) throws -> SignedTrustedDeviceList {
        let list = try TrustedDeviceList(
            account: account, version: 1, epoch: 1, members: [device.identity], recovery: recoveryKey.identity.identity, removed: [])
        return try list.signed(by: device)
    }

    /// A member of the list.
    /// - Parameter deviceID: a device id.
    /// - Returns: the member with that id, or nil when the list does not name it.
    public func member(_ deviceID: String) -> DeviceIdentity? {
        members.first { $0.deviceID == deviceID }
    }

    /// The id of the circle a version-1 list starts: the first 16 bytes of SHA-256 of its
    /// encoding, in hex; nil for a later version. The circle's members keep it; a joining device
    /// mixes the id the server gave it into its fingerprint words (``JoinRequest``) and checks the
    /// lists it is given start that circle (``verifyingChain(_:circleID:)``).
    public var circleID: String? {
        version == 1 ? Digest.sha256(encoded).prefix(16).hexString : nil
    }

    /// The list a joining device starts from, when it holds none yet: the circle's lists from
    /// its first, each accepted by the one before (``accepting(_:)``). The first must be the
    /// circle `circleID` — the one the user compared fingerprint words for on a device of the
    /// circle — signed by its creator; so a server cannot hand the device a circle of its own.
    /// - Parameters:
    ///   - chain: the signed lists, version 1 first (a version may be skipped when a member of
    ///     the list before signed the next).
    ///   - circleID: the circle's id, as mixed into the join request's fingerprint words.
    /// - Returns: the last list, to hold from now on.
    /// - Throws: ``SyncError/otherCircle(expected:found:)``, ``SyncError/invalidList(_:)`` (no list,
    ///   or a first list not signed by its creator), and whatever ``accepting(_:)`` throws.
    public static func verifyingChain(_ chain: [SignedTrustedDeviceList], circleID: String) throws -> TrustedDeviceList {
        guard let first = chain.first else { throw SyncError.invalidList("no list") }
        guard let found = first.list.circleID else { throw SyncError.invalidList("the first list is version \(first.list.version)") }
        guard found == circleID else { throw SyncError.otherCircle(expected: circleID, found: found) }
        guard first.list.members.count == 1, let creator = first.list.member(first.signerID) else {
            throw SyncError.invalidList("the first list is not signed by the device that created the circle")
        }
        try first.verify(with: creator.signingKey)
        return try chain.dropFirst().reduce(first.list) { try $0.accepting($1) }
    }

    /// Who may sign the next list and share circle keys: a member, or the recovery identity.
    func signer(_ signerID: String) -> DeviceIdentity? {
        signerID == recovery.deviceID ? recovery : member(signerID)
    }

    /// Who receives each epoch's circle key: the members and the recovery identity.
    public var keyRecipients: [DeviceIdentity] { members + [recovery] }

    // MARK: Changes

    /// The next list with `device` added at the end (a join approved, or a recovery).
    /// - Parameter device: the joining device's public identity.
    /// - Returns: the unsigned list, version + 1, same epoch.
    /// - Throws: ``SyncError/invalidList(_:)`` when it is already a member or was removed.
    public func adding(_ device: DeviceIdentity) throws -> TrustedDeviceList {
        try TrustedDeviceList(
            account: account, version: version + 1, epoch: epoch, members: members + [device], recovery: recovery, removed: removed)
    }

    /// The next list without `deviceID`, and a new epoch: what it writes from now on is
    /// refused, and the new epoch's key is shared to the remaining members only.
    /// - Parameters:
    ///   - deviceID: the device to remove.
    ///   - lastAcceptedSequence: the last of its records still accepted (the remover's last
    ///     applied one): anything it numbers higher is refused by every device.
    /// - Returns: the unsigned list, version + 1, epoch + 1.
    /// - Throws: ``SyncError/notAMember(deviceID:)``; ``SyncError/invalidList(_:)`` when it is the last member.
    public func removing(_ deviceID: String, lastAcceptedSequence: UInt64) throws -> TrustedDeviceList {
        guard let gone = member(deviceID) else { throw SyncError.notAMember(deviceID: deviceID) }
        return try TrustedDeviceList(
            account: account, version: version + 1, epoch: epoch + 1, members: members.filter { $0.deviceID != deviceID },
            recovery: recovery, removed: removed + [RemovedDevice(identity: gone, lastAcceptedSequence: lastAcceptedSequence)])
    }

    /// The next list with the same members and a new epoch: the circle key rolls, as after a
    /// removal, when a device that held the current epoch's key has left since
    /// (``CircleHistory/keyHoldersGone``), or when that key never reached the others (a roll cut
    /// before its shares were stored).
    /// - Returns: the unsigned list, version + 1, epoch + 1.
    /// - Throws: ``SyncError/invalidList(_:)`` (never, for a list that read).
    public func rolled() throws -> TrustedDeviceList {
        try TrustedDeviceList(account: account, version: version + 1, epoch: epoch + 1, members: members, recovery: recovery, removed: removed)
    }

    /// The next list without `device`, signed by that device itself as it leaves (`tresor sync
    /// leave`): the other devices accept it as any list a member of the one they hold signed,
    /// so the circle stops naming the device without another one acting. Its records up to
    /// `lastAcceptedSequence` stay accepted. The epoch stays: a device that leaves forgets its
    /// keys, and cannot share a new epoch's key to the others (a share opens only from a member
    /// of the list it comes with) — a removal by another device rolls the key.
    /// - Parameters:
    ///   - device: this device, a member.
    ///   - lastAcceptedSequence: the last of its records the server holds.
    /// - Returns: the signed list, version + 1, same epoch.
    /// - Throws: ``SyncError/notAMember(deviceID:)``; ``SyncError/invalidList(_:)`` when it is the last member.
    public func leaving(_ device: LocalDevice, lastAcceptedSequence: UInt64) throws -> SignedTrustedDeviceList {
        guard let leaver = member(device.deviceID), leaver.signingKey == device.identity.signingKey else {
            throw SyncError.notAMember(deviceID: device.deviceID)
        }
        let next = try TrustedDeviceList(
            account: account, version: version + 1, epoch: epoch, members: members.filter { $0.deviceID != device.deviceID },
            recovery: recovery, removed: removed + [RemovedDevice(identity: leaver, lastAcceptedSequence: lastAcceptedSequence)])
        return SignedTrustedDeviceList(list: next, signerID: device.deviceID, signature: try device.sign(next.signedBytes))
    }

    // MARK: Signing and accepting

    /// Signs the list as one of its members, or as its recovery identity (a recovery join:
    /// ``RecoveryKey/identity``).
    /// - Parameter device: the signing device; it must be in the list it signs.
    /// - Returns: the signed list.
    /// - Throws: ``SyncError/notAMember(deviceID:)`` when it is not.
    public func signed(by device: LocalDevice) throws -> SignedTrustedDeviceList {
        guard signer(device.deviceID)?.signingKey == device.identity.signingKey else {
            throw SyncError.notAMember(deviceID: device.deviceID)
        }
        return SignedTrustedDeviceList(list: self, signerID: device.deviceID, signature: try device.sign(signedBytes))
    }

    /// Accepts `offered` in place of this list, or says why not.
    /// - Parameter offered: a list the server served.
    /// - Returns: the list to hold from now on.
    /// - Throws: ``SyncError/otherAccount(expected:found:)``, ``SyncError/listRollback(heldVersion:offeredVersion:)``
    ///   (not above this one), ``SyncError/listSignerNotTrusted(signerID:)`` (not a member of this
    ///   list nor its recovery identity), ``SyncError/badSignature(signerID:)``,
    ///   ``SyncError/invalidList(_:)`` (its epoch goes back).
    public func accepting(_ offered: SignedTrustedDeviceList) throws -> TrustedDeviceList {
        let list = offered.list
        guard list.account == account else { throw SyncError.otherAccount(expected: account, found: list.account) }
        guard list.version > version else { throw SyncError.listRollback(heldVersion: version, offeredVersion: list.version) }
        guard let signer = signer(offered.signerID) else { throw SyncError.listSignerNotTrusted(signerID: offered.signerID) }
        try offered.verify(with: signer.signingKey)
        guard list.epoch >= epoch else { throw SyncError.invalidList("its epoch \(list.epoch) is below the held \(epoch)") }
        return list
    }

    /// The bytes a signature covers: the domain and every field, in order.
    var signedBytes: Data {
        var writer = CanonicalWriter(domain: Self.signatureDomain)
        writer.append(encoded)
        return writer.bytes
    }

    var encoded: Data {
        var writer = CanonicalWriter(domain: Self.domain)
        writer.append(account)
        writer.append(version)
        writer.append(epoch)
        writer.append(UInt64(members.count))
        for member in members { member.write(to: &writer) }
        recovery.write(to: &writer)
        writer.append(UInt64(removed.count))
        for device in removed {
            device.identity.write(to: &writer)
            writer.append(device.lastAcceptedSequence)
        }
        return writer.bytes
    }

    init(encoded: Data) throws {
        var reader = try CanonicalReader(encoded, domain: Self.domain)
        let account = try reader.readString()
        let version = try reader.readUInt64()
        let epoch = try reader.readUInt64()
        let memberCount = try reader.readUInt64()
        guard memberCount <= Self.memberLimit else { throw SyncError.malformed("\(memberCount) members") }
        var members: [DeviceIdentity] = []
        for _ in 0..<memberCount { members.append(try DeviceIdentity.read(from: &reader)) }
        let recovery = try DeviceIdentity.read(from: &reader)
        let removedCount = try reader.readUInt64()
        guard removedCount <= Self.memberLimit * 10 else { throw SyncError.malformed("\(removedCount) removed devices") }
        var removed: [RemovedDevice] = []
        for _ in 0..<removedCount {
            removed.append(RemovedDevice(identity: try DeviceIdentity.read(from: &reader), lastAcceptedSequence: try reader.readUInt64()))
        }
        try reader.finish()
        try self.init(account: account, version: version, epoch: epoch, members: members, recovery: recovery, removed: removed)
    }
}

/// A device taken out of the circle, kept in the list so that its old records still verify
/// and its new ones are refused.
public struct RemovedDevice: Sendable, Equatable {
    public let identity: DeviceIdentity
    /// The last of its records (its device sequence) that devices still accept.
    public let lastAcceptedSequence: UInt64

    /// A removed device.
    /// - Parameters:
    ///   - identity: its public identity, as the list had it.
    ///   - lastAcceptedSequence: the last of its device sequences still accepted.
    public init(identity: DeviceIdentity, lastAcceptedSequence: UInt64) {
        self.identity = identity
        self.lastAcceptedSequence = lastAcceptedSequence
    }
}
