import Foundation
import TresorSyncProtocol

/// What this device has applied of the server's changes: the last server counter, and for each
/// writing device the last device sequence. The caller persists it (it is `Codable`) in the same
/// transaction as the changes it applied, and hands it back for the next page.
public struct SyncProgress: Sendable, Equatable, Codable {
    /// The server counter of the last change applied; 0 before the first.
    public private(set) var lastCounter: UInt64
    /// For each device, the device sequence of its last change applied.
    public private(set) var lastSequences: [String: UInt64]

    /// The progress of a device that has applied nothing yet.
    public init() {
        lastCounter = 0
        lastSequences = [:]
    }

    /// The last change of a device applied.
    /// - Parameter deviceID: the writing device.
    /// - Returns: its last device sequence applied; 0 when none.
    public func lastSequence(of deviceID: String) -> UInt64 {
        lastSequences[deviceID] ?? 0
    }

    /// Verifies and opens a page the server served, all or nothing: when any record of it is
    /// refused, none applies and the caller's progress stays as it was.
    ///
    /// A record is refused when the server's fields differ from its signed ones (a record moved
    /// or two ciphertexts swapped), when it is not signed by a device of `list` (or by a removed
    /// device, numbered after its removal), when its signature does not verify, when its device
    /// sequence was already applied (a replay) or is not the next one of its device (a record
    /// dropped or reordered), when the server's counters go back, when its epoch's key is not
    /// held, or when it does not open. One that opens but whose padding is not what a sealing
    /// device writes passes, as ``RecordContent/badlyPadded``: the caller sets it aside.
    /// - Parameters:
    ///   - page: the server's changes, in its order.
    ///   - list: the trusted-device list this device holds.
    ///   - keys: the circle keys this device holds.
    /// - Returns: the opened records in the page's order, and the progress to persist with them.
    /// - Throws: ``SyncError/pageRefused(counter:recordID:reason:)`` naming the first refused
    ///   record and why.
    public func applying(_ page: [SyncRecord], list: TrustedDeviceList, keys: CircleKeyring) throws -> ReceivedPage {
        var progress = self
        var records: [ReceivedRecord] = []
        records.reserveCapacity(page.count)
        for entry in page {
            do {
                records.append(try progress.apply(entry, list: list, keys: keys))
            } catch let reason as RecordRefusal {
                throw SyncError.pageRefused(counter: entry.counter, recordID: entry.upload.recordID, reason: reason)
            }
        }
        return ReceivedPage(records: records, progress: progress)
    }

    private mutating func apply(_ entry: SyncRecord, list: TrustedDeviceList, keys: CircleKeyring) throws -> ReceivedRecord {
        guard entry.counter > lastCounter else { throw RecordRefusal.counterOutOfOrder(previous: lastCounter, found: entry.counter) }
        let (record, content) = try Self.verify(entry, list: list, keys: keys) { record in
            let last = lastSequence(of: record.deviceID)
            guard record.deviceSequence > last else { throw RecordRefusal.replayed(deviceID: record.deviceID, sequence: record.deviceSequence) }
            guard record.deviceSequence == last + 1 else {
                throw RecordRefusal.sequenceGap(deviceID: record.deviceID, expected: last + 1, found: record.deviceSequence)
            }
        }
        lastCounter = entry.counter
        lastSequences[record.deviceID] = record.deviceSequence
        return ReceivedRecord(
            counter: entry.counter, recordID: record.recordID, deviceID: record.deviceID, deviceSequence: record.deviceSequence,
            baseCounter: record.baseCounter, epoch: record.epoch, content: content)
    }

    /// Every check of a record but its place in the order (`checkOrder`, run after the
    /// signature verifies), then opens it.
    static func verify(
        _ entry: SyncRecord, list: TrustedDeviceList, keys: CircleKeyring, checkOrder: (SealedRecord) throws -> Void
    ) throws -> (SealedRecord, RecordContent) {
        let upload = entry.upload
        let record = try SealedRecord(body: upload.body)
        guard record.account == list.account else { throw RecordRefusal.otherAccount(record.account) }
        if record.recordID != upload.recordID { throw RecordRefusal.outerFieldDiffers(field: "record id") }
        if record.deviceID != upload.deviceID { throw RecordRefusal.outerFieldDiffers(field: "device id") }
        if record.deviceSequence != upload.deviceSequence { throw RecordRefusal.outerFieldDiffers(field: "device sequence") }
        if record.baseCounter != upload.baseCounter { throw RecordRefusal.outerFieldDiffers(field: "base counter") }
        let writer: DeviceIdentity
        if let member = list.member(record.deviceID) {
            writer = member
        } else if let gone = list.removed.first(where: { $0.identity.deviceID == record.deviceID }) {
            guard record.deviceSequence <= gone.lastAcceptedSequence else {
                throw RecordRefusal.writtenAfterRemoval(
                    deviceID: record.deviceID, sequence: record.deviceSequence, lastAccepted: gone.lastAcceptedSequence)
            }
            writer = gone.identity
        } else {
            throw RecordRefusal.unknownDevice(deviceID: record.deviceID)
        }
        guard writer.isValidSignature(record.signature, for: record.signedBytes) else {
            throw RecordRefusal.badSignature(deviceID: record.deviceID)
        }
        try checkOrder(record)
        guard record.epoch <= list.epoch, let key = keys.key(for: record.epoch) else { throw RecordRefusal.unknownEpoch(record.epoch) }
        return (record, try record.open(with: key))
    }
}

extension ReceivedRecord {
    /// Opens again a record this device accepted when it arrived and kept sealed since (a change
    /// held while its class was locked): every check but its place in the order, which was
    /// checked then and is recorded in the progress.
    /// - Parameters:
    ///   - entry: the record as the server served it.
    ///   - list: the trusted-device list this device holds.
    ///   - keys: the circle keys this device holds.
    /// - Returns: the opened record.
    /// - Throws: ``SyncError/pageRefused(counter:recordID:reason:)`` when it no longer passes.
    public static func reopening(_ entry: SyncRecord, list: TrustedDeviceList, keys: CircleKeyring) throws -> ReceivedRecord {
        do {
            let (record, content) = try SyncProgress.verify(entry, list: list, keys: keys) { _ in }
            return ReceivedRecord(
                counter: entry.counter, recordID: record.recordID, deviceID: record.deviceID, deviceSequence: record.deviceSequence,
                baseCounter: record.baseCounter, epoch: record.epoch, content: content)
        } catch let reason as RecordRefusal {
            throw SyncError.pageRefused(counter: entry.counter, recordID: entry.upload.recordID, reason: reason)
        }
    }
}

/// A page that passed every check (``SyncProgress/applying(_:list:keys:)``).
public struct ReceivedPage: Sendable, Equatable {
    /// The opened records, in the server's order.
    public let records: [ReceivedRecord]
    /// The progress to persist once the records are applied.
    public let progress: SyncProgress
}

/// One verified, opened change.
public struct ReceivedRecord: Sendable, Equatable {
    public let counter: UInt64
    public let recordID: String
    /// The device that wrote it (its signature verified).
    public let deviceID: String
    public let deviceSequence: UInt64
    /// The server counter of the version it was made from (signed by its writer).
    public let baseCounter: UInt64
    public let epoch: UInt64
    public let content: RecordContent
}
