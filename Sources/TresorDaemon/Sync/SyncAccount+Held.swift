import Foundation
import TresorKeybag
import TresorKeychain
import TresorModel
import TresorNotes
import TresorProtocol
import TresorSync
import TresorSyncClient
import TresorSyncEngine
import TresorSyncProtocol

extension SyncAccount {
    /// While the keybag is locked (after an unlock since start: the device's sign-in key opens),
    /// pulls the account's pages and holds them as they came (``HeldPages``), applying nothing,
    /// up to ``HeldPages/byteLimit``; and syncs the notes, whose class (`afterFirstUnlock`) a
    /// locked keybag still opens (docs/SYNC.md, "While locked"). One at a time with the syncs
    /// (``syncNow(_:notes:allowDeletions:)``).
    /// - Parameters:
    ///   - keychain: the login keychain (where the applied cursor is).
    ///   - notes: the home's notes.
    /// - Returns: the records held.
    /// - Throws: `APIError` (not a trusted member, the server unreachable, the limit reached).
    func holdWhileLocked(_ keychain: KeychainStore, notes: NotesStore?) async throws -> Int {
        try await oneAtATime { try await self.holdAlone(keychain, notes: notes) }
    }

    private func holdAlone(_ keychain: KeychainStore, notes: NotesStore?) async throws -> Int {
        try await SyncAPIErrors.mapped {
            var (file, device, keybag) = try trusted()
            var held = try HeldPages.load(paths)
            // Unlocked meanwhile: the sync that follows the unlock reads the server itself.
            guard keybag.lockState == .locked else { return held.recordCount }
            let client = try keptClient(file, device: device)
            try SyncEngine.adoptLedger(in: keychain, account: file.ledgerAccount, deviceID: device.deviceID)
            var cursor = try held.cursor ?? SyncEngine.appliedCursor(in: keychain)
            var more = true
            while more && !held.isFull {
                let page: SyncPage
                do {
                    page = try await client.page(after: cursor, limit: SyncLimits.defaultPageRecords)
                } catch let error as SyncClientError where error.refusalCode == .deviceRemoved {
                    try markRemoved(&file)
                    throw error
                }
                guard !page.records.isEmpty, page.cursor > cursor else { break }
                try held.append(page, after: cursor, paths)
                cursor = page.cursor
                more = page.more
            }
            if let notes { _ = try await syncNotes(notes, account: file.ledgerAccount, client: client) }
            if held.isFull && more {
                throw APIError(
                    .quotaExceeded,
                    "\(held.recordCount) records pulled while the keybag is locked are held, the most kept (\(ByteSize(HeldPages.byteLimit))): the rest waits on the server until the unlock"
                )
            }
            return held.recordCount
        }
    }

    /// Applies the pages held while locked, as a pull from the server would (every check of
    /// ``SyncEngine/pull(allowDeletions:)``: signatures, sequences, epochs, the mass-deletion
    /// hold), with no server needed; then forgets them. A page that does not verify is refused
    /// with nothing of it applied, and the held pages are forgotten: the next sync reads them
    /// again from the server, after the pages applied. A record of a device that joined, or
    /// under a key that rolled, while locked is no refusal: the pages are forgotten, and this
    /// sync's own pull reads them from the server after refreshing the list and keys.
    /// - Returns: what was applied.
    /// - Throws: `APIError` `.conflict` for a refused held page; storage errors (the pages stay).
    func applyHeldPages(_ keychain: KeychainStore, _ file: SyncAccountFile, _ device: LocalDevice, _ keybag: Keybag) async throws -> PullSummary {
        guard HeldPages.exist(paths) else { return PullSummary() }
        do {
            guard let history = file.history else { throw SyncError.invalidList("no list") }
            let engine = SyncEngine(
                transport: HeldPagesTransport(held: try HeldPages.load(paths)), device: device,
                list: try Self.held(try CircleHistory(encoded: history)),
                keys: try CircleKeyring(sealed: file.keyring ?? Data(), account: file.account, keybag: keybag), keychain: keychain)
            let summary = try await engine.pull(allowDeletions: false)
            HeldPages.remove(paths)
            return summary
        } catch SyncError.pageRefused(_, _, let reason) where reason.isUnknownEpochOrDevice {
            // The key rolled, or a device joined, while locked: the sync's own pull reads these
            // pages again from the server, with the list and keys it refreshed first.
            HeldPages.remove(paths)
            return PullSummary()
        } catch let error as SyncError {
            HeldPages.remove(paths)
            throw APIError(
                .conflict,
                "refused a page held while the keybag was locked: \(error.description); nothing of it applied, the next sync reads it again from the server"
            )
        } catch let error as HeldPagesError {
            HeldPages.remove(paths)
            throw APIError(.conflict, "\(error.description); nothing of them applied, the next sync reads them again from the server")
        }
    }
}

extension RecordRefusal {
    /// A refusal of a record of a device or epoch the list and keys held while locked do not know yet.
    fileprivate var isUnknownEpochOrDevice: Bool {
        switch self {
        case .unknownEpoch, .unknownDevice: return true
        default: return false
        }
    }
}
