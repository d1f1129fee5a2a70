import Foundation
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSync
import TresorSyncClient
import TresorSyncProtocol
import TresorSystem

/// A trusted device's work on the circle (docs/SYNC.md, "Devices"): the pending join requests,
/// approving and denying them, the devices, removing one with a key roll, leaving, and the
/// account's status.
extension SyncAccount {
    /// The pending join requests, with the words this device computes for its own circle.
    func pendingRequests() async throws -> [SyncPendingRequest] {
        try await SyncAPIErrors.mapped {
            let (file, device, _) = try trusted()
            let client = try keptClient(file, device: device)
            let circleID = file.circleID ?? ""
            return try await client.joinRequests().map { request in
                let words = (try? Self.identity(of: request)).map {
                    JoinRequest(identity: $0, nonce: request.nonce).fingerprintWords(circleID: circleID)
                }
                return SyncPendingRequest(
                    requestID: request.requestID, deviceID: request.deviceID, deviceName: request.deviceName,
                    words: words ?? ["(unreadable identity: deny it)"], expires: request.expires)
            }
        }
    }

    /// The pending request `reference` names: its id, or a start of it that no other pending
    /// request's id shares (the words a request shows are how the user tells them apart).
    static func pendingRequest(named reference: String, among pending: [SyncJoinRequest]) throws -> SyncJoinRequest {
        let lowered = reference.lowercased()
        let matches = lowered.isEmpty ? [] : pending.filter { $0.requestID.lowercased().hasPrefix(lowered) }
        if let exact = pending.first(where: { $0.requestID.lowercased() == lowered }) { return exact }
        guard matches.count <= 1 else {
            throw APIError(.param, "\(matches.count) pending join requests start with \(reference): give more of the id")
        }
        guard let only = matches.first else { throw APIError(.notFound, "no pending join request \(reference)") }
        return only
    }

    /// Approves a join request: the next list adds the device, and it gets every circle key
    /// this device holds. The caller checked the passcode.
    func approve(_ reference: String) async throws {
        try await SyncAPIErrors.mapped {
            var (file, device, keybag) = try trusted()
            let client = try keptClient(file, device: device)
            var history = try await refreshed(&file, client)
            let request = try Self.pendingRequest(named: reference, among: try await client.joinRequests())
            let identity = try Self.identity(of: request)
            let held = try Self.held(history)
            let next = try held.adding(identity).signed(by: device)
            let keyring = try await circleKeys(for: history, &file, device, keybag, client)
            guard let current = keyring.key(for: held.epoch) else { throw SyncError.unknownEpoch(held.epoch) }
            history = history.appending(next)
            try await client.approve(
                request.requestID,
                SyncApproval(
                    deviceList: SyncDeviceListUpdate(expectedVersion: held.version, version: next.list.version, blob: history.encoded),
                    envelope: SyncKeyEnvelope(
                        deviceID: identity.deviceID, epoch: current.epoch,
                        blob: try current.share(to: identity, account: file.account, from: device).encoded)))
            file.history = history.encoded
            try file.save(paths)
            let older = try keyring.keys.filter { $0.epoch != current.epoch }.map {
                SyncKeyEnvelope(
                    deviceID: identity.deviceID, epoch: $0.epoch, blob: try $0.share(to: identity, account: file.account, from: device).encoded)
            }
            if !older.isEmpty { try await client.putKeyEnvelopes(older) }
        }
    }

    /// Denies a join request: the server refuses that device from then on.
    func deny(_ requestID: String) async throws {
        try await SyncAPIErrors.mapped {
            let (file, device, _) = try trusted()
            let client = try keptClient(file, device: device)
            try await client.deny(try Self.pendingRequest(named: requestID, among: try await client.joinRequests()).requestID)
        }
    }

    /// The trusted devices of the list this device holds (after accepting a newer one the
    /// server has, signed by a device it trusts). With the server out of reach, those of the
    /// list held, saying so.
    func devices() async throws -> SyncDevicesAnswer {
        try await SyncAPIErrors.mapped {
            var (file, device, _) = try trusted()
            let client = try keptClient(file, device: device)
            let history: CircleHistory
            var unreachable: String?
            do {
                history = try await refreshed(&file, client)
            } catch SyncClientError.unreachable(let why) {
                guard let held = file.history else { throw SyncClientError.unreachable(why) }
                history = try CircleHistory(encoded: held)
                unreachable = why
            }
            let devices = try Self.held(history).members.map {
                SyncDeviceInfo(deviceID: $0.deviceID, name: $0.name, isThisDevice: $0.deviceID == file.deviceID)
            }
            return SyncDevicesAnswer(devices: devices, serverUnreachable: unreachable)
        }
    }

