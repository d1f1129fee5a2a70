import Foundation
import GRDB
import Synchronization

// The daemon's background sync pushes soon after a local change (docs/SYNC.md, "Background
// sync"): the keychain and the notes each tell it when a transaction that added a row to their
// outbox commits, whichever route made it (the socket API, the Secret Service, the web side, a
// restore, a trigger).
extension DatabasePool {
    /// Calls `changed` after each committed transaction that inserted a row into `table` (also
    /// by trigger), until the observation is cancelled or released.
    /// - Parameters:
    ///   - table: the table watched.
    ///   - changed: called on the database's writer thread, after the commit; it should only
    ///     hand the news on.
    /// - Returns: the observation; keep it as long as it should last.
    public func observeCommittedInserts(into table: String, _ changed: @escaping @Sendable () -> Void) -> CommittedInsertObservation {
        observeCommitted(table, updatesAndDeletes: false, changed)
    }

    /// Calls `changed` after each committed transaction that inserted, updated or deleted a
    /// row of `table`, until the observation is cancelled or released.
    /// - Parameters:
    ///   - table: the table watched.
    ///   - changed: called on the database's writer thread, after the commit; it should only
    ///     hand the news on.
    /// - Returns: the observation; keep it as long as it should last.
    public func observeCommittedChanges(of table: String, _ changed: @escaping @Sendable () -> Void) -> CommittedInsertObservation {
        observeCommitted(table, updatesAndDeletes: true, changed)
    }

    private func observeCommitted(_ table: String, updatesAndDeletes: Bool, _ changed: @escaping @Sendable () -> Void) -> CommittedInsertObservation {
        let observer = CommittedInsertObserver(table: table, updatesAndDeletes: updatesAndDeletes, changed: changed)
        add(transactionObserver: observer, extent: .observerLifetime)
        return CommittedInsertObservation(observer: observer, database: self)
    }
}

/// An observation of a table's inserts (``GRDB/DatabasePool/observeCommittedInserts(into:_:)``),
/// or of all its changes (``GRDB/DatabasePool/observeCommittedChanges(of:_:)``).
public final class CommittedInsertObservation: Sendable {
    private let observer: Mutex<CommittedInsertObserver?>
    private let database: DatabasePool

    fileprivate init(observer: CommittedInsertObserver, database: DatabasePool) {
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
private final class CommittedInsertObserver: TransactionObserver, @unchecked Sendable {
    let table: String
    let updatesAndDeletes: Bool
    let changed: @Sendable () -> Void
    private var added = false

    init(table: String, updatesAndDeletes: Bool, changed: @escaping @Sendable () -> Void) {
        self.table = table
        self.updatesAndDeletes = updatesAndDeletes
        self.changed = changed
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        switch eventKind {
        case .insert(let table): return table == self.table
        case .update(let table, _), .delete(let table): return updatesAndDeletes && table == self.table
        }
    }

    func databaseDidChange(with event: DatabaseEvent) { added = true }

    func databaseDidCommit(_ db: Database) {
        guard added else { return }
        added = false
        changed()
    }

    func databaseDidRollback(_ db: Database) { added = false }
}
