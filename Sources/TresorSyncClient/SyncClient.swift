import Foundation
import TresorSyncProtocol

/// What a device signs in to a sync server with: its account, its id and a way to answer a
/// sign-in challenge with its Ed25519 credential (the key stays where it is; only the answer
/// comes out).
public struct SyncCredential: Sendable {
    public let account: String
    public let deviceID: String
    let answer: @Sendable (SyncChallenge) throws -> Data

    /// - Parameters:
    ///   - account: the web account's name.
    ///   - deviceID: the device's id (``SyncDeviceID``).
    ///   - answer: the device's signature of ``SyncChallenge/signedMessage(account:deviceID:)``.
    public init(account: String, deviceID: String, answer: @escaping @Sendable (SyncChallenge) throws -> Data) {
        self.account = account
        self.deviceID = deviceID
        self.answer = answer
    }
}

/// A device's client of a Tresor server's sync relay (docs/SYNC.md, "Transport"): every
/// `/v1/sync` route, as typed calls. It signs in with the device's credential when a call
/// needs a session, and again when the session expired or the server forgot it.
public actor SyncClient: SyncRecordTransport {
    public let server: SyncServerURL
    let credential: SyncCredential
    let http: SyncHTTP
    private var session: SyncSession?
    /// How many times this client signed in (a new session each time).
    public private(set) var signIns = 0

    /// The largest answer the relay sends: a page (4 MiB of bodies, in base64, with its fields).
    static let answerLimit = 8 * 1024 * 1024

    /// A client of `server` for one device, with one HTTP client of its own: ``shutdown()``
    /// closes it (else it closes when this client goes, once its requests ended).
    /// - Parameters:
    ///   - server: the server's address.
    ///   - credential: the device's credential.
    ///   - trust: the certificate authorities an `https://` server's certificate must chain to.
    ///   - timeout: seconds to wait for the server (between bytes).
    public init(server: SyncServerURL, credential: SyncCredential, trust: SyncTrust = .system, timeout: TimeInterval = 30) {
        self.server = server
        self.credential = credential
        http = SyncHTTP(timeout: timeout, trust: trust)
    }

    deinit {
        http.shutdownWhenDone()
    }

    /// Closes this client's connections; no call may follow.
    public func shutdown() async {
        await http.shutdown()
    }

    // MARK: Devices

    /// Enrolls this device with the web account's password (`POST /v1/sync/devices`): the
    /// account's first device creates the circle, any other gets a join request.
    /// - Parameter enrollment: the enrollment; its password is sent once, over this request only.
    /// - Returns: the server's answer.
    /// - Throws: ``SyncClientError``.
    public func enroll(_ enrollment: SyncEnrollment) async throws -> SyncEnrollmentResponse {
        try await call("POST", "/v1/sync/devices", body: enrollment, signedIn: false)
    }

    /// The account's devices, as the server has them (`GET /v1/sync/devices`).
    /// - Returns: every device, pending, trusted and removed.
    /// - Throws: ``SyncClientError``.
    public func devices() async throws -> [SyncDevice] {
        try await call("GET", "/v1/sync/devices")
    }

    /// Removes a device (`DELETE /v1/sync/devices/{id}`): the server refuses it from now on.
    /// - Parameter deviceID: the device's id.
    /// - Throws: ``SyncClientError``.
    public func removeDevice(_ deviceID: String) async throws {
        try await callNoAnswer("DELETE", "/v1/sync/devices/\(try Self.pathComponent(deviceID))")
    }

    // MARK: Device list and key envelopes

    /// The signed device list the server keeps (`GET /v1/sync/device-list`).
    /// - Returns: the blob and its version (0 and no blob before the first).
    /// - Throws: ``SyncClientError``.
    public func deviceList() async throws -> SyncDeviceList {
        try await call("GET", "/v1/sync/device-list")
    }

    /// Replaces the device list if the server's is still `update.expectedVersion`
    /// (`PUT /v1/sync/device-list`).
    /// - Parameter update: the new list.
    /// - Throws: ``SyncClientError``: `refused` with code `staleDeviceList` when it changed meanwhile.
    public func putDeviceList(_ update: SyncDeviceListUpdate) async throws {
        try await callNoAnswer("PUT", "/v1/sync/device-list", body: update)
    }

    /// This device's key envelopes from an epoch on (`GET /v1/sync/key-envelopes`).
    /// - Parameter epoch: the first epoch wanted.
    /// - Returns: the envelopes.
    /// - Throws: ``SyncClientError``.
    public func keyEnvelopes(from epoch: UInt64 = 0) async throws -> [SyncKeyEnvelope] {
        let answer: SyncKeyEnvelopes = try await call("GET", "/v1/sync/key-envelopes", query: [URLQueryItem(name: "from", value: "\(epoch)")])
        return answer.envelopes
    }

    /// Stores key envelopes for devices of the circle (`PUT /v1/sync/key-envelopes`).
    /// - Parameter envelopes: 1 to 256 envelopes.
    /// - Throws: ``SyncClientError``.
    public func putKeyEnvelopes(_ envelopes: [SyncKeyEnvelope]) async throws {
        try await callNoAnswer("PUT", "/v1/sync/key-envelopes", body: SyncKeyEnvelopes(envelopes: envelopes))
    }

    /// The circle keys wrapped for the recovery identity (`GET /v1/sync/recovery-envelopes`).
    /// - Parameter epoch: the first epoch wanted.
    /// - Returns: the envelopes.
    /// - Throws: ``SyncClientError``.
    public func recoveryEnvelopes(from epoch: UInt64 = 0) async throws -> [SyncRecoveryEnvelope] {
        let answer: SyncRecoveryEnvelopes = try await call(
            "GET", "/v1/sync/recovery-envelopes", query: [URLQueryItem(name: "from", value: "\(epoch)")])
        return answer.envelopes
    }

    /// Stores circle keys wrapped for the recovery identity (`PUT /v1/sync/recovery-envelopes`).
    /// - Parameter envelopes: 1 to 256 envelopes.
    /// - Throws: ``SyncClientError``.
    public func putRecoveryEnvelopes(_ envelopes: [SyncRecoveryEnvelope]) async throws {
        try await callNoAnswer("PUT", "/v1/sync/recovery-envelopes", body: SyncRecoveryEnvelopes(envelopes: envelopes))
    }

    // MARK: Join requests

    /// The pending join requests (`GET /v1/sync/join-requests`; trusted devices).
    /// - Returns: the requests still waiting.
    /// - Throws: ``SyncClientError``.
    public func joinRequests() async throws -> [SyncJoinRequest] {
        try await call("GET", "/v1/sync/join-requests")
    }

    /// One join request (`GET /v1/sync/join-requests/{id}`): a pending device polls its own.
    /// - Parameter requestID: the request's id.
    /// - Returns: the request with its state.
    /// - Throws: ``SyncClientError``.
    public func joinRequest(_ requestID: String) async throws -> SyncJoinRequest {
        try await call("GET", "/v1/sync/join-requests/\(try Self.pathComponent(requestID))")
    }

    /// Approves a join request with the new device list and the new device's key envelope.
    /// - Parameters:
    ///   - requestID: the request's id.
    ///   - approval: the signed list update and the envelope.
    /// - Throws: ``SyncClientError``.
    public func approve(_ requestID: String, _ approval: SyncApproval) async throws {
        try await callNoAnswer("POST", "/v1/sync/join-requests/\(try Self.pathComponent(requestID))/approve", body: approval)
    }

    /// Denies a join request: the asking device is refused from then on.
    /// - Parameter requestID: the request's id.
    /// - Throws: ``SyncClientError``.
    public func deny(_ requestID: String) async throws {
        try await callNoAnswer("POST", "/v1/sync/join-requests/\(try Self.pathComponent(requestID))/deny", body: [String: String]())
    }

    /// Joins with the recovery identity's signature of this device's own request.
    /// - Parameters:
    ///   - requestID: this device's join request.
    ///   - recovery: the signature and the new device list.
    /// - Throws: ``SyncClientError``.
    public func recover(_ requestID: String, _ recovery: SyncRecovery) async throws {
        try await callNoAnswer("POST", "/v1/sync/join-requests/\(try Self.pathComponent(requestID))/recover", body: recovery)
    }

    // MARK: Where the account stands

    /// The account's latest record counter, device list version and notes counter
    /// (`GET /v1/sync/state`): a device reads the rest only where it is behind.
    /// - Returns: the counters.
    /// - Throws: ``SyncClientError``; `refused` with `deviceRemoved` for a removed device.
    public func state() async throws -> SyncAccountState {
        try await call("GET", "/v1/sync/state")
    }

    // MARK: Records (SyncRecordTransport)

    /// Stores uploads all together or none (`POST /v1/sync/records`).
    /// - Parameter request: the uploads.
    /// - Returns: each upload with its counter.
    /// - Throws: ``SyncClientError``.
    public func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        try await call("POST", "/v1/sync/records", body: request)
    }

    /// The records after `cursor` (`GET /v1/sync/records`).
    /// - Parameters:
    ///   - cursor: the last counter read.
    ///   - limit: the most records wanted.
    /// - Returns: the page.
    /// - Throws: ``SyncClientError``.
    public func page(after cursor: UInt64, limit: Int) async throws -> SyncPage {
        try await call(
            "GET", "/v1/sync/records",
            query: [URLQueryItem(name: "after", value: "\(cursor)"), URLQueryItem(name: "limit", value: "\(max(1, limit))")])
    }

    // MARK: Sign-in

    /// Signs in now (a challenge, signed with the device's credential), replacing any session.
    /// - Returns: the session's state of the device (`pending` or `trusted`).
    /// - Throws: ``SyncClientError``; `refused` with `deviceRemoved` for a removed device.
    @discardableResult
    public func signIn() async throws -> SyncDeviceState {
        session = nil
        let challenge: SyncChallenge = try await call(
            "POST", "/v1/sync/challenges", body: SyncChallengeRequest(account: credential.account, deviceID: credential.deviceID),
            signedIn: false)
        let signature = try credential.answer(challenge)
        let started: SyncSession = try await call(
            "POST", "/v1/sync/sessions", body: SyncSignIn(challengeID: challenge.challengeID, signature: signature), signedIn: false)
        session = started
        signIns += 1
        return started.state
    }

    /// Forgets the session (the next call signs in again).
    public func forgetSession() {
        session = nil
    }

    /// A session token still good for a while, signing in when there is none.
    private func token() async throws -> String {
        if let session, session.expires.timeIntervalSinceNow > 30 { return session.token }
        try await signIn()
        guard let session else { throw SyncClientError.garbage("no session after signing in") }
        return session.token
    }

    // MARK: Requests

    func call<Answer: Decodable>(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: (some Encodable)? = Optional<Data>.none, signedIn: Bool = true
    ) async throws -> Answer {
        try Self.answer(try await exchange(method, path, query: query, body: body, signedIn: signedIn), method, path)
    }

    /// A response's answer, or the server's refusal.
    private static func answer<Answer: Decodable>(_ response: SyncHTTPResponse, _ method: String, _ path: String) throws -> Answer {
        guard (200..<300).contains(response.status) else { throw Self.refusal(response) }
        do {
            return try SyncJSON.decoder.decode(Answer.self, from: response.body)
        } catch {
            throw SyncClientError.garbage(
                "\(method) \(path) answered \(response.status) with \(response.body.count) bytes that are not \(Answer.self)")
        }
    }

    /// ``call(_:_:query:body:signedIn:)`` of a route an older server lacks: nil when the server
    /// answers `404` without the relay's error body (it does not know the route).
    func callUnlessUnknown<Answer: Decodable>(_ method: String, _ path: String, body: (some Encodable)? = Optional<Data>.none) async throws
        -> Answer?
    {
        let response = try await exchange(method, path, query: [], body: body, signedIn: true)
        if response.status == 404, (try? SyncJSON.decoder.decode(SyncErrorBody.self, from: response.body)) == nil { return nil }
        return try Self.answer(response, method, path)
    }

    func callNoAnswer(_ method: String, _ path: String, body: (some Encodable)? = Optional<Data>.none) async throws {
        let response = try await exchange(method, path, query: [], body: body, signedIn: true)
        guard (200..<300).contains(response.status) else { throw Self.refusal(response) }
    }

    /// One request; with a session, a `401` (the server forgot or expired it) signs in once more
    /// and sends the request again.
    func exchange(
        _ method: String, _ path: String, query: [URLQueryItem], body: (some Encodable)?, signedIn: Bool
    ) async throws -> SyncHTTPResponse {
        var request = SyncHTTPRequest(method: method, url: server.url(path, query: query), headers: [("Accept", "application/json")])
        if let body {
            request.headers.append(("Content-Type", "application/json"))
            request.body = try SyncJSON.encoder.encode(body)
        }
        guard signedIn else { return try await http.send(request, limit: Self.answerLimit) }
        let first = try await http.send(try await authorized(request), limit: Self.answerLimit)
        guard first.status == 401 else { return first }
        try await signIn()
        return try await http.send(try await authorized(request), limit: Self.answerLimit)
    }

    /// `request` with this client's session token.
    func authorized(_ request: SyncHTTPRequest) async throws -> SyncHTTPRequest {
        var request = request
        request.headers.removeAll { $0.0 == "Authorization" }
        request.headers.append(("Authorization", "Bearer \(try await token())"))
        return request
    }

    static func refusal(_ response: SyncHTTPResponse) -> SyncClientError {
        guard let body = try? SyncJSON.decoder.decode(SyncErrorBody.self, from: response.body) else {
            return .garbage("HTTP \(response.status) without the relay's error body (is this a Tresor server in server mode?)")
        }
        return .refused(status: response.status, code: body.code, message: String(body.message.prefix(500)))
    }

    /// An id as one path segment: letters, digits and dashes only.
    static func pathComponent(_ id: String) throws -> String {
        guard (1...64).contains(id.count), id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw SyncClientError.garbage("\"\(id.prefix(64))\" is not an id")
        }
        return id
    }
}
