import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TresorNotesDomain
import TresorSyncClient
import TresorSyncProtocol
import TresorSyncServer
import TresorTestSupport
import TresorWebStore
import TresorWebStorePostgres

/// The request context of the relay's router in these tests.
struct RelayContext: SyncRequestContext {
    var coreContext: CoreRequestContextStorage
    var clientAddress: String { "127.0.0.1" }

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}

/// A real relay on a throwaway PostgreSQL, served over HTTP on a loopback port.
struct Relay: Sendable {
    static let key = try! ServerKey(bytes: Data(repeating: 0x5a, count: 32))
    let storage: PostgresWebStorage
    let relay: SyncRelay

    static func open(clock: TestClock = TestClock(Date())) async throws -> Relay {
        let storage = try await PostgresWebStorage.open(
            url: try DatabaseURL(parsing: try await TestPostgres.freshDatabase()), key: key,
            lifetimes: SessionLifetimes(sessionSeconds: 3600, idleSeconds: 600, secureSessionSeconds: 60), timeout: TestPostgres.stepDeadline,
            logger: Logger(label: "tresor.tests.sync-client"), passwordRounds: 1_000)
        return Relay(storage: storage, relay: SyncRelay(database: storage.database, backend: storage.backend, clock: clock.read))
    }

    func account(_ name: String, password: String) async throws {
        _ = try await storage.store.registerAccount(name: name, password: try AccountPassword(password))
    }

    /// Serves the relay on a loopback port while `body` runs; `body` gets the server's URL.
    func serving<T: Sendable>(_ body: @Sendable (SyncServerURL) async throws -> T) async throws -> T {
        let router = Router(context: RelayContext.self)
        relay.register(on: router)
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await application.test(.live) { client in
            try await body(try SyncServerURL("http://127.0.0.1:\(try #require(client.port))"))
        }
    }
}

/// A device's credential as the tests hold it: an Ed25519 key in memory.
struct TestCredential: Sendable {
    let account: String
    let key = Curve25519.Signing.PrivateKey()
    var deviceID: String { SyncDeviceID.of(signingKey: key.publicKey.rawRepresentation) }

    var credential: SyncCredential {
        let key = self.key, account = self.account, deviceID = self.deviceID
        return SyncCredential(account: account, deviceID: deviceID) { try key.signature(for: $0.signedMessage(account: account, deviceID: deviceID)) }
    }

    /// A client of `server` that waits as long as the tests' database steps do
    /// (``TestPostgres/stepDeadline``): the relay runs in this process, beside every other
    /// suite, and a loaded CI kept requests waiting past the default 30 s.
    func client(_ server: SyncServerURL) -> SyncClient {
        SyncClient(server: server, credential: credential, timeout: TimeInterval(TestPostgres.stepDeadline.components.seconds))
    }

    func enrollment(password: String, recoveryKey: Data? = nil) -> SyncEnrollment {
        SyncEnrollment(
            account: account, password: password, deviceID: deviceID, deviceName: "device \(deviceID.prefix(4))",
            credentialPublicKey: key.publicKey.rawRepresentation, identity: Data("identity of \(deviceID)".utf8),
            recoveryPublicKey: recoveryKey)
    }
}
