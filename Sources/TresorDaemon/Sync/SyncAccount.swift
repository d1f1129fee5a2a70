import Foundation
import TresorKeybag
import TresorKeychain
import TresorModel
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

    // MARK: Parts

    func prepare(server text: String, account name: String, keepingIdentity: Bool = false) throws -> (SyncServerURL, String, Keybag) {
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

    func enrollment(account: String, password: String, device: LocalDevice, recovery: RecoveryKey) throws -> SyncEnrollment {
        SyncEnrollment(
            account: account, password: password, deviceID: device.deviceID, deviceName: device.identity.name,
            credentialPublicKey: device.identity.signingKey, identity: try JSONEncoder().encode(device.identity),
            recoveryPublicKey: recovery.identity.identity.signingKey)
    }

    func required() throws -> SyncAccountFile {
        guard let file = try SyncAccountFile.load(paths) else { throw APIError(.notFound, "this device is in no sync account: `tresor sync join`") }
        return file
    }

    func localDevice() throws -> (LocalDevice, Keybag) {
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
            TerminalText.isOneLineAsWritten(chosen)
        else { throw APIError(.param, "a device name is 1 to \(SyncLimits.deviceNameCharacters) characters on one line, with no direction controls") }
        return chosen
    }
}
