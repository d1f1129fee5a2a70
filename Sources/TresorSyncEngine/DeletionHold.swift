import Foundation
import TresorKeychain

/// The mass-deletion hold (docs/SYNC.md, "Conflicts and deletions"): deletions arriving that add
/// up, within 24 hours of the user's last confirmation, to more than 50 items, or to more than a
/// quarter of them once there are at least 20, wait for the user — however many syncs they come in.
struct DeletionWindow: Codable, Equatable {
    /// When the window started: the user's last confirmation, or the first deletion after a
    /// window ended.
    var start: Date
    /// Deletions applied since.
    var deleted: Int

    static let length: TimeInterval = 24 * 3600
    static let mostItems = 50
    static let quarterFrom = 20
}

extension SyncEngine {
    /// The window as of now (a new one when the last is over).
    private func window(_ transaction: KeychainSyncTransaction) throws -> DeletionWindow {
        let now = clock()
        guard let stored = try transaction.state(named: StateName.deletionWindow),
            let window = try? JSONDecoder().decode(DeletionWindow.self, from: stored),
            now >= window.start, now.timeIntervalSince(window.start) < DeletionWindow.length
        else { return DeletionWindow(start: now, deleted: 0) }
        return window
    }

    /// Whether `count` more deletions, with those applied in the window and those waiting,
    /// make a mass deletion.
    func isMassDeletion(adding count: Int, _ transaction: KeychainSyncTransaction) throws -> Bool {
        guard count > 0 else { return false }
        let window = try window(transaction)
        let waiting = try transaction.held().filter { $0.reason == HoldReason.deletion }.count
        // While deletions wait for the user, further ones wait with them: one list to confirm.
        guard waiting == 0 else { return true }
        let total = window.deleted + count
        // The items there were when the window started: those left and those it deleted.
        let items = try transaction.syncingItemCount() + window.deleted
        return total > DeletionWindow.mostItems || (items >= DeletionWindow.quarterFrom && total * 4 > items)
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
        try transaction.setState(try JSONEncoder().encode(DeletionWindow(start: clock(), deleted: 0)), named: StateName.deletionWindow)
    }
}
