import Foundation
import TresorKeychain

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
}

extension SyncEngine {
    /// Counts what waits in `keychain`'s sync ledger; needs no key, so a locked keychain answers too.
    /// - Parameter keychain: the login keychain.
    /// - Returns: the counts.
    /// - Throws: storage errors.
    public static func counts(in keychain: Keychain) throws -> SyncLedgerCounts {
        let (waiting, held) = try keychain.syncTransaction { transaction in (try transaction.outbox().count, try transaction.held()) }
        return SyncLedgerCounts(
            changesWaiting: waiting, conflictsKept: try keychain.syncConflicts().count, changesHeld: held.count,
            deletionsHeld: held.filter { $0.reason == HoldReason.deletion }.count)
    }
}