    /// Removes a device: the server refuses it at once, the next list drops it and starts a new
    /// epoch whose key goes to the remaining devices and the recovery identity only.
    /// - Parameter which: the device's id, or its name when one device has it.
    func remove(_ which: String) async throws -> SyncDeviceInfo {
        try await SyncAPIErrors.mapped {
            var (file, device, keybag) = try trusted()
            let client = try keptClient(file, device: device)
            let history = try await refreshed(&file, client)
            let held = try Self.held(history)
            let named = held.members.filter { $0.deviceID == which || $0.name == which }
            guard named.count == 1, let gone = named.first else {
                throw APIError(
                    named.isEmpty ? .notFound : .param,
                    named.isEmpty ? "no trusted device \(which)" : "\(named.count) devices are named \(which): give its id")
            }
            guard gone.deviceID != device.deviceID else { throw APIError(.param, "this is this device: `tresor sync leave` takes it out") }
            // Every epoch up to the list's first: each is shared to the recovery identity again.
            let keyring = try await circleKeys(for: history, &file, device, keybag, client)
            file.removingDevice = gone.deviceID
            try file.save(paths)
            _ = try await finishRemoval(of: gone.deviceID, history, keyring, &file, device, keybag, client)
            return SyncDeviceInfo(deviceID: gone.deviceID, name: gone.name, isThisDevice: false)
        }
    }

    /// This device leaves: the server forgets it (when it can be reached), and the home forgets
    /// its sync identity, circle keys and account. Its keychain and notes stay.
    /// - Returns: whether the server took the removal.
    func leave() async throws -> Bool {
        guard let file = try SyncAccountFile.load(paths) else { throw APIError(.notFound, "this device is in no sync account") }
        var told = false
        if file.membership != .removed, let keybag = try? slot.keybag(),
            let device = try? LocalDevice.load(from: paths.syncDeviceIdentity, keybag: keybag),
            let client = try? Self.client(file, device: device)
        {
            if file.membership == .trusted { await signOwnDeparture(file, device, client) }
            do {
                try await client.removeDevice(device.deviceID)
                told = true
            } catch {
                told = false
            }
        }
        await forgetKeptClient()
        SecureFiles.overwriteAndRemove(paths.syncDeviceIdentity)
        SecureFiles.overwriteAndRemove(paths.syncUnfinishedJoin)
        SecureFiles.overwriteAndRemove(paths.syncAccount)
        HeldPages.remove(paths)
        return told
    }

    /// Signs and stores the list without this device (``TrustedDeviceList/leaving(_:lastAcceptedSequence:)``),
    /// so that the other devices stop naming it at their next look. Best effort: when it fails
    /// (the server unreachable, the list changed meanwhile, this the last device), the list
    /// names the device until another removes it.
    private func signOwnDeparture(_ file: SyncAccountFile, _ device: LocalDevice, _ client: SyncClient) async {
        var file = file
        guard let history = try? await refreshed(&file, client), let held = try? Self.held(history), held.members.count > 1,
            let last = try? await Self.lastSequence(of: device.deviceID, client),
            let next = try? held.leaving(device, lastAcceptedSequence: last)
        else { return }
        try? await client.putDeviceList(
            SyncDeviceListUpdate(expectedVersion: held.version, version: next.list.version, blob: history.appending(next).encoded))
    }

    /// What this device knows of its sync account, without asking the server.
    func status() throws -> SyncStatusAnswer {
        guard let file = try SyncAccountFile.load(paths) else { return SyncStatusAnswer(joined: false) }
        let list = file.history.flatMap { try? Self.held(try CircleHistory(encoded: $0)) }
        var status = SyncStatusAnswer(
            joined: true, server: file.server, account: file.account, deviceID: file.deviceID, deviceName: file.deviceName, state: file.membership,
            listVersion: list?.version, epoch: list?.epoch,
            trustedDevices: (list?.members ?? []).map {
                SyncDeviceInfo(deviceID: $0.deviceID, name: $0.name, isThisDevice: $0.deviceID == file.deviceID)
            },
            requestID: file.requestID)
        status.heldWhileLocked = (try? HeldPages.load(paths))?.recordCount
        return status
    }
}
