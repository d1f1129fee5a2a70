import Foundation
import GRDB
import TresorStorage

// The daemon's background sync pushes soon after a local change of a note (docs/SYNC.md,
// "Background sync"): every local change writes its note's id to the outbox by trigger
// (``NoteSyncTables``), whichever route made it — the CLI, TresorKit, the web side, a restore —
// and what a pull applies does not (the triggers are held off then).
extension NotesStore {
    /// Calls `changed` after each committed transaction that changed a local note, so that its
    /// change waits in the outbox; never for what a pull applied. Lasts until the observation is
    /// cancelled or released.
    /// - Parameter changed: called on the database's writer thread, after the commit; it
    ///   should only hand the news on.
    /// - Returns: the observation; keep it as long as it should last.
    public func observeSyncOutbox(_ changed: @escaping @Sendable () -> Void) -> CommittedInsertObservation {
        pool.observeCommittedInserts(into: "sync_note_outbox", changed)
    }

    /// Calls `changed` after each committed transaction that changed the notes passphrases — a
    /// generation set, changed or reset, a hint — here or applied by a pull
    /// (``passphraseForSync()`` tells which: a change to send differs from the agreed one).
    /// - Parameter changed: called on the database's writer thread, after the commit; it
    ///   should only hand the news on.
    /// - Returns: the observation; keep it as long as it should last.
    public func observePassphrases(_ changed: @escaping @Sendable () -> Void) -> CommittedInsertObservation {
        pool.observeCommittedChanges(of: "passphrases", changed)
    }
}
