import Foundation
import TresorKeychain

extension SyncEngine {
    /// The losing versions kept by conflicts (``KeychainStore/syncConflicts()``).
    /// - Returns: the conflicts, oldest first.
    /// - Throws: storage errors.
    public func conflicts() throws -> [KeptConflict] {
        try keychain.syncConflicts()
    }

    /// Brings a losing version back as a change of this device (``KeychainStore/restoreSyncConflict(_:caller:)``);
    /// the next push sends it to the others.
    /// - Parameters:
    ///   - id: the conflict's id.
    ///   - caller: who asks (replacing a secret needs them present as reading it does).
    /// - Throws: ``KeychainError/itemNotFound`` for an unknown id; ``KeychainError/presenceRequired(_:)``;
    ///   ``KeychainError/interactionNotAllowed(_:)`` while its class is locked.
    public func restoreConflict(_ id: String, caller: Caller) throws {
        try keychain.restoreSyncConflict(id, caller: caller)
    }

    /// The changes that arrived and wait: for an unlock, or for the user (a mass deletion).
    /// - Returns: how many wait, and how many of them are deletions.
    /// - Throws: storage errors.
    public func waiting() throws -> (changes: Int, deletions: Int) {
        try keychain.syncTransaction { transaction in
            let held = try transaction.held()
            return (held.count, held.filter { $0.reason == HoldReason.deletion }.count)
        }
    }
}
