import Foundation
import GRDB
import Synchronization

// The daemon's background sync pushes soon after a local change (docs/SYNC.md, "Background
// sync"): it learns of one when a transaction that added a pending change commits, whichever
// route made it (the socket API, the Secret Service, a restore).
extension Keychain {
    /// Calls `changed` after each committed transaction that added a pending change to the
    /// outbox, until the observation is cancelled or released.
    /// - Parameter changed: called on the database's writer thread, after the commit; it
    ///   should only hand the news on.
    /// - Returns: the observation; keep it as long as it should last.
    public func observeSyncOutbox(_ changed: @escaping @Sendable () -> Void) -> SyncOutboxObservation {
        let observer = SyncOutboxObserver(changed: changed)
        database.add(transactionObserver: observer, extent: .observerLifetime)
        return SyncOutboxObservation(observer: observer, database: database)
    }
}

/// An observation of a keychain's outbox (``Keychain/observeSyncOutbox(_:)``).
public final class SyncOutboxObservation: Sendable {
    private let observer: Mutex<SyncOutboxObserver?>
    private let database: DatabasePool

    fileprivate init(observer: SyncOutboxObserver, database: DatabasePool) {
        self.observer = Mutex(observer)
        self.database = database
    }

    /// Stops the observation.
    public func cancel() {
        guard
            let observer = observer.withLock({ observer in
                defer { observer = nil }; return observer
            })
        else { return }
        database.remove(transactionObserver: observer)
    }

    deinit { cancel() }
}

/// Runs on the database's writer (its transaction callbacks are serialized there).
private final class SyncOutboxObserver: TransactionObserver, @unchecked Sendable {
    let changed: @Sendable () -> Void
    private var added = false

    init(changed: @escaping @Sendable () -> Void) { self.changed = changed }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        if case .insert(let table) = eventKind { return table == "sync_outbox" }
        return false
    }

    func databaseDidChange(with event: DatabaseEvent) { added = true }

    func databaseDidCommit(_ db: Database) {
        guard added else { return }
        added = false
        changed()
    }

    func databaseDidRollback(_ db: Database) { added = false }
}
