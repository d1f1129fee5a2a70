import Foundation
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSync
import TresorSyncClient
import TresorSyncProtocol
import TresorSystem

/// This device's sync account (docs/SYNC.md, "Devices"): joining (creating the circle, or
/// asking a trusted device), approving and denying others, recovering with the recovery key,
/// removing a device with a key roll, leaving. One operation at a time (an actor): each reads
/// the home's ``SyncAccountFile``, talks to the server, and writes the file only once the
/// server took the change and everything it sent verified — so a failure changes nothing here.
actor SyncAccount {
    /// What the last sync of attachments could not do (``syncAttachments(_:client:)``).
    var lastAttachmentSync = AttachmentSyncReport()
    let paths: TresorPaths
    let slot: KeybagSlot
    /// The last sync asked for: the next one starts after it ends (``syncNow(_:notes:allowDeletions:)``).
    var lastSync: Task<Void, Never>?
    /// The client a trusted member's syncs and live stream share, with its session, for the
    /// daemon's life (``keptClient(_:device:)``); which account and device it is for.
    var kept: (of: String, client: SyncClient)?
    /// The account's notes settings counter (``SyncAccountState/notesSettings``) as this daemon's
    /// last notes sync read it before it began: while the server's stays there and nothing changed
    /// here, a sync asks for neither the folders nor the passphrase.
    var notesSettingsSeen: UInt64?

    init(paths: TresorPaths, slot: KeybagSlot) {
        self.paths = paths
        self.slot = slot
    }

    // MARK: Joining

    /// Joins `body.account` on `body.server`: the account's first device creates the circle
    /// and gets the recovery key (returned once, stored nowhere); a further device sends a
    /// join request and gets the fingerprint words to compare on a trusted device.
    func join(_ body: SyncJoinRequestBody) async throws -> SyncJoinAnswer {
        try await SyncAPIErrors.mapped {
            let (server, account, keybag) = try prepare(server: body.server, account: body.account, keepingIdentity: true)
            let trust = try Self.trust(body.caCertificates)
            var (device, reused) = try joiningDevice(named: try Self.deviceName(body.deviceName), keybag: keybag)
            var client = Self.client(server, account: account, device: device, trust: trust)
            // An earlier try's recovery key when this is its device: the circle it made may name it.
            let recovery = (reused ? unfinishedJoinRecoveryKey(of: device, keybag) : nil) ?? RecoveryKey.generate()
            try SecureFiles.writeAtomically(try recovery.sealed(deviceID: device.deviceID, keybag: keybag), to: paths.syncUnfinishedJoin)
            defer { if (try? SyncAccountFile.load(paths)) != nil { SecureFiles.overwriteAndRemove(paths.syncUnfinishedJoin) } }
            var enrolled: SyncEnrollmentResponse
            do {
                enrolled = try await registeringFirst(
                    client, invite: body.invite, account: account, password: body.password,
                    enrollment(account: account, password: body.password, device: device, recovery: recovery))
            } catch let error as SyncClientError where reused && error.refusalCode == .conflict {
                // This device enrolled in an earlier try of this join, which stopped half-way.
                let served = (try? await client.signIn()) == .trusted ? try await client.deviceList() : nil
                if served?.version == 0 {
                    enrolled = SyncEnrollmentResponse(state: .trusted, createdCircle: true, joinRequest: nil)
                } else if let blob = served?.blob, let history = try? CircleHistory(encoded: blob), history.lists.first?.signerID == device.deviceID {
                    // It stored the circle's first list, and the answer was lost: the circle is this device's.
                    return try await takeUpCircle(
                        history, client, server: server, account: account, device: device, recovery: recovery, keybag: keybag,
                        caCertificates: body.caCertificates)
                } else {
                    // Its earlier request is lost: ask again as a new device.
                    SecureFiles.overwriteAndRemove(paths.syncDeviceIdentity)
                    (device, reused) = try joiningDevice(named: device.identity.name, keybag: keybag)
                    client = Self.client(server, account: account, device: device, trust: trust)
                    enrolled = try await client.enroll(enrollment(account: account, password: body.password, device: device, recovery: recovery))
                }
            } catch {
                // Unless the answer was lost on the way (the server may hold the enrollment), the
                // server refused or is no relay: it holds nothing of this device.
                if case SyncClientError.unreachable = error {
                } else {
                    SecureFiles.overwriteAndRemove(paths.syncDeviceIdentity)
                    SecureFiles.overwriteAndRemove(paths.syncUnfinishedJoin)
                }
                throw error
            }
            if enrolled.createdCircle {
                try await createCircle(
                    client, server: server, account: account, device: device, recovery: recovery, keybag: keybag,
                    caCertificates: body.caCertificates)
                return SyncJoinAnswer(state: .trusted, deviceID: device.deviceID, recoveryKey: recovery.text)
            }
            guard let request = enrolled.joinRequest else { throw SyncClientError.garbage("a pending enrollment without its join request") }
            let history = try await Self.history(client)
            guard let circleID = history.circleID else { throw SyncError.invalidList("the circle's first list is not version 1") }
            let words = JoinRequest(identity: device.identity, nonce: request.nonce).fingerprintWords(circleID: circleID)
            try SyncAccountFile(
                server: server.description, account: account, deviceID: device.deviceID, deviceName: device.identity.name, membership: .waiting,
                requestID: request.requestID, circleID: circleID, caCertificates: body.caCertificates
            ).save(paths)
            return SyncJoinAnswer(state: .waiting, deviceID: device.deviceID, requestID: request.requestID, words: words)
        }
    }

    /// The recovery key an earlier, unfinished try of this join made for `device`, if it kept one.
    private func unfinishedJoinRecoveryKey(of device: LocalDevice, _ keybag: Keybag) -> RecoveryKey? {
        guard let sealed = try? SecureFiles.read(paths.syncUnfinishedJoin, limit: 4096) else { return nil }
        return try? RecoveryKey(sealed: sealed, deviceID: device.deviceID, keybag: keybag)
    }

    /// Finishes a first join whose circle the server holds — this device created it, its first
    /// list signed by this device — though the answer to storing the list was lost: verifies the
    /// lists from that first one, opens the circle key it shared itself, and keeps the account.
    /// The recovery key is the one the earlier try made, kept sealed until now, when the circle
    /// names it.
    private func takeUpCircle(
        _ history: CircleHistory, _ client: SyncClient, server: SyncServerURL, account: String, device: LocalDevice, recovery: RecoveryKey,
        keybag: Keybag, caCertificates: String?
    ) async throws -> SyncJoinAnswer {
        guard let circleID = history.circleID else { throw SyncError.invalidList("the circle's first list is not version 1") }
        let keyring = try await Self.memberKeyring(history, circleID: circleID, device: device, client)
        try SyncAccountFile(
            server: server.description, account: account, deviceID: device.deviceID, deviceName: device.identity.name, membership: .trusted,
            circleID: circleID, history: history.encoded, keyring: try keyring.sealed(account: account, keybag: keybag),
            caCertificates: caCertificates
        ).save(paths)
        let named = recovery.identity.identity == history.lists[0].list.recovery
        return SyncJoinAnswer(state: .trusted, deviceID: device.deviceID, recoveryKey: named ? recovery.text : nil)
    }

    /// The circle keys shared to `device`, once the lists of `history` verify from the circle's
    /// first and the newest names it; the current epoch's key must be among them.
    /// - Throws: ``SyncError`` (`invalidList`, `notAMember`, `unknownEpoch`), what the client throws.
    private static func memberKeyring(_ history: CircleHistory, circleID: String, device: LocalDevice, _ client: SyncClient) async throws
        -> CircleKeyring
    {
        let list = try TrustedDeviceList.verifyingChain(history.lists, circleID: circleID)
        guard list.member(device.deviceID) != nil else { throw SyncError.notAMember(deviceID: device.deviceID) }
        var keyring = CircleKeyring()
        for envelope in try await client.keyEnvelopes() {
            keyring.insert(try CircleKeyShare(encoded: envelope.blob).open(as: device, trusting: list))
        }
        guard keyring.key(for: list.epoch) != nil else { throw SyncError.unknownEpoch(list.epoch) }
        return keyring
    }

    /// The identity a join enrolls with, saved before the server hears of it: the one an
    /// earlier try of this join left (no account file yet), when it has this name — so a join
    /// that stopped after enrolling finishes as the same device — or a new one.
    /// - Returns: the device, and whether it is the earlier try's.
    private func joiningDevice(named name: String, keybag: Keybag) throws -> (LocalDevice, Bool) {
        if let leftover = try? LocalDevice.load(from: paths.syncDeviceIdentity, keybag: keybag), leftover.identity.name == name {
            return (leftover, true)
        }
        SecureFiles.overwriteAndRemove(paths.syncDeviceIdentity)
        SecureFiles.overwriteAndRemove(paths.syncUnfinishedJoin)
        let device = try LocalDevice.create(name: name)
        try device.save(to: paths.syncDeviceIdentity, keybag: keybag)
        return (device, false)
    }

    /// Enrolls, after registering the web account with `invite` when there is one. A refused
    /// registration (the invite used already, the name taken) is not the end: a join retried
    /// after its registration went through enrolls with the account it made. Its refusal is
    /// what the user reads when the enrollment cannot sign in either.
    private func registeringFirst(
        _ client: SyncClient, invite: String?, account: String, password: String, _ enrollment: SyncEnrollment
    ) async throws -> SyncEnrollmentResponse {
        var registrationRefused: SyncClientError?
        if let invite {
            do {
                _ = try await client.registerAccount(SyncAccountRegistration(account: account, password: password, invite: invite))
            } catch let error as SyncClientError where error.refusalCode == .forbidden || error.refusalCode == .conflict {
                registrationRefused = error
            }
        }
        do {
            return try await client.enroll(enrollment)
        } catch let error as SyncClientError where error.refusalCode == .unauthorized {
            if let registrationRefused {
                throw APIError(
                    .authFailed, "\(registrationRefused.description), and signing in to an existing account failed; nothing was changed here")
            }
            throw APIError(
                .authFailed,
                "\(error.description): the web account must exist (register it, or give --invite where the server registers by invite); nothing was changed here"
            )
        }
    }

    /// The first device: the version-1 list naming it and the recovery identity, the
    /// recovery key's endorsement, the epoch-1 circle key shared to both.
    private func createCircle(
        _ client: SyncClient, server: SyncServerURL, account: String, device: LocalDevice, recovery: RecoveryKey, keybag: Keybag,
        caCertificates: String?
    ) async throws {
        let first = try TrustedDeviceList.create(account: account, device: device, recoveryKey: recovery)
        guard let circleID = first.list.circleID else { throw SyncError.invalidList("a new circle's list is version 1") }
        let history = CircleHistory(lists: [first], endorsement: try recovery.endorse(circleID: circleID))
        let key = CircleKey.generate(epoch: 1)
        try await client.putKeyEnvelopes([
            SyncKeyEnvelope(deviceID: device.deviceID, epoch: 1, blob: try key.share(to: device.identity, account: account, from: device).encoded)
        ])
        try await client.putRecoveryEnvelopes([
            SyncRecoveryEnvelope(epoch: 1, blob: try key.share(to: recovery.identity.identity, account: account, from: device).encoded)
        ])
        // The list last, naming the recovery key it was made with: until the server holds it,
        // a retried join finishes the circle with a recovery key of its own (docs/SYNC.md, "Devices").
        try await client.putDeviceList(
            SyncDeviceListUpdate(expectedVersion: 0, version: 1, blob: history.encoded, recoveryPublicKey: recovery.identity.identity.signingKey))
        try SyncAccountFile(
            server: server.description, account: account, deviceID: device.deviceID, deviceName: device.identity.name, membership: .trusted,
            circleID: circleID, history: history.encoded, keyring: try CircleKeyring([key]).sealed(account: account, keybag: keybag),
            caCertificates: caCertificates
        ).save(paths)
    }

    /// A waiting device asks once how its request stands; when approved, it verifies the
    /// circle's lists from the first (the circle of its words) and opens its circle keys.
    func check() async throws -> SyncJoinAnswer {
        try await SyncAPIErrors.mapped {
            var file = try required()
            guard file.membership == .waiting, let requestID = file.requestID, let circleID = file.circleID else {
                return SyncJoinAnswer(state: file.membership, deviceID: file.deviceID)
            }
            let (device, keybag) = try localDevice()
            let client = try Self.client(file, device: device)
            let request: SyncJoinRequest
            do {
                request = try await client.joinRequest(requestID)
            } catch let error as SyncClientError where error.refusalCode == .deviceRemoved {
                try markRemoved(&file)
                return SyncJoinAnswer(state: .removed, deviceID: file.deviceID, requestID: requestID)
            }
            switch request.state {
            case .pending: return SyncJoinAnswer(state: .waiting, deviceID: file.deviceID, requestID: requestID)
            case .denied:
                try markRemoved(&file)
                return SyncJoinAnswer(state: .removed, deviceID: file.deviceID, requestID: requestID)
            case .expired:
                throw APIError(.conflict, "the join request expired before a trusted device approved it: `tresor sync leave`, then join again")
            case .approved: break
            }
            let history = try await Self.history(client)
            let keyring = try await Self.memberKeyring(history, circleID: circleID, device: device, client)
            file.membership = .trusted
            file.requestID = nil
            file.history = history.encoded
            file.keyring = try keyring.sealed(account: file.account, keybag: keybag)
            try file.save(paths)
            return SyncJoinAnswer(state: .trusted, deviceID: file.deviceID)
        }
    }

    /// Joins with the recovery key when no trusted device is left: the recovery identity
    /// verifies the circle it endorsed, signs the list that adds this device, and opens the
    /// circle keys wrapped for it.
    func recover(_ body: SyncRecoverRequestBody) async throws -> SyncJoinAnswer {
        try await SyncAPIErrors.mapped {
            let recovery: RecoveryKey
            do {
                recovery = try RecoveryKey(text: body.recoveryKey)
            } catch let error as SyncError {
                throw APIError(.param, error.description)
            }
            let (server, account, keybag) = try prepare(server: body.server, account: body.account)
            let trust = try Self.trust(body.caCertificates)
            let device = try LocalDevice.create(name: try Self.deviceName(body.deviceName))
            let client = Self.client(server, account: account, device: device, trust: trust)
            let enrolled = try await client.enroll(enrollment(account: account, password: body.password, device: device, recovery: recovery))
            if enrolled.createdCircle {
                // No circle yet: this device makes it, for the recovery key the user already has.
                try device.save(to: paths.syncDeviceIdentity, keybag: keybag)
                try await createCircle(
                    client, server: server, account: account, device: device, recovery: recovery, keybag: keybag,
                    caCertificates: body.caCertificates)
                return SyncJoinAnswer(state: .trusted, deviceID: device.deviceID)
            }
            guard let request = enrolled.joinRequest else { throw SyncClientError.garbage("a pending enrollment without its join request") }
            let history = try await Self.history(client)
            let list = try TrustedDeviceList.verifyingChain(history.lists, recoveryKey: recovery, endorsement: history.endorsement)
            let next = try list.adding(device.identity).signed(by: recovery.identity)
            let grown = history.appending(next)
            try await client.recover(
                request.requestID,
                SyncRecovery(
                    signature: try recovery.signRecovery(of: request),
                    deviceList: SyncDeviceListUpdate(expectedVersion: list.version, version: next.list.version, blob: grown.encoded)))
            try await client.signIn()
            var keyring = CircleKeyring()
            for envelope in try await client.recoveryEnvelopes() {
                keyring.insert(try CircleKeyShare(encoded: envelope.blob).open(as: recovery.identity, trusting: next.list))
            }
            guard keyring.key(for: next.list.epoch) != nil else { throw SyncError.unknownEpoch(next.list.epoch) }
            try device.save(to: paths.syncDeviceIdentity, keybag: keybag)
            try SyncAccountFile(
                server: server.description, account: account, deviceID: device.deviceID, deviceName: device.identity.name, membership: .trusted,
                circleID: history.circleID, history: grown.encoded, keyring: try keyring.sealed(account: account, keybag: keybag),
                caCertificates: body.caCertificates
            ).save(paths)
            return SyncJoinAnswer(state: .trusted, deviceID: device.deviceID)
        }
    }

    // MARK: A trusted device's work

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

    /// Approves a join request: the next list adds the device, and it gets every circle key
    /// this device holds. The caller checked the passcode.
    func approve(_ requestID: String) async throws {
        try await SyncAPIErrors.mapped {
            var (file, device, keybag) = try trusted()
            let client = try keptClient(file, device: device)
            var history = try await refreshed(&file, client)
            guard let request = try await client.joinRequests().first(where: { $0.requestID == requestID }) else {
                throw APIError(.notFound, "no pending join request \(requestID)")
            }
            let identity = try Self.identity(of: request)
            let held = try Self.held(history)
            let next = try held.adding(identity).signed(by: device)
            let keyring = try await circleKeys(for: history, &file, device, keybag, client)
            guard let current = keyring.key(for: held.epoch) else { throw SyncError.unknownEpoch(held.epoch) }
            history = history.appending(next)
            try await client.approve(
                requestID,
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
            try await keptClient(file, device: device).deny(requestID)
        }
    }

    /// The trusted devices of the list this device holds (after accepting a newer one the
    /// server has, signed by a device it trusts).
    func devices() async throws -> [SyncDeviceInfo] {
        try await SyncAPIErrors.mapped {
            var (file, device, _) = try trusted()
            let client = try keptClient(file, device: device)
            let history = try await refreshed(&file, client)
            return try Self.held(history).members.map {
                SyncDeviceInfo(deviceID: $0.deviceID, name: $0.name, isThisDevice: $0.deviceID == file.deviceID)
            }
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

    // MARK: Parts

    private func prepare(server text: String, account name: String, keepingIdentity: Bool = false) throws -> (SyncServerURL, String, Keybag) {
        guard try SyncAccountFile.load(paths) == nil else {
            throw APIError(.conflict, "this device is in a sync account already: `tresor sync leave` first")
        }
        let server = try SyncServerURL(text)
        let account = name.lowercased()
        guard (1...64).contains(account.count) else { throw APIError(.param, "an account name is 1 to 64 characters") }
        let keybag = try slot.keybag()
        guard keybag.lockState == .unlocked else { throw KeychainError.interactionNotAllowed("joining a sync account needs the keybag unlocked") }
        // A leftover identity of a join that failed half-way (no account file) is a device of no
        // finished circle; a join retried takes it up again (``joiningDevice(named:keybag:)``).
        if !keepingIdentity {
            SecureFiles.overwriteAndRemove(paths.syncDeviceIdentity)
            SecureFiles.overwriteAndRemove(paths.syncUnfinishedJoin)
        }
        return (server, account, keybag)
    }

    private func enrollment(account: String, password: String, device: LocalDevice, recovery: RecoveryKey) throws -> SyncEnrollment {
        SyncEnrollment(
            account: account, password: password, deviceID: device.deviceID, deviceName: device.identity.name,
            credentialPublicKey: device.identity.signingKey, identity: try JSONEncoder().encode(device.identity),
            recoveryPublicKey: recovery.identity.identity.signingKey)
    }

    private func required() throws -> SyncAccountFile {
        guard let file = try SyncAccountFile.load(paths) else { throw APIError(.notFound, "this device is in no sync account: `tresor sync join`") }
        return file
    }

    private func localDevice() throws -> (LocalDevice, Keybag) {
        let keybag = try slot.keybag()
        guard let device = try LocalDevice.load(from: paths.syncDeviceIdentity, keybag: keybag) else {
            throw APIError(.internal, "the home's sync identity is missing: `tresor sync leave`, then join again")
        }
        return (device, keybag)
    }

    func trusted() throws -> (SyncAccountFile, LocalDevice, Keybag) {
        let file = try required()
        switch file.membership {
        case .trusted: break
        case .waiting: throw APIError(.forbidden, "this device still waits for approval (`tresor sync join` shows its words)")
        case .removed: throw APIError(.forbidden, "this device was removed from its sync account: `tresor sync leave` (its data stays)")
        }
        let (device, keybag) = try localDevice()
        return (file, device, keybag)
    }

    /// The held history, with the server's newer lists accepted one by one (each must be
    /// signed by a device of the list before it); saved when it grew.
    /// - Parameter serverVersion: the version of the server's list when the caller knows it
    ///   (``SyncAccountState``): the list is read only when it is past the one held.
    func refreshed(_ file: inout SyncAccountFile, _ client: SyncClient, serverVersion: UInt64? = nil) async throws -> CircleHistory {
        guard let bytes = file.history else { throw APIError(.internal, "the home's sync account has no device list") }
        let held = try CircleHistory(encoded: bytes)
        if let serverVersion, let version = held.latest?.list.version, serverVersion <= version { return held }
        let served = try await rememberingRemoval(&file) { try await Self.history(client) }
        guard served.lists.count > held.lists.count else { return held }
        var list = try Self.held(held)
        for next in served.lists.dropFirst(held.lists.count) { list = try list.accepting(next) }
        let grown = CircleHistory(lists: held.lists + served.lists.dropFirst(held.lists.count), endorsement: held.endorsement)
        file.history = grown.encoded
        try file.save(paths)
        return grown
    }

    /// This device learnt it was removed (the server refused it, or the newest list no longer
    /// names it): the home's file says so from then on, and the pages held while locked go —
    /// they are of a circle it is no longer in, and nothing will apply them.
    func markRemoved(_ file: inout SyncAccountFile) throws {
        file.membership = .removed
        try file.save(paths)
        HeldPages.remove(paths)
    }

    /// `body`'s answer; when the server says this device was removed, the home says so from then on.
    func rememberingRemoval<T: Sendable>(_ file: inout SyncAccountFile, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SyncClientError where error.refusalCode == .deviceRemoved {
            try markRemoved(&file)
            throw error
        }
    }

    static func held(_ history: CircleHistory) throws -> TrustedDeviceList {
        guard let latest = history.latest else { throw SyncError.invalidList("no list") }
        return latest.list
    }

    static func history(_ client: SyncClient) async throws -> CircleHistory {
        guard let blob = try await client.deviceList().blob else { throw SyncError.invalidList("the server has no device list for this circle") }
        return try CircleHistory(encoded: blob)
    }

    static func identity(of request: SyncJoinRequest) throws -> DeviceIdentity {
        guard let identity = try? JSONDecoder().decode(DeviceIdentity.self, from: request.identity), identity.deviceID == request.deviceID else {
            throw SyncError.malformed("join request \(request.requestID) does not carry its device's identity")
        }
        return identity
    }

    /// The last device sequence the server holds of `deviceID`: its records up to it stay accepted.
    /// The server's device listing says it in one indexed query; a server older than that field
    /// is read page by page.
    static func lastSequence(of deviceID: String, _ client: SyncClient) async throws -> UInt64 {
        if let listed = try await client.devices().first(where: { $0.deviceID == deviceID }), let last = listed.lastSequence { return last }
        var cursor: UInt64 = 0, last: UInt64 = 0
        while true {
            let page = try await client.page(after: cursor, limit: SyncLimits.pageRecords)
            for record in page.records where record.upload.deviceID == deviceID { last = max(last, record.upload.deviceSequence) }
            guard page.more, page.cursor > cursor else { return last }
            cursor = page.cursor
        }
    }

    static func client(_ server: SyncServerURL, account: String, device: LocalDevice, trust: SyncTrust) -> SyncClient {
        SyncClient(
            server: server, credential: SyncCredential(account: account, deviceID: device.deviceID) { try device.answer($0, account: account) },
            trust: trust)
    }

    /// A client of the account's server, trusting what the account trusts.
    static func client(_ file: SyncAccountFile, device: LocalDevice) throws -> SyncClient {
        client(try SyncServerURL(file.server), account: file.account, device: device, trust: try trust(file.caCertificates))
    }

    /// The client of the account's server kept for the daemon's life, made at its first use: its
    /// session (and connection) serve every sync until the server refuses it — expired, or
    /// forgotten — when it signs in again; a removed device's session is refused at its next
    /// request, as the server reads the device's state at every one (docs/SYNC.md, "Devices
    /// and sign-in"). Another account, device or CA replaces it.
    func keptClient(_ file: SyncAccountFile, device: LocalDevice) throws -> SyncClient {
        let of = [file.server, file.account, device.deviceID, file.caCertificates ?? ""].joined(separator: "\u{0}")
        if let kept, kept.of == of { return kept.client }
        let client = try Self.client(file, device: device)
        if let old = kept?.client { Task { await old.shutdown() } }
        kept = (of, client)
        return client
    }

    /// Closes the kept client (the device leaves): the next one signs in anew.
    func forgetKeptClient() async {
        let old = kept?.client
        kept = nil
        await old?.shutdown()
    }

    /// The certificate authorities a join gave (only those), or the system's.
    static func trust(_ caCertificates: String?) throws -> SyncTrust {
        guard let caCertificates else { return .system }
        return try SyncTrust.certificateAuthorities(caCertificates)
    }

    static func deviceName(_ name: String?) throws -> String {
        let chosen = (name ?? ProcessInfo.processInfo.hostName).trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...SyncLimits.deviceNameCharacters).contains(chosen.count),
            !chosen.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw APIError(.param, "a device name is 1 to \(SyncLimits.deviceNameCharacters) characters on one line") }
        return chosen
    }
}
