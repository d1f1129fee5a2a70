import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
import TresorNotesDomain
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore
import TresorWebStorePostgres

@testable import TresorSyncServer

/// The request context of the tests' router: what the web server's gives the sync routes.
struct SyncTestContext: SyncRequestContext {
    var coreContext: CoreRequestContextStorage
    var clientAddress: String { "127.0.0.1" }

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}

/// One server instance: the web storage on the test's database and a sync relay over it.
struct SyncInstance: Sendable {
    static let key = try! ServerKey(bytes: Data(repeating: 0x5a, count: 32))
    static let lifetimes = SessionLifetimes(sessionSeconds: 3600, idleSeconds: 600, secureSessionSeconds: 60)

    let storage: PostgresWebStorage
    let relay: SyncRelay

    /// Opens an instance on `url` (a second one on the same URL is another server instance).
    static func open(
        url: String, clock: TestClock = TestClock(Date()), listening: @escaping @Sendable () -> Void = {},
        beforeCommit: @escaping @Sendable () async -> Void = {}, accountQuotaBytes: Int64? = nil
    ) async throws -> SyncInstance {
        let storage = try await PostgresWebStorage.open(
            url: try DatabaseURL(parsing: url), key: key, lifetimes: lifetimes, timeout: TestPostgres.stepDeadline,
            logger: Logger(label: "tresor.tests.sync"), listening: listening, passwordRounds: 1_000)
        let relay = SyncRelay(
            database: storage.database, backend: storage.backend, accountQuotaBytes: accountQuotaBytes, clock: clock.read,
            beforeCommit: beforeCommit)
        return SyncInstance(storage: storage, relay: relay)
    }

    /// The relay's routes on a router of their own.
    var application: some ApplicationProtocol {
        let router = Router(context: SyncTestContext.self)
        relay.register(on: router)
        return Application(router: router)
    }

    /// Registers a web account.
    @discardableResult
    func account(_ name: String, password: String = "correct horse battery") async throws -> WebAccount {
        try await storage.store.registerAccount(name: name, password: try AccountPassword(password))
    }

    /// The set-up most route tests start from: an instance on a fresh database, web account
    /// `name`, and a device of it joined. `body` gets the routes' client, the device, the instance
    /// and the account; the instance's storage is closed after.
    static func withJoinedDevice(
        account name: String = "ada",
        _ body: @Sendable (_ client: any TestClientProtocol, _ device: inout TestDevice, SyncInstance, WebAccount) async throws -> Void
    ) async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        let account = try await instance.account(name)
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: name)
            try await device.join(client)
            try await body(client, &device, instance, account)
        }
        await instance.storage.close()
    }
}

/// A device as the tests drive it: its id and Ed25519 credential, speaking JSON to the routes.
struct TestDevice: Sendable {
    let account: String
    let id: String
    let credential: Curve25519.Signing.PrivateKey
    var token: String?
    var sequence: UInt64 = 0

    init(account: String) {
        self.account = account
        credential = Curve25519.Signing.PrivateKey()
        id = SyncDeviceID.of(signingKey: credential.publicKey.rawRepresentation)
    }

    /// The id of a device nobody enrolled.
    static func unknownID() -> String {
        SyncDeviceID.of(signingKey: Curve25519.Signing.PrivateKey().publicKey.rawRepresentation)
    }

    var bearer: HTTPFields {
        var fields: HTTPFields = [.contentType: "application/json"]
        if let token { fields[.authorization] = "Bearer \(token)" }
        return fields
    }

    func enrollment(password: String = "correct horse battery") -> SyncEnrollment {
        SyncEnrollment(
            account: account, password: password, deviceID: id, deviceName: "Test device",
            credentialPublicKey: credential.publicKey.rawRepresentation,
            identity: Data("identity of \(id)".utf8))
    }

    /// Enrolls, then signs in; returns the enrollment's answer.
    @discardableResult
    mutating func join(_ client: some TestClientProtocol) async throws -> SyncEnrollmentResponse {
        let response = try await client.send(.post, "/v1/sync/devices", enrollment())
        try #require(response.status == .created, "enrollment: \(response.text)")
        let enrolled = try response.decode(SyncEnrollmentResponse.self)
        token = try await signIn(client).decode(SyncSession.self).token
        return enrolled
    }

    /// Asks for a challenge.
    func challenge(_ client: some TestClientProtocol) async throws -> SyncChallenge {
        let response = try await client.send(.post, "/v1/sync/challenges", SyncChallengeRequest(account: account, deviceID: id))
        try #require(response.status == .ok, "challenge: \(response.text)")
        return try response.decode(SyncChallenge.self)
    }

    /// Answers `challenge` (a new one when nil) with this device's credential.
    func signIn(_ client: some TestClientProtocol, answering challenge: SyncChallenge? = nil) async throws -> TestResponse {
        var asked = challenge
        if asked == nil { asked = try await self.challenge(client) }
        let answered = try #require(asked)
        let signature = try credential.signature(for: answered.signedMessage(account: account, deviceID: id))
        return try await client.send(.post, "/v1/sync/sessions", SyncSignIn(challengeID: answered.challengeID, signature: signature))
    }

    /// The next upload of this device.
    mutating func upload(_ body: String, base: UInt64 = 0, recordID: String = UUID().uuidString) -> SyncUpload {
        sequence += 1
        return SyncUpload(recordID: recordID, deviceID: id, deviceSequence: sequence, baseCounter: base, body: Data(body.utf8))
    }

    func push(_ client: some TestClientProtocol, _ uploads: [SyncUpload]) async throws -> TestResponse {
        try await client.send(.post, "/v1/sync/records", SyncPushRequest(uploads: uploads), headers: bearer)
    }

    func pull(_ client: some TestClientProtocol, after cursor: UInt64 = 0, limit: Int? = nil) async throws -> TestResponse {
        try await client.execute(uri: "/v1/sync/records?after=\(cursor)" + (limit.map { "&limit=\($0)" } ?? ""), method: .get, headers: bearer)
    }
}

extension TestClientProtocol {
    /// `value` as JSON to `path`.
    func send(
        _ method: HTTPRequest.Method, _ path: String, _ value: some Encodable, headers: HTTPFields = [.contentType: "application/json"]
    ) async throws -> TestResponse {
        try await execute(uri: path, method: method, headers: headers, body: ByteBuffer(data: try SyncJSON.encoder.encode(value)))
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try SyncJSON.decoder.decode(T.self, from: Data(buffer: body))
    }

    /// The refusal's code.
    var code: SyncErrorBody.Code? { (try? decode(SyncErrorBody.self))?.code }
}

/// What a test waits on, opened once by another task.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state -> Bool in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// How long a test waits for a live update: events relayed through PostgreSQL are delayed on a
/// loaded CI, and a passing run never waits that long.
let liveUpdateWait: Duration = .seconds(120)

/// `body`'s value, or a failure after `limit`.
func withTimeout<T: Sendable>(_ limit: Duration = liveUpdateWait, _ body: @escaping @Sendable () async -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw CancellationError()
        }
        let value = try await group.next()!
        group.cancelAll()
        return value
    }
}
