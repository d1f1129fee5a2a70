import Foundation
import TresorKeychain
import TresorProtocol
import TresorSyncEngine

extension SyncAccount {
    /// The sync engine's state name for when `tresor sync now` last ended (seconds since 1970).
    static let lastSyncState = "last-sync"

    /// What the login keychain's sync ledger holds: changes waiting to go out, conflicts kept,
    /// changes held, and the last sync.
    /// - Parameter keychain: the login keychain.
    /// - Returns: the counters.
    /// - Throws: storage errors.
    nonisolated func counters(_ keychain: KeychainStore) throws -> SyncCounters {
        let counts = try SyncEngine.counts(in: keychain)
        let last = try keychain.syncTransaction { try $0.state(named: Self.lastSyncState) }
        return SyncCounters(
            changesWaiting: counts.changesWaiting, conflictsKept: counts.conflictsKept, changesHeld: counts.changesHeld,
            deletionsHeld: counts.deletionsHeld,
            heldDeletions: counts.heldDeletions.map {
                SyncConflictInfo(id: $0.recordID, itemClass: $0.item?.itemClass, attributes: $0.item?.attributes)
            },
            lastSync: last.flatMap { Double(String(decoding: $0, as: UTF8.self)) }.map { Date(timeIntervalSince1970: $0) },
            setAside: counts.setAside.map {
                SyncSetAsideRecord(counter: $0.counter, recordID: $0.recordID, deviceID: $0.deviceID, reason: $0.reason)
            })
    }

    /// Records that a sync ended now.
    /// - Parameter keychain: the login keychain.
    /// - Throws: storage errors.
    nonisolated func recordSyncEnded(_ keychain: KeychainStore) throws {
        try keychain.syncTransaction { try $0.setState(Data(String(Date().timeIntervalSince1970).utf8), named: Self.lastSyncState) }
    }

    /// The losing versions of concurrent edits kept in the login keychain, oldest first.
    /// - Parameter keychain: the login keychain.
    /// - Returns: the conflicts, their attributes nil while their class is locked.
    /// - Throws: storage errors.
    nonisolated func conflicts(_ keychain: KeychainStore) throws -> [SyncConflictInfo] {
        try keychain.syncConflicts().map { SyncConflictInfo(id: $0.id, itemClass: $0.item?.itemClass, attributes: $0.item?.attributes) }
    }
}
