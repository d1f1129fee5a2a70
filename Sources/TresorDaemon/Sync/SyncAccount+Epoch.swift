import Foundation
import TresorKeybag
import TresorProtocol
import TresorSync
import TresorSyncClient

extension SyncAccount {
    /// The circle keys this device holds, with every newer epoch up to the newest list's opened
    /// from the envelopes the server keeps for it (docs/SYNC.md, "Devices"): a device that did
    /// not make a key roll learns it at its next sync, removal or approval. Each share must be
    /// for this device and signed by a member of the newest verified list or of a verified list
    /// of the share's own epoch (the device that rolled an earlier epoch may have been removed
    /// since). Keys held stay as they are, so older records still open. The keyring is saved
    /// when it grew.
    /// - Parameters:
    ///   - history: the circle's lists this device verified.
    ///   - file: the home's sync account, saved with the grown keyring.
    ///   - device: this device.
    ///   - keybag: the unlocked keybag the keyring is sealed under.
    ///   - client: the server.
    /// - Returns: the keys, one of the newest list's epoch among them.
    /// - Throws: `APIError` `.forbidden` when the newest list no longer names this device (it was
    ///   removed: the file says so from then on); `.conflict` when no envelope of that list's
    ///   epoch is there for it yet; `SyncError` for a share that does not verify; `SyncClientError`.
    func circleKeys(
        for history: CircleHistory, _ file: inout SyncAccountFile, _ device: LocalDevice, _ keybag: Keybag, _ client: SyncClient
    ) async throws -> CircleKeyring {
        let list = try Self.held(history)
        var keyring = try CircleKeyring(sealed: file.keyring ?? Data(), account: file.account, keybag: keybag)
        guard keyring.key(for: list.epoch) == nil else { return keyring }
        guard list.member(device.deviceID) != nil else {
            file.membership = .removed
            try file.save(paths)
            throw APIError(.forbidden, "this device was removed from its sync account: `tresor sync leave` (its data stays)")
        }
        let newest = keyring.current?.epoch ?? 0
        for envelope in try await client.keyEnvelopes(from: newest + 1) {
            let share = try CircleKeyShare(encoded: envelope.blob)
            let key = try Self.opening(share, as: device, trusting: [list] + history.lists.reversed().map(\.list).filter { $0.epoch == share.epoch })
            if keyring.key(for: key.epoch) == nil { keyring.insert(key) }
        }
        guard keyring.key(for: list.epoch) != nil else {
            throw APIError(
                .conflict,
                "the circle's key of epoch \(list.epoch) has not reached this device yet (the device that rolled it may not have finished): try again; nothing was changed here"
            )
        }
        file.keyring = try keyring.sealed(account: file.account, keybag: keybag)
        try file.save(paths)
        return keyring
    }

    /// The share opened trusting the first of `lists` it verifies with; the first's refusal when none.
    private static func opening(_ share: CircleKeyShare, as device: LocalDevice, trusting lists: [TrustedDeviceList]) throws -> CircleKey {
        var refusal: (any Error)?
        for list in lists {
            do {
                return try share.open(as: device, trusting: list)
            } catch {
                refusal = refusal ?? error
            }
        }
        throw refusal ?? SyncError.shareNotOpened
    }
}
