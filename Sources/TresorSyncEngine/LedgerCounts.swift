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
    /// Of those, deletions waiting for the user (a mass deletion).
    public var deletionsHeld: Int
    /// Records of trusted devices set aside: verified, but not a keychain item this version
    /// reads; never applied.
    public var setAside: [SetAsideRecord] = []
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
    public static func counts(in keychain: Keychain) throws -> SyncLedgerCounts {
        let (waiting, all) = try keychain.syncTransaction { transaction in (try transaction.outboxCount(), try transaction.held()) }
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
            changesWaiting: waiting, conflictsKept: try keychain.syncConflicts().count, changesHeld: held.count,
            deletionsHeld: held.filter { $0.reason == HoldReason.deletion }.count, setAside: setAside)
    }
}
