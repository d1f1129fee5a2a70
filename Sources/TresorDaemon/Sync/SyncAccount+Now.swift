import Foundation
import TresorKeychain
import TresorNotes
import TresorProtocol
import TresorSync
import TresorSyncClient
import TresorSyncEngine

extension SyncAccount {
    /// One sync of the login keychain (docs/SYNC.md, "What syncs"): records the syncing items
    /// made before sync was turned on, pushes this device's changes, pulls until up to date, and
    /// applies what waited for an unlock — what was pulled while locked first (``applyHeldPages(_:_:_:_:)``).
    /// Before it seals anything it finishes a key roll left undone, or rolls the key when a
    /// device that held it left (``finishingRoll(_:_:_:_:_:)``). Built afresh each time from the account's current keys
    /// and trusted list, so a key roll or a new device counts at once: a newer list's epoch
    /// fetches this device's envelope of it first (``circleKeys(for:_:_:_:_:)``), and so does a
    /// record sealed under an epoch past the list read (the key rolled during this sync).
    /// - Parameters:
    ///   - keychain: the login keychain.
    ///   - notes: the home's notes, synced after the keychain (docs/SYNC.md, "Notes").
    ///   - allowDeletions: lets a held mass deletion through.
    /// - Returns: what happened.
    /// One at a time, in the order asked — `tresor sync now` and the background sync may ask
    /// together, and two pulls at once would each apply the same page.
    /// - Throws: `APIError` (not joined, waiting, removed, locked, server unreachable…).
    func syncNow(_ keychain: KeychainStore, notes: NotesStore?, allowDeletions: Bool) async throws -> SyncNowAnswer {
        try await oneAtATime { try await self.syncAlone(keychain, notes: notes, allowDeletions: allowDeletions) }
    }

    /// Runs `body` after what was asked before it (a sync, a pull while locked) ended.
    func oneAtATime<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let previous = lastSync
        let run = Task {
            await previous?.value
            return try await body()
        }
        lastSync = Task { _ = await run.result }
        return try await run.value
    }

    private func syncAlone(_ keychain: KeychainStore, notes: NotesStore?, allowDeletions: Bool) async throws -> SyncNowAnswer {
        try await SyncAPIErrors.mapped {
            var (file, device, keybag) = try trusted()
            guard keybag.lockState == .unlocked else {
                throw KeychainError.interactionNotAllowed("syncing needs the keybag unlocked: `tresor unlock`")
            }
            // The ledger is this account's and this identity's: what was sealed before this
            // device left and joined again is sealed anew, another account's cursor forgotten.
            try SyncEngine.adoptLedger(in: keychain, account: file.ledgerAccount, deviceID: device.deviceID)
            // What was pulled while locked first, with no server needed (it may be gone since).
            let unheld = try await applyHeldPages(keychain, file, device, keybag)
            let client = try keptClient(file, device: device)
            // Where the account stands: the list, the records and the notes are read only where
            // this device is behind, so a sync with nothing to do is this one request.
            let state = try await rememberingRemoval(&file) { try await client.state() }
            let history = try await finishingRoll(
                try await refreshed(&file, client, serverVersion: state.deviceListVersion), &file, device, keybag, client)
            let list = try Self.held(history)
            var engine = SyncEngine(
                transport: client, device: device, list: list, keys: try await circleKeys(for: history, &file, device, keybag, client),
                keychain: keychain)
            let recorded = try keychain.recordSyncingItemsWithoutRecord()
            // A refusal of this device's changes does not keep the others' from it: they are
            // fetched, and the refusal is told after (``PushRefusal``).
            var pushed = 0, refusal: PushRefusal?
            do {
                pushed = try await engine.push()
            } catch let error as SyncClientError {
                guard let refused = PushRefusal(error) else { throw error }
                refusal = refused
            }
            var pulled = PullSummary()
            let applied = try SyncEngine.appliedCursor(in: keychain)
            if allowDeletions || pushed > 0 || state.records > applied {
                do {
                    pulled = try await engine.pull(allowDeletions: allowDeletions)
                } catch SyncError.pageRefused(_, _, .unknownEpoch(let epoch)) {
                    // The key rolled after this sync read the list, or a record is of an epoch this
                    // device skipped (another roll overtook it): read the list and the keys again.
                    let newer = try await refreshed(&file, client)
                    engine = SyncEngine(
                        transport: client, device: device, list: try Self.held(newer),
                        keys: try await circleKeys(for: newer, &file, device, keybag, client, missing: epoch), keychain: keychain)
                    pulled = try await engine.pull(allowDeletions: allowDeletions)
                }
            }
            let released = try engine.applyHeld()
            pulled.applied += released.applied + unheld.applied
            pulled.conflictsKept += released.conflictsKept + unheld.conflictsKept
            var notesSynced: SyncNowNotes?
            if let notes {
                notesSynced = try await syncNotes(
                    notes, account: file.ledgerAccount, client: client, server: state, allowDeletions: allowDeletions)
            }
            if let refusal { throw refusal.error(appliedFromOthers: pulled.applied + (notesSynced?.applied ?? 0)) }
            try recordSyncEnded(keychain)
            return SyncNowAnswer(
                recorded: recorded, pushed: pushed, applied: pulled.applied, conflictsKept: pulled.conflictsKept, held: released.held,
                heldDeletions: released.heldDeletions, notes: notesSynced)
        }
    }
}
