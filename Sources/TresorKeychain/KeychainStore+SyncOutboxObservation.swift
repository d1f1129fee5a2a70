import Foundation
import GRDB
import TresorStorage

/// An observation of a keychain's outbox (``KeychainStore/observeSyncOutbox(_:)``).
public typealias SyncOutboxObservation = CommittedInsertObservation

// The daemon's background sync pushes soon after a local change (docs/SYNC.md, "Background
// sync"): it learns of one when a transaction that added a pending change commits, whichever
// route made it (the socket API, the Secret Service, a restore).
extension KeychainStore {
    /// Calls `changed` after each committed transaction that added a pending change to the
    /// outbox, until the observation is cancelled or released.
    /// - Parameter changed: called on the database's writer thread, after the commit; it
    ///   should only hand the news on.
    /// - Returns: the observation; keep it as long as it should last.
    public func observeSyncOutbox(_ changed: @escaping @Sendable () -> Void) -> SyncOutboxObservation {
        database.observeCommittedInserts(into: "sync_outbox", changed)
    }
}
