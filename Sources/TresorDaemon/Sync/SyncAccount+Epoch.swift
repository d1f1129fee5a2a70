import Foundation
import TresorKeybag
import TresorProtocol
import TresorSync
import TresorSyncClient

extension SyncAccount {
    /// The circle keys this device holds, with every newer epoch up to `list`'s opened from the
    /// envelopes the server keeps for it (docs/SYNC.md, "Devices"): a device that did not make a
    /// key roll learns it at its next sync. Each share must be for this device and signed by a
    /// member of `list` (the verified list); keys held stay as they are, so older records still
    /// open. The keyring is saved when it grew.
    /// - Parameters:
    ///   - list: the newest trusted-device list this device verified.
    ///   - file: the home's sync account, saved with the grown keyring.
    ///   - device: this device.
    ///   - keybag: the unlocked keybag the keyring is sealed under.
    ///   - client: the server.
    /// - Returns: the keys, one of `list`'s epoch among them.
    /// - Throws: `APIError` `.forbidden` when `list` no longer names this device (it was removed:
    ///   the file says so from then on); `.conflict` when no envelope of `list`'s epoch is there
    ///   for it yet; `SyncError` for a share that does not verify; `SyncClientError`.
    func circleKeys(
        for list: TrustedDeviceList, _ file: inout SyncAccountFile, _ device: LocalDevice, _ keybag: Keybag, _ client: SyncClient
    ) async throws -> CircleKeyring {
        var keyring = try CircleKeyring(sealed: file.keyring ?? Data(), account: file.account, keybag: keybag)
        guard keyring.key(for: list.epoch) == nil else { return keyring }
        guard list.member(device.deviceID) != nil else {
            file.membership = .removed
            try file.save(paths)
            throw APIError(.forbidden, "this device was removed from its sync account: `tresor sync leave` (its data stays)")
        }
        let newest = keyring.current?.epoch ?? 0
        for envelope in try await client.keyEnvelopes(from: newest + 1) {
            let key = try CircleKeyShare(encoded: envelope.blob).open(as: device, trusting: list)
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
}
