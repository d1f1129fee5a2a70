import Foundation
import Logging
import Testing
import TresorKeybag
import TresorKeychain
import TresorNotesDomain
import TresorSync
import TresorSyncEngine
import TresorSyncProtocol
import TresorSystem
import TresorTestSupport
import TresorWebStore
import TresorWebStorePostgres

@testable import TresorSyncServer

/// The relay's record store, in process, as a device's transport: what the HTTP client does
/// once signed in, without the network.
struct RelayTransport: SyncRecordTransport {
    let relay: SyncRelay
    let account: AccountID
    let deviceID: String

    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        SyncPushResponse(records: try await relay.store.push(request.uploads, account: account, device: deviceID).records)
    }

    func page(after cursor: UInt64, limit: Int) async throws -> SyncPage {
        try await relay.store.page(account: account, after: cursor, limit: limit)
    }
}

/// The application every test device stores its items as.
let testCaller = Caller(accessGroups: ["A.app"], defaultAccessGroup: "A.app")

/// One device: a home in a temporary folder with its keybag and login keychain, its sync
/// identity, and an engine over the relay.
final class TestDevice: @unchecked Sendable {
    let name: String
    let root: URL
    let keybag: Keybag
    let keychain: KeychainStore
    let local: LocalDevice
    var engine: SyncEngine!

    init(name: String) throws {
        self.name = name
        root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-sync-engine-\(UUID().uuidString)")
        let paths = TresorPaths(home: root.appendingPathComponent("home").path, environment: ["HOME": root.path])
        keybag = try Keybag.create(paths: paths, passcode: try Passcode(Self.passcode), settings: KeybagSettings.insecureForTesting(kdfRounds: 1_000))
        keychain = try KeychainStore(file: paths.home.appendingPathComponent("login.keychain.db"), keybag: keybag)
        local = try LocalDevice.create(name: name)
    }

    static let passcode = "correct horse battery staple"

    deinit { try? FileManager.default.removeItem(at: root) }

    static func attributes(_ service: String, accessible: ProtectionClass = .whenUnlocked, synchronizable: Bool? = true) -> ItemAttributes {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = "ada"
        attributes.accessible = accessible
        attributes.synchronizable = synchronizable
        return attributes
    }

    static func query(_ service: String) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = "ada"
        attributes.synchronizable = true
        return ItemQuery(.genericPassword, attributes: attributes, returnData: true)
    }

    func add(_ service: String, _ secret: String, accessible: ProtectionClass = .whenUnlocked) throws {
        try keychain.add(
            .genericPassword, attributes: Self.attributes(service, accessible: accessible), secret: Data(secret.utf8), caller: testCaller)
    }

    func update(_ service: String, _ secret: String) throws {
        try keychain.update(Self.query(service), changes: ItemAttributes(), secret: Data(secret.utf8), caller: testCaller)
    }

    func delete(_ service: String) throws {
        try keychain.delete(Self.query(service), caller: testCaller)
    }

    /// The secret of a synchronizable item, nil when there is none.
    func secret(_ service: String) throws -> String? {
        do {
            return try keychain.copyMatching(Self.query(service), caller: testCaller).first?.secret.map { String(decoding: $0, as: UTF8.self) }
        } catch KeychainError.itemNotFound {
            return nil
        }
    }

    /// Every synchronizable generic password: service → secret.
    func items() throws -> [String: String] {
        var attributes = ItemAttributes()
        attributes.synchronizable = true
        do {
            let found = try keychain.copyMatching(
                ItemQuery(.genericPassword, attributes: attributes, limit: .all, returnData: true), caller: testCaller)
            return Dictionary(
                uniqueKeysWithValues: found.map { ($0.attributes?.service ?? "", String(decoding: $0.secret ?? Data(), as: UTF8.self)) })
        } catch KeychainError.itemNotFound {
            return [:]
        }
    }

    /// Whether any file of this device's home holds `marker` in the clear, as it is or in
    /// base64 (how an item's JSON carries a secret).
    func filesContain(_ marker: String) -> Bool {
        let needles = [Data(marker.utf8), Data(Data(marker.utf8).base64EncodedString().utf8)]
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        return files.contains { file in
            guard let bytes = try? Data(contentsOf: file) else { return false }
            return needles.contains { bytes.range(of: $0) != nil }
        }
    }

    /// The secrets of the conflicts kept, by service.
    func conflicts() throws -> [(service: String, secret: String, id: String)] {
        try keychain.syncConflicts().map { conflict in
            (conflict.item?.attributes.service ?? "?", String(decoding: conflict.item?.secret ?? Data(), as: UTF8.self), conflict.id)
        }
    }
}

