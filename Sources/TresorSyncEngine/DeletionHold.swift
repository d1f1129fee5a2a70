import Foundation
import TresorKeychain
import TresorModel

// The mass-deletion hold for synced items (docs/SYNC.md, "Conflicts and deletions"), by the
// arithmetic the notes' hold shares (``MassDeletionWindow``): the window is kept in the ledger.
extension SyncEngine {
    /// The window as of now (a new one when the last is over).
    private func window(_ transaction: KeychainSyncTransaction) throws -> MassDeletionWindow {
        let stored = try transaction.state(named: StateName.deletionWindow).flatMap { try? JSONDecoder().decode(MassDeletionWindow.self, from: $0) }
        return MassDeletionWindow.current(stored, now: clock())
    }

    /// Whether `count` more deletions, with those applied in the window and those waiting,
    /// make a mass deletion.
    func isMassDeletion(adding count: Int, _ transaction: KeychainSyncTransaction) throws -> Bool {
        guard count > 0 else { return false }
        // While deletions wait for the user, further ones wait with them: one list to confirm.
        guard try !transaction.held().contains(where: { $0.reason == HoldReason.deletion }) else { return true }
        return try window(transaction).isMassDeletion(adding: count, remaining: transaction.syncingItemCount())
    }

    /// Adds deletions applied to the window.
    func countDeletions(_ count: Int, _ transaction: KeychainSyncTransaction) throws {
        guard count > 0 else { return }
        var window = try window(transaction)
        window.deleted += count
        try transaction.setState(try JSONEncoder().encode(window), named: StateName.deletionWindow)
    }

    /// The user confirmed: a new window starts now.
    func confirmDeletions(_ transaction: KeychainSyncTransaction) throws {
        try transaction.setState(try JSONEncoder().encode(MassDeletionWindow(start: clock())), named: StateName.deletionWindow)
    }
}
