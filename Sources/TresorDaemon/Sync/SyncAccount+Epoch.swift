import Foundation
import TresorKeybag
import TresorProtocol
import TresorSync
import TresorSyncClient
import TresorSyncProtocol

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
    ///   - epoch: an epoch a record was sealed under that is not held: fetched from it on.
    /// - Returns: the keys, one of the newest list's epoch among them.
    /// - Throws: `APIError` `.forbidden` when the newest list no longer names this device (it was
    ///   removed: the file says so from then on); `.conflict` when no envelope of that list's
    ///   epoch is there for it yet; `SyncError` for a share that does not verify; `SyncClientError`.
    func circleKeys(
        for history: CircleHistory, _ file: inout SyncAccountFile, _ device: LocalDevice, _ keybag: Keybag, _ client: SyncClient,
        missing epoch: UInt64? = nil
    ) async throws -> CircleKeyring {
        let list = try Self.held(history)
        let keyring = try await fetchedKeys(for: history, &file, device, keybag, client, missing: epoch)
        guard keyring.key(for: list.epoch) != nil else {
            throw APIError(
                .conflict,
                "the circle's key of epoch \(list.epoch) has not reached this device yet (the device that rolled it may not have finished): try again; nothing was changed here"
            )
        }
        return keyring
    }

    /// The keys held, with the server's envelopes for this device opened from `missing` (an
    /// epoch a record was sealed under), or from the newest held + 1 when the newest list's
    /// epoch is not held; saved when it grew. It may still lack the newest list's epoch.
    private func fetchedKeys(
        for history: CircleHistory, _ file: inout SyncAccountFile, _ device: LocalDevice, _ keybag: Keybag, _ client: SyncClient,
        missing epoch: UInt64?
    ) async throws -> CircleKeyring {
        let list = try Self.held(history)
        var keyring = try CircleKeyring(sealed: file.keyring ?? Data(), account: file.account, keybag: keybag)
        let from: UInt64
        if let epoch, keyring.key(for: epoch) == nil {
            from = epoch
        } else if keyring.key(for: list.epoch) == nil {
            from = (keyring.current?.epoch ?? 0) + 1
        } else {
            return keyring
        }
        guard list.member(device.deviceID) != nil else {
            try markRemoved(&file)
            throw APIError(.forbidden, "this device was removed from its sync account: `tresor sync leave` (its data stays)")
        }
        var grew = false
        for envelope in try await client.keyEnvelopes(from: from) {
            let share = try CircleKeyShare(encoded: envelope.blob)
            let key = try Self.opening(share, as: device, trusting: [list] + history.lists.reversed().map(\.list).filter { $0.epoch == share.epoch })
            if keyring.key(for: key.epoch) == nil {
                keyring.insert(key)
                grew = true
            }
        }
        if grew {
            file.keyring = try keyring.sealed(account: file.account, keybag: keybag)
            try file.save(paths)
        }
        return keyring
    }

    // MARK: Rolling the key

    /// How long a device waits for the shares of an epoch it lacks before it rolls anew: the
    /// device that rolled may be between storing the list and storing the shares.
    static let rollGrace: Duration = .seconds(2)

    /// Finishes what a key roll left undone, before a sync seals anything (docs/SYNC.md,
    /// "Devices"): this device's own shares of an epoch it rolled that may not have reached the
    /// server; a new epoch when a device that held the current key is gone (it left) — any
    /// trusted device rolls, the first to store its list wins; a new epoch when the current one's
    /// key never reached this device (its roller stopped after storing the list).
    /// - Returns: the history to sync with (grown by a roll of this device, or as it was).
    func finishingRoll(
        _ history: CircleHistory, _ file: inout SyncAccountFile, _ device: LocalDevice, _ keybag: Keybag, _ client: SyncClient
    ) async throws -> CircleHistory {
        let list = try Self.held(history)
        guard list.member(device.deviceID) != nil else { return history }  // removed: circleKeys says so
        if let epoch = file.sharingEpoch {
            let keyring = try CircleKeyring(sealed: file.keyring ?? Data(), account: file.account, keybag: keybag)
            try await share(epoch, of: keyring, to: list, file, device, client)
            file.sharingEpoch = nil
            try file.save(paths)
        }
        var keyring = try await fetchedKeys(for: history, &file, device, keybag, client, missing: nil)
        if let removing = file.removingDevice {
            // A removal of this device's, cut before the list without the device was stored.
            guard list.member(removing) != nil else {
                file.removingDevice = nil
                try file.save(paths)
                return history
            }
            do {
                return try await finishRemoval(of: removing, history, keyring, &file, device, keybag, client)
            } catch let error as SyncClientError where error.refusalCode == .staleDeviceList {
                // Another device changed the list first: this sync reads it, the next one goes on.
                return try await refreshed(&file, client)
            }
        }
        if keyring.key(for: list.epoch) == nil {
            try await Task.sleep(for: Self.rollGrace)
            keyring = try await fetchedKeys(for: history, &file, device, keybag, client, missing: nil)
        }
        guard keyring.key(for: list.epoch) == nil || !history.keyHoldersGone.isEmpty else { return history }
        do {
            return try await roll(history, to: try list.rolled(), keyring, &file, device, keybag, client)
        } catch let error as SyncClientError where error.refusalCode == .staleDeviceList {
            // Another device changed the list first (it rolled too): this sync reads it.
            return try await refreshed(&file, client)
        }
    }

    /// Takes device `id` out of the circle — the server refuses it from now on — and stores the
    /// next list, without it, in a new epoch whose key is shared to the rest; then forgets the
    /// removal it remembered (``SyncAccountFile/removingDevice``), so a removal cut anywhere
    /// before is finished by this device's next sync (``finishingRoll(_:_:_:_:_:)``).
    /// - Returns: the grown history.
    /// - Throws: `SyncClientError` (`staleDeviceList` when the list changed meanwhile).
    func finishRemoval(
        of id: String, _ history: CircleHistory, _ keyring: CircleKeyring, _ file: inout SyncAccountFile, _ device: LocalDevice,
        _ keybag: Keybag, _ client: SyncClient
    ) async throws -> CircleHistory {
        // Read once the server refuses it: nothing it sends afterwards is among what stays accepted.
        try await client.removeDevice(id)
        let next = try Self.held(history).removing(id, lastAcceptedSequence: try await Self.lastSequence(of: id, client))
        let grown = try await roll(history, to: next, keyring, &file, device, keybag, client)
        file.removingDevice = nil
        try file.save(paths)
        return grown
    }

    /// Stores `next` — signed by this device, a new epoch — in place of the history's newest
    /// list, then a new circle key shared to `next`'s members and, with every earlier epoch, to
    /// the recovery identity. The list goes first (compare-and-swap: one roller wins); the key is
    /// kept here, marked as still being shared, before its shares go, so a roll cut after the
    /// list is finished by this device's next sync — or, if the key was lost with the cut, by
    /// another device rolling anew.
    /// - Returns: the grown history.
    /// - Throws: `SyncClientError` (`staleDeviceList` when the list changed meanwhile: nothing stored).
    func roll(
        _ history: CircleHistory, to next: TrustedDeviceList, _ keyring: CircleKeyring, _ file: inout SyncAccountFile, _ device: LocalDevice,
        _ keybag: Keybag, _ client: SyncClient
    ) async throws -> CircleHistory {
        let held = try Self.held(history)
        let signed = try next.signed(by: device)
        let key = CircleKey.generate(epoch: next.epoch)
        let grown = history.appending(signed)
        try await client.putDeviceList(SyncDeviceListUpdate(expectedVersion: held.version, version: next.version, blob: grown.encoded))
        var keyring = keyring
        keyring.insert(key)
        file.history = grown.encoded
        file.keyring = try keyring.sealed(account: file.account, keybag: keybag)
        file.sharingEpoch = key.epoch
        try file.save(paths)
        try await share(key.epoch, of: keyring, to: next, file, device, client)
        file.sharingEpoch = nil
        try file.save(paths)
        return grown
    }

    /// Shares epoch `epoch`'s key to `list`'s members, and every epoch held to the recovery
    /// identity — again, signed by this device: a share opens only from a member of the list,
    /// and the device that shared an earlier epoch may be gone now.
    private func share(
        _ epoch: UInt64, of keyring: CircleKeyring, to list: TrustedDeviceList, _ file: SyncAccountFile, _ device: LocalDevice,
        _ client: SyncClient
    ) async throws {
        guard let key = keyring.key(for: epoch) else { return }
        try await client.putKeyEnvelopes(
            try list.members.map {
                SyncKeyEnvelope(deviceID: $0.deviceID, epoch: key.epoch, blob: try key.share(to: $0, account: file.account, from: device).encoded)
            })
        try await client.putRecoveryEnvelopes(
            try keyring.keys.map {
                SyncRecoveryEnvelope(epoch: $0.epoch, blob: try $0.share(to: list.recovery, account: file.account, from: device).encoded)
            })
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
