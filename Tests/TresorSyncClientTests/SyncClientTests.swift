import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import TresorSyncClient
import TresorSyncProtocol
import TresorTestSupport

/// The device's client of the relay, over HTTP on loopback against the real relay on a
/// throwaway PostgreSQL: every route, sign-in and signing in again, refusals as typed errors.
@Suite("Sync client", .enabled(if: TestPostgres.shouldRun))
struct SyncClientTests {
    static let password = "correct horse battery"

    @Test func aDeviceCreatesTheCircleAnotherJoinsWhenApprovedAndARemovedOneIsRefused() async throws {
        let relay = try await Relay.open()
        try await relay.account("ada", password: Self.password)
        try await relay.serving { server in
            let laptop = TestCredential(account: "ada"), phone = TestCredential(account: "ada")
            let laptopClient = laptop.client(server), phoneClient = phone.client(server)

            let recovery = Curve25519.Signing.PrivateKey()
            let created = try await laptopClient.enroll(laptop.enrollment(password: Self.password, recoveryKey: recovery.publicKey.rawRepresentation))
            #expect(created.createdCircle && created.state == .trusted)
            try await laptopClient.putDeviceList(SyncDeviceListUpdate(expectedVersion: 0, version: 1, blob: Data("list 1".utf8)))
            try await laptopClient.putKeyEnvelopes([SyncKeyEnvelope(deviceID: laptop.deviceID, epoch: 1, blob: Data("laptop key".utf8))])
            try await laptopClient.putRecoveryEnvelopes([SyncRecoveryEnvelope(epoch: 1, blob: Data("recovery key 1".utf8))])
            #expect(try await laptopClient.deviceList() == SyncDeviceList(version: 1, blob: Data("list 1".utf8)))

            // A stale compare-and-set is the server's typed refusal.
            do {
                try await laptopClient.putDeviceList(SyncDeviceListUpdate(expectedVersion: 0, version: 2, blob: Data("stale".utf8)))
                Issue.record("a stale device list was stored")
            } catch let error as SyncClientError {
                #expect(error.refusalCode == .staleDeviceList)
            }

            let asked = try await phoneClient.enroll(phone.enrollment(password: Self.password))
            #expect(asked.state == .pending && !asked.createdCircle)
            let request = try #require(asked.joinRequest)
            #expect(try await phoneClient.joinRequest(request.requestID).state == .pending)
            await #expect(
                throws: SyncClientError.refused(
                    status: 403, code: .devicePending, message: "this device waits for approval: only its join request answers it")
            ) {
                try await phoneClient.devices()
            }

            let waiting = try await laptopClient.joinRequests()
            #expect(waiting.map(\.requestID) == [request.requestID] && waiting[0].nonce == request.nonce)
            try await laptopClient.approve(
                request.requestID,
                SyncApproval(
                    deviceList: SyncDeviceListUpdate(expectedVersion: 1, version: 2, blob: Data("list 2".utf8)),
                    envelope: SyncKeyEnvelope(deviceID: phone.deviceID, epoch: 1, blob: Data("phone key".utf8))))
            #expect(try await phoneClient.joinRequest(request.requestID).state == .approved)
            #expect(try await phoneClient.signIn() == .trusted)
            #expect(try await phoneClient.keyEnvelopes() == [SyncKeyEnvelope(deviceID: phone.deviceID, epoch: 1, blob: Data("phone key".utf8))])
            #expect(try await phoneClient.recoveryEnvelopes() == [SyncRecoveryEnvelope(epoch: 1, blob: Data("recovery key 1".utf8))])
            #expect(Set(try await phoneClient.devices().map(\.deviceID)) == [laptop.deviceID, phone.deviceID])

            // Records, through the engine's transport protocol.
            let transport: any SyncRecordTransport = phoneClient
            let upload = SyncUpload(
                recordID: UUID().uuidString, deviceID: phone.deviceID, deviceSequence: 1, baseCounter: 0, body: Data("sealed".utf8))
            let pushed = try await transport.push(SyncPushRequest(uploads: [upload]))
            #expect(pushed.records == [SyncRecord(counter: 1, upload: upload)])
            let page = try await (laptopClient as any SyncRecordTransport).page(after: 0, limit: 10)
            #expect(page.records == pushed.records && page.cursor == 1 && !page.more)
            // Where the account stands, in one answer: what an idle device asks.
            #expect(
                try await laptopClient.state()
                    == SyncAccountState(records: 1, deviceListVersion: 2, notes: 0, notesSettings: 0, appleNotesPassphrases: true))