/// A sync account on a relay over a throwaway PostgreSQL, and devices sharing one circle made
/// with TresorSync: the first device creates the list, approves the others, and shares them
/// the epoch-1 circle key.
struct SyncWorld {
    static let key = try! ServerKey(bytes: Data(repeating: 0x5a, count: 32))
    static let lifetimes = SessionLifetimes(sessionSeconds: 3600, idleSeconds: 600, secureSessionSeconds: 60)
    static let accountName = "ada"

    let storage: PostgresWebStorage
    let relay: SyncRelay
    let accountID: AccountID
    let devices: [TestDevice]
    let list: TrustedDeviceList
    /// Epoch 1's key, which every device holds.
    let circleKey: CircleKey

    /// - Parameters:
    ///   - names: the devices' names, the first makes the circle.
    ///   - clocks: each device's clock (the mass-deletion window's only).
    ///   - transport: wraps each device's transport (a hostile server in front of the relay).
    static func make(
        _ names: [String] = ["laptop", "desktop"], clocks: [TestClock]? = nil,
        transport: (any SyncRecordTransport) -> any SyncRecordTransport = { $0 }
    ) async throws -> SyncWorld {
        let storage = try await PostgresWebStorage.open(
            url: try DatabaseURL(parsing: try await TestPostgres.freshDatabase()), key: key, lifetimes: lifetimes, timeout: TestPostgres.stepDeadline,
            logger: Logger(label: "tresor.tests.sync-engine"), passwordRounds: 1_000)
        let relay = SyncRelay(database: storage.database, backend: storage.backend)
        let account = try await storage.store.registerAccount(name: accountName, password: try AccountPassword("correct horse battery"))
        let devices = try names.map { try TestDevice(name: $0) }
        let recovery = RecoveryKey.generate()
        var signed = try TrustedDeviceList.create(account: accountName, device: devices[0].local, recoveryKey: recovery)
        var list = signed.list
        for device in devices.dropFirst() {
            signed = try list.adding(device.local.identity).signed(by: devices[0].local)
            list = try list.accepting(signed)
        }
        let circleKey = CircleKey.generate(epoch: 1)
        for (index, device) in devices.enumerated() {
            _ = try await relay.store.enroll(
                SyncEnrollment(
                    account: accountName, password: "correct horse battery", deviceID: device.local.deviceID, deviceName: device.name,
                    credentialPublicKey: device.local.identity.signingKey, identity: Data()),
                account: account.id)
            let share = try circleKey.share(to: device.local.identity, account: accountName, from: devices[0].local)
            let keys = CircleKeyring([try share.open(as: device.local, trusting: list)])
            let base = RelayTransport(relay: relay, account: account.id, deviceID: device.local.deviceID)
            device.engine = SyncEngine(
                transport: transport(base), device: device.local, list: list, keys: keys, keychain: device.keychain,
                clock: clocks?[index].read ?? TestClock().read, pageSize: 50)
        }
        return SyncWorld(storage: storage, relay: relay, accountID: account.id, devices: devices, list: list, circleKey: circleKey)
    }

    /// Every record the relay holds, in counter order.
    func serverRecords() async throws -> [SyncRecord] {
        var records: [SyncRecord] = []
        var cursor: UInt64 = 0
        while true {
            let page = try await relay.store.page(account: accountID, after: cursor, limit: 500)
            records += page.records
            cursor = page.cursor
            if !page.more { return records }
        }
    }
}

extension ItemAttributes {
    init(label: String) {
        self.init()
        self.label = label
    }
}
