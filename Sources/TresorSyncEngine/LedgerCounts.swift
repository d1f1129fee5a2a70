import Foundation
import TresorKeychain
import TresorSyncProtocol

/// What the engine holds in a keychain between syncs (`tresor sync status`).
public struct SyncLedgerCounts: Sendable, Equatable {
    /// Changes of this device the server has not taken yet.
    public var changesWaiting: Int
    /// Losing versions of concurrent edits kept.
    public var conflictsKept: Int
    /// Changes that arrived and wait: for an unlock, or for the user.
    public var changesHeld: Int
    /// Of those, deletions waiting for the user (a mass deletion) that would delete something.
    public var deletionsHeld: Int { heldDeletions.count }
    /// Those deletions, each with the item it would delete.
    public var heldDeletions: [HeldDeletion] = []
    /// Records of trusted devices set aside: verified, but not a keychain item this version
    /// reads; never applied.
    public var setAside: [SetAsideRecord] = []
}

/// A held deletion (``SyncLedgerCounts/heldDeletions``) and the item here it would delete.
public struct HeldDeletion: Sendable, Equatable {
    public var recordID: String
    /// The item; nil while its protection class is locked.
    public var item: SyncedItem?
}

/// A record set aside (``SyncLedgerCounts/setAside``).
public struct SetAsideRecord: Sendable, Equatable {
    /// The server's counter of it.
    public var counter: UInt64
    public var recordID: String
    /// The trusted device that wrote it.
    public var deviceID: String
    /// Why, in the user's words.
    public var reason: String
}

extension SyncEngine {
    /// Counts what waits in `keychain`'s sync ledger; needs no key, so a locked keychain answers too.
    /// - Parameter keychain: the login keychain.
    /// - Returns: the counts.
    /// - Throws: storage errors.
    public static func counts(in keychain: KeychainStore) throws -> SyncLedgerCounts {
        let (waiting, all, deletions) = try keychain.syncTransaction { transaction in
            let held = try transaction.held()
            return (try transaction.outboxCount(), held, try heldDeletions(held, transaction))
        }
        let held = all.filter { $0.reason != HoldReason.unreadable }
        let setAside = all.filter { $0.reason == HoldReason.unreadable }.map { record in
            SetAsideRecord(
                counter: record.counter, recordID: record.recordID,
                deviceID: (try? SyncJSON.decoder.decode(SyncRecord.self, from: record.record))?.upload.deviceID ?? "",
                reason:
                    "not a keychain item this version of Tresor reads (a newer version's format, or damaged: its encoding or its padding); never applied"
            )
        }
        return SyncLedgerCounts(
            changesWaiting: waiting, conflictsKept: try keychain.syncConflicts().count, changesHeld: held.count, heldDeletions: deletions,
            setAside: setAside)
    }

    /// The held deletions that would delete something: not one of an item gone here already,
    /// nor one of an item changed here since (that change waits to go out, and a deletion never
    /// wins over a concurrent edit). Each with its item, read while its class is unlocked.
    private static func heldDeletions(_ held: [HeldRecord], _ transaction: KeychainSyncTransaction) throws -> [HeldDeletion] {
        let deletions = held.filter { $0.reason == HoldReason.deletion }
        guard !deletions.isEmpty else { return [] }
        let changedHere = try transaction.outboxRecordIDs()
        return try deletions.compactMap { deletion in
            guard !changedHere.contains(deletion.recordID), let state = try transaction.record(deletion.recordID), state.itemID != nil else {
                return nil
            }
            return HeldDeletion(recordID: deletion.recordID, item: try? transaction.item(of: state))
        }
    }
}