            try await laptopClient.removeDevice(phone.deviceID)
            for attempt in [false, true] {
                if attempt { await phoneClient.forgetSession() }
                do {
                    _ = try await phoneClient.page(after: 0, limit: 10)
                    Issue.record("a removed device was served")
                } catch let error as SyncClientError {
                    #expect(error.refusalCode == .deviceRemoved, "session kept: \(!attempt): \(error)")
                }
                do {
                    _ = try await phoneClient.state()
                    Issue.record("a removed device was told where the account stands")
                } catch let error as SyncClientError {
                    #expect(error.refusalCode == .deviceRemoved, "session kept: \(!attempt): \(error)")
                }
            }
        }
    }

    @Test func aDeniedDeviceIsRefusedAndAWrongPasswordEnrollsNothing() async throws {
        let relay = try await Relay.open()
        try await relay.account("ada", password: Self.password)
        try await relay.serving { server in
            let laptop = TestCredential(account: "ada"), stranger = TestCredential(account: "ada")
            let laptopClient = laptop.client(server), strangerClient = stranger.client(server)
            await #expect(throws: SyncClientError.refused(status: 401, code: .unauthorized, message: "wrong name or password")) {
                try await laptopClient.enroll(laptop.enrollment(password: "not the password"))
            }
            #expect(try await laptopClient.enroll(laptop.enrollment(password: Self.password)).createdCircle, "nothing was enrolled before")
            let request = try #require(try await strangerClient.enroll(stranger.enrollment(password: Self.password)).joinRequest)
            try await laptopClient.deny(request.requestID)
            do {
                _ = try await strangerClient.joinRequest(request.requestID)
                Issue.record("a denied device was served")
            } catch let error as SyncClientError {
                #expect(error.refusalCode == .deviceRemoved)
            }
            #expect(try await laptopClient.devices().first { $0.deviceID == stranger.deviceID }?.state == .removed)
        }
    }

    @Test func anExpiredSessionSignsInAgain() async throws {
        let clock = TestClock(Date())
        let relay = try await Relay.open(clock: clock)
        try await relay.account("ada", password: Self.password)
        try await relay.serving { server in
            let laptop = TestCredential(account: "ada")
            let client = laptop.client(server)
            _ = try await client.enroll(laptop.enrollment(password: Self.password))
            _ = try await client.devices()
            #expect(await client.signIns == 1)
            _ = try await client.devices()
            #expect(await client.signIns == 1, "the session is kept while it lasts")
            clock.advance(by: SyncLimits.sessionSeconds + 60)
            #expect(try await client.devices().count == 1)
            #expect(await client.signIns == 2, "the server's 401 for the expired session made it sign in again")
        }
    }

    @Test func plainHTTPOnlyToLoopback() throws {
        for good in [
            "https://tresor.example.org", "https://tresor.example.org:8443/base/", "http://127.0.0.1:8080", "http://localhost", "http://[::1]:9",
        ] {
            #expect(throws: Never.self, "\(good)") { try SyncServerURL(good) }
        }
        #expect(try SyncServerURL("https://tresor.example.org/base/").base.absoluteString == "https://tresor.example.org/base")
        for bad in [
            "http://tresor.example.org", "http://10.0.0.1", "http://127.0.0.1.example.org", "ftp://127.0.0.1", "https://user:pw@example.org",
            "https://example.org/?q=1", "tresor.example.org", "",
        ] {
            #expect(throws: SyncClientError.self, "\(bad)") { try SyncServerURL(bad) }
        }
    }

    @Test func garbageNothingAndTooMuchAreTypedErrors() async throws {
        let router = Router()
        router.get("/v1/sync/devices") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "<html>hello</html>"))) }
        router.post("/v1/sync/challenges") { _, _ in Response(status: .badGateway, body: .init(byteBuffer: ByteBuffer(string: "bad gateway"))) }
        router.post("/v1/sync/devices") { _, _ in
            Response(status: .created, body: .init(byteBuffer: ByteBuffer(string: #"{"state":"sideways"}"#)))
        }
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await application.test(.live) { client in
            let server = try SyncServerURL("http://127.0.0.1:\(try #require(client.port))")
            let device = TestCredential(account: "ada")
            let sync = device.client(server)
            await #expect(throws: SyncClientError.garbage("HTTP 502 without the relay's error body (is this a Tresor server in server mode?)")) {
                try await sync.devices()
            }
            do {
                _ = try await sync.enroll(device.enrollment(password: "secret password 123"))
                Issue.record("garbage accepted")
            } catch let error as SyncClientError {
                guard case .garbage(let what) = error else { throw error }
                #expect(!what.contains("secret password 123"))
            }
            do {
                _ = try await sync.enroll(device.enrollment(password: "secret password 123"))
                Issue.record("garbage accepted")
            } catch let error as SyncClientError {
                guard case .garbage(let what) = error else { throw error }
                #expect(!what.contains("secret password 123"))
            }
        }
        // Too large: the answer is cut at the client's limit.
        let big = Router()
        big.post("/v1/sync/devices") { _, _ in
            Response(status: .created, body: .init(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "a"), count: 9 * 1024 * 1024)))
        }
        try await Application(router: big, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { client in
            let device = TestCredential(account: "ada")
            let sync = device.client(try SyncServerURL("http://127.0.0.1:\(try #require(client.port))"))
            await #expect(throws: SyncClientError.tooLarge(limit: 8 * 1024 * 1024)) { try await sync.enroll(device.enrollment(password: "pw")) }
        }
        // A redirect is not followed: the password would go on to wherever it points.
        let followed = Mutex(false)
        let moving = Router()
        moving.post("/v1/sync/devices") { _, _ in Response(status: .temporaryRedirect, headers: [.location: "/v1/sync/elsewhere"]) }
        moving.post("/v1/sync/elsewhere") { _, _ in
            followed.withLock { $0 = true }
            return Response(status: .created)
        }
        try await Application(router: moving, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { client in
            let device = TestCredential(account: "ada")
            let sync = device.client(try SyncServerURL("http://127.0.0.1:\(try #require(client.port))"))
            await #expect(throws: SyncClientError.self) { try await sync.enroll(device.enrollment(password: "pw")) }
            #expect(!followed.withLock { $0 }, "the redirect was not followed")
        }
        // Nothing listening.
        let port = try LoopbackPort.free()
        let device = TestCredential(account: "ada")
        await #expect(throws: SyncClientError.unreachable("connection refused")) {
            try await device.client(try SyncServerURL("http://127.0.0.1:\(port)")).enroll(device.enrollment(password: "pw"))
        }
    }
}
