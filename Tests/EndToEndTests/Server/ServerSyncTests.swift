import Crypto
import Foundation
import Testing
import TresorSyncProtocol
import TresorTestSupport

/// The sync relay in real `tresord` server instances on one PostgreSQL (docs/SYNC.md,
/// "Transport"): a device enrolls on one instance, signs in on the other with a challenge the
/// first handed out, and a change made on one reaches the device's event stream on the other —
/// but not the device's own push.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct ServerSyncTests {
    @Test func aDeviceEnrollsOnOneInstanceSignsInOnAnotherAndHearsPushesFromEither() async throws {
        let cluster = try await ServerInstances(count: 2, configuration: ["webRegistration": "open"])
        let (a, b) = (cluster.servers[0], cluster.servers[1])
        let (browser, password) = try cluster.registered("ada", on: a)
        let credential = Curve25519.Signing.PrivateKey()
        let deviceID = SyncDeviceID.of(signingKey: credential.publicKey.rawRepresentation)

        let enrollment = SyncEnrollment(
            account: "ada", password: password, deviceID: deviceID, deviceName: "laptop",
            credentialPublicKey: credential.publicKey.rawRepresentation, identity: Data("laptop identity".utf8))
        let enrolled = try Self.send(a, "POST", "/v1/sync/devices", enrollment)
        #expect(enrolled.status == 201, "\(enrolled.text)")
        #expect(try SyncJSON.decoder.decode(SyncEnrollmentResponse.self, from: enrolled.body).createdCircle)

        // The challenge from A, answered on B.
        let challenge = try SyncJSON.decoder.decode(
            SyncChallenge.self, from: try Self.send(a, "POST", "/v1/sync/challenges", SyncChallengeRequest(account: "ada", deviceID: deviceID)).body)
        let signature = try credential.signature(for: challenge.signedMessage(account: "ada", deviceID: deviceID))
        let signedIn = try Self.send(b, "POST", "/v1/sync/sessions", SyncSignIn(challengeID: challenge.challengeID, signature: signature))
        #expect(signedIn.status == 200, "\(signedIn.text)")
        let token = try SyncJSON.decoder.decode(SyncSession.self, from: signedIn.body).token
        cluster.declareSecret(token)
        let bearer = [("Authorization", "Bearer \(token)")]

        let stream = try EventStreamReader(b, path: "/v1/sync/events", headers: bearer)
        #expect(stream.waitFor("sync live updates", seconds: 10), "the stream opened on B")
        let upload = SyncUpload(recordID: UUID().uuidString, deviceID: deviceID, deviceSequence: 1, baseCounter: 0, body: Data("sealed".utf8))
        let pushed = try Self.send(a, "POST", "/v1/sync/records", SyncPushRequest(uploads: [upload]), headers: bearer)
        #expect(pushed.status == 200, "\(pushed.text)")
        // A change made on A by anyone but this device reaches its stream on B (the web client's
        // note, through the event bus); its own push does not, it knows of it already.
        _ = try browser.createNote(title: "Made on A", body: "Made on A")
        #expect(stream.waitFor("event: notes", seconds: 10), "the web client's note on A reached the stream on B: \(stream.received)")
        #expect(!stream.received.contains("event: records"), "its own push is not told to it: \(stream.received)")
        let page = try SyncJSON.decoder.decode(SyncPage.self, from: try b.send("GET", "/v1/sync/records?after=0", headers: bearer).body)
        #expect(page.records == [SyncRecord(counter: 1, upload: upload)])
        // Without the bearer token, the web server's own guards still answer: no session.
        #expect(try b.send("GET", "/v1/sync/records").status == 401)
    }

    /// `value` as JSON to `path` of `server`.
    static func send(_ server: WebServerAddress, _ method: String, _ path: String, _ value: some Encodable, headers: [(String, String)] = []) throws
        -> WebResponse
    {
        try server.send(method, path, headers: [("Content-Type", "application/json")] + headers, body: try SyncJSON.encoder.encode(value))
    }
}
