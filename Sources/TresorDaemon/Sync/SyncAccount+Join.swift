import Foundation
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSync
import TresorSyncClient
import TresorSyncProtocol
import TresorSystem

/// Joining a sync account (docs/SYNC.md, "Devices"): the first device creates the circle, a
/// further one asks a trusted device and waits for its answer, and a device with the recovery
/// key joins by itself.
extension SyncAccount {
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
            case .pending:
                // Its words again, for a join run again: this device's identity, the server's nonce, the circle.
                let words = JoinRequest(identity: device.identity, nonce: request.nonce).fingerprintWords(circleID: circleID)
                return SyncJoinAnswer(state: .waiting, deviceID: file.deviceID, requestID: requestID, words: words)
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
            let (history, next, grown) = try await withdrawingOnRefusal(client, device) {
                let history = try await Self.history(client)
                let list: TrustedDeviceList
                do {
                    list = try TrustedDeviceList.verifyingChain(history.lists, recoveryKey: recovery, endorsement: history.endorsement)
                } catch SyncError.invalidRecoveryKey(let why) {
                    throw APIError(.authFailed, "this is not the recovery key of sync account \(account) (\(why)): nothing was changed")
                }
                let next = try list.adding(device.identity).signed(by: recovery.identity)
                let grown = history.appending(next)
                try await client.recover(
                    request.requestID,
                    SyncRecovery(
                        signature: try recovery.signRecovery(of: request),
                        deviceList: SyncDeviceListUpdate(expectedVersion: list.version, version: next.list.version, blob: grown.encoded)))
                return (history, next, grown)
            }
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

    /// Runs the steps of a recovery after its enrollment; when they fail before the server took
    /// the recovery, this device withdraws its join request, which would otherwise wait for a
    /// trusted device to approve a member that no home holds.
    private func withdrawingOnRefusal<T>(
        _ client: SyncClient, _ device: LocalDevice, _ steps: () async throws -> T
    ) async throws -> T {
        do {
            return try await steps()
        } catch {
            // An unreachable or garbled server may have taken the recovery: nothing is undone then.
            let refused: Bool
            switch error {
            case SyncClientError.unreachable, SyncClientError.garbage, SyncClientError.tooLarge: refused = false
            default: refused = true
            }
            if refused { try? await client.removeDevice(device.deviceID) }
            throw error
        }
    }
}
