import Crypto
import Foundation
import Hummingbird
import NIOCore
import TresorSyncProtocol
import TresorWebStore

/// The routes of ``SyncRelay``. Each answers JSON (``SyncJSON``); a refusal is a
/// ``SyncErrorBody`` with its status, and changes nothing. Devices send their session as
/// `Authorization: Bearer TOKEN`; nothing here logs a token, a password, a name or a body.
struct SyncRoutes {
    let relay: SyncRelay

    func register<Context: SyncRequestContext>(on router: Router<Context>) {
        router.post("/v1/sync/devices") { request, context in
            await answer(context) { try await enroll(request, context) }
        }
        router.get("/v1/sync/devices") { request, context in
            await answer(context) { try await reply(relay.store.devices(account: try await trusted(request).account)) }
        }
        router.delete("/v1/sync/devices/:id") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                try await relay.store.removeDevice(try Self.deviceID(context.parameters.require("id")), account: caller.account)
                context.logger.notice("sync: device removed", metadata: ["by": "\(caller.deviceID)"])
                return Response(status: .noContent)
            }
        }
        router.post("/v1/sync/challenges") { request, context in
            await answer(context) {
                let body = try await decode(SyncChallengeRequest.self, request)
                return try await reply(relay.store.newChallenge(loginName: Self.loginName(body.account), deviceID: try Self.deviceID(body.deviceID)))
            }
        }
        router.post("/v1/sync/sessions") { request, context in
            await answer(context) { try await signIn(request, context) }
        }
        router.post("/v1/sync/records") { request, context in
            await answer(context) { try await push(request, context) }
        }
        router.get("/v1/sync/records") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let after = try Self.number(request, "after", default: 0, range: 0...UInt64(Int64.max))
                let limit = try Self.number(
                    request, "limit", default: UInt64(SyncLimits.defaultPageRecords), range: 1...UInt64(SyncLimits.pageRecords))
                return try await reply(relay.store.page(account: caller.account, after: after, limit: Int(limit)))
            }
        }
        router.get("/v1/sync/device-list") { request, context in
            await answer(context) { try await reply(relay.store.deviceList(account: try await trusted(request).account)) }
        }
        router.put("/v1/sync/device-list") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let update = try Self.checked(try await decode(SyncDeviceListUpdate.self, request))
                try await relay.store.putDeviceList(update, account: caller.account)
                return Response(status: .noContent)
            }
        }
        router.get("/v1/sync/join-requests") { request, context in
            await answer(context) { try await reply(relay.store.pendingJoinRequests(account: try await trusted(request).account)) }
        }
        router.get("/v1/sync/join-requests/:id") { request, context in
            await answer(context) {
                // The asking device polls its own request while pending; trusted devices read any.
                let caller = try await signedIn(request, allowingPending: true)
                guard let found = try await relay.store.joinRequest(try context.parameters.require("id"), account: caller.account),
                      caller.state == .trusted || found.deviceID == caller.deviceID
                else { throw SyncError(.notFound, "no such join request in this circle") }
                return try reply(found)
            }
        }
        router.post("/v1/sync/join-requests/:id/approve") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let approval = try await decode(SyncApproval.self, request)
                _ = try Self.checked(approval.deviceList)
                try Self.checkBlob(approval.envelope.blob, "the key envelope")
                try Self.checkCounter(approval.envelope.epoch, "epoch")
                try await relay.store.answerJoinRequest(try context.parameters.require("id"), account: caller.account, .approve(approval))
                context.logger.notice("sync: join request approved", metadata: ["by": "\(caller.deviceID)"])
                return Response(status: .noContent)
            }
        }
        router.post("/v1/sync/join-requests/:id/deny") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                try await relay.store.answerJoinRequest(try context.parameters.require("id"), account: caller.account, .deny)
                context.logger.notice("sync: join request denied", metadata: ["by": "\(caller.deviceID)"])
                return Response(status: .noContent)
            }
        }
        router.post("/v1/sync/join-requests/:id/recover") { request, context in
            await answer(context) { try await recover(request, context) }
        }
        router.get("/v1/sync/recovery-envelopes") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let from = try Self.number(request, "from", default: 0, range: 0...UInt64(Int64.max))
                return try await reply(SyncRecoveryEnvelopes(envelopes: relay.store.recoveryEnvelopes(account: caller.account, from: from)))
            }
        }
        router.put("/v1/sync/recovery-envelopes") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let body = try await decode(SyncRecoveryEnvelopes.self, request)
                guard (1...256).contains(body.envelopes.count) else { throw SyncError(.invalid, "send 1 to 256 envelopes") }
                for envelope in body.envelopes {
                    try Self.checkCounter(envelope.epoch, "epoch")
                    try Self.checkBlob(envelope.blob, "a recovery envelope")
                }
                try await relay.store.putRecoveryEnvelopes(body.envelopes, account: caller.account)
                return Response(status: .noContent)
            }
        }
        router.get("/v1/sync/key-envelopes") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let from = try Self.number(request, "from", default: 0, range: 0...UInt64(Int64.max))
                let envelopes = try await relay.store.envelopes(account: caller.account, deviceID: caller.deviceID, from: from)
                return try reply(SyncKeyEnvelopes(envelopes: envelopes))
            }
        }
        router.put("/v1/sync/key-envelopes") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let body = try await decode(SyncKeyEnvelopes.self, request)
                guard (1...256).contains(body.envelopes.count) else { throw SyncError(.invalid, "send 1 to 256 envelopes") }
                for envelope in body.envelopes {
                    _ = try Self.deviceID(envelope.deviceID)
                    try Self.checkCounter(envelope.epoch, "epoch")
                    try Self.checkBlob(envelope.blob, "a key envelope")
                }
                try await relay.store.putEnvelopes(body.envelopes, account: caller.account)
                return Response(status: .noContent)
            }
        }
        router.get("/v1/sync/events") { request, context in
            await answer(context) { try await liveUpdates(request, context) }
        }
    }

    // MARK: Enrollment and sign-in

    /// The web account's password (under the web sign-in's limits), then the device joins
    /// or creates the account's circle.
    private func enroll<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        let body = try await decode(SyncEnrollment.self, request)
        let name = try Self.loginName(body.account)
        _ = try Self.deviceID(body.deviceID)
        guard (1...SyncLimits.deviceNameCharacters).contains(body.deviceName.count),
              !body.deviceName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw SyncError(.invalid, "a device name is 1 to \(SyncLimits.deviceNameCharacters) characters, none of them control characters") }
        guard (try? Curve25519.Signing.PublicKey(rawRepresentation: body.credentialPublicKey)) != nil else {
            throw SyncError(.invalid, "the credential public key is not an Ed25519 public key (32 bytes)")
        }
        try Self.checkBlob(body.identity, "the device's identity")
        if let recovery = body.recoveryPublicKey, (try? Curve25519.Signing.PublicKey(rawRepresentation: recovery)) == nil {
            throw SyncError(.invalid, "the recovery public key is not an Ed25519 public key (32 bytes)")
        }
        if let wait = try await relay.throttle.reserveSignIn(name: name, address: context.clientAddress) {
            throw SyncError(.throttled, "too many failed sign-ins: try again in \(wait) s", retryAfterSeconds: wait)
        }
        var account: WebAccount?
        do {
            if let password = try? AccountPassword(body.password) { account = try await relay.accounts.authenticate(name: name, password: password) }
        } catch {
            try? await relay.throttle.signInFailed(name: name, address: context.clientAddress)
            throw error
        }
        guard let account else {
            try await relay.throttle.signInFailed(name: name, address: context.clientAddress)
            throw SyncError(.unauthorized, "wrong name or password")
        }
        try await relay.throttle.signInSucceeded(name: name, address: context.clientAddress)
        let enrolled = try await relay.store.enroll(body, account: account.id)
        context.logger.notice("sync: device enrolled", metadata: ["device": "\(body.deviceID)", "state": "\(enrolled.state.rawValue)"])
        return try reply(enrolled, status: .created)
    }

    /// A signed challenge: a session for the device whose credential signed it. A removed
    /// device is told so, once its signature shows it is that device.
    private func signIn<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        let body = try await decode(SyncSignIn.self, request)
        guard let taken = try await relay.store.takeChallenge(body.challengeID),
              let account = try await relay.accounts.account(named: taken.loginName),
              let device = try await relay.store.device(taken.deviceID, account: account.id),
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: device.key),
              key.isValidSignature(body.signature, for: taken.challenge.signedMessage(account: taken.loginName, deviceID: taken.deviceID))
        else {
            context.logger.notice("sync: sign-in refused")
            throw SyncError.signInFailed
        }
        guard device.state != .removed else { throw SyncError.removed }
        return try await reply(relay.store.startSession(account: account.id, deviceID: taken.deviceID, state: device.state))
    }

    /// A recovery join: the asking device, still pending, shows the circle's recovery identity's
    /// signature of its own request, and becomes trusted with the new device list.
    private func recover<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        let caller = try await signedIn(request, allowingPending: true)
        let body = try await decode(SyncRecovery.self, request)
        _ = try Self.checked(body.deviceList)
        guard let joining = try await relay.store.joinRequest(try context.parameters.require("id"), account: caller.account),
              joining.deviceID == caller.deviceID
        else { throw SyncError(.notFound, "no such join request of this device") }
        guard let recoveryKey = try await relay.store.recoveryKey(account: caller.account),
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: recoveryKey)
        else { throw SyncError(.conflict, "this circle has no recovery key: a trusted device must approve") }
        guard key.isValidSignature(body.signature, for: joining.recoveryMessage()) else {
            context.logger.notice("sync: recovery signature refused", metadata: ["device": "\(caller.deviceID)"])
            throw SyncError(.forbidden, "the recovery signature does not verify")
        }
        try await relay.store.answerJoinRequest(joining.requestID, account: caller.account, .recover(body.deviceList))
        context.logger.notice("sync: device joined with the recovery key", metadata: ["device": "\(caller.deviceID)"])
        return Response(status: .noContent)
    }

    /// The device of the request's session; a pending device only where `allowingPending`.
    private func signedIn(_ request: Request, allowingPending: Bool) async throws -> SyncCaller {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
              let caller = try await relay.store.caller(token: String(header.dropFirst("Bearer ".count)))
        else { throw SyncError(.unauthorized, "sign in first (POST /v1/sync/challenges, then /v1/sync/sessions)") }
        switch caller.state {
        case .removed: throw SyncError.removed
        case .pending where !allowingPending: throw SyncError(.devicePending, "this device waits for approval: only its join request answers it")
        default: return caller
        }
    }

    private func trusted(_ request: Request) async throws -> SyncCaller {
        try await signedIn(request, allowingPending: false)
    }

    // MARK: Records

    private func push<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        let caller = try await trusted(request)
        let body = try await decode(SyncPushRequest.self, request, limit: SyncLimits.pushRequestBytes)
        guard (1...SyncLimits.uploadsPerPush).contains(body.uploads.count) else {
            throw SyncError(body.uploads.isEmpty ? .invalid : .tooLarge, "a push holds 1 to \(SyncLimits.uploadsPerPush) uploads")
        }
        var total = 0
        for (index, upload) in body.uploads.enumerated() {
            guard upload.deviceID == caller.deviceID else { throw SyncError(.forbidden, "upload \(index) names another device") }
            guard UUID(uuidString: upload.recordID) != nil else { throw SyncError(.invalid, "upload \(index): the record id is not a UUID") }
            guard upload.deviceSequence >= 1 else { throw SyncError(.invalid, "upload \(index): device sequences start at 1") }
            try Self.checkCounter(upload.deviceSequence, "upload \(index): the device sequence")
            try Self.checkCounter(upload.baseCounter, "upload \(index): the base counter")
            guard !upload.body.isEmpty else { throw SyncError(.invalid, "upload \(index): the body is empty") }
            guard upload.body.count <= SyncLimits.bodyBytes else {
                throw SyncError(.tooLarge, "upload \(index): a body is at most \(SyncLimits.bodyBytes) bytes")
            }
            total += upload.body.count
        }
        guard total <= SyncLimits.pushBodyBytes else {
            throw SyncError(.tooLarge, "a push's bodies are at most \(SyncLimits.pushBodyBytes) bytes together")
        }
        guard Set(body.uploads.map(\.deviceSequence)).count == body.uploads.count else {
            throw SyncError(.invalid, "a push names each device sequence once")
        }
        let pushed = try await relay.store.push(body.uploads, account: caller.account, device: caller.deviceID)
        if pushed.stored, let latest = pushed.records.map(\.counter).max() {
            do {
                try await relay.events.publish(.syncRecords(account: caller.account, counter: Int64(latest)))
            } catch {
                // Committed either way: the other devices find it at their next pull.
                context.logger.notice("sync: change notice not published", metadata: ["error": "\(SyncError.from(error).code)"])
            }
        }
        return try reply(SyncPushResponse(records: pushed.records))
    }

    /// `GET /v1/sync/events`: Server-Sent Events for the device's account (`records`, `resync`);
    /// at a keep-alive, a device no longer trusted gets `deviceRemoved` and the stream ends.
    private func liveUpdates<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        let caller = try await trusted(request)
        let live = relay.live, store = relay.store
        guard let (id, stream) = live.open(account: caller.account) else {
            throw SyncError(.throttled, "too many live-update streams are open; try again later", retryAfterSeconds: 5)
        }
        let body = ResponseBody { writer in
            defer { live.close(id, account: caller.account) }
            try await writer.write(ByteBuffer(string: "retry: 2000\n: sync live updates\n\n"))
            for await event in stream {
                switch event {
                case .records(let counter):
                    let data = String(decoding: try SyncJSON.encoder.encode(SyncRecordsEvent(counter: counter)), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "event: records\ndata: \(data)\n\n"))
                case .resync: try await writer.write(ByteBuffer(string: "event: resync\ndata: {}\n\n"))
                case .keepAlive:
                    // A device removed meanwhile (on any instance) hears no more: its stream ends.
                    guard try await store.device(caller.deviceID, account: caller.account)?.state == .trusted else {
                        try await writer.write(ByteBuffer(string: "event: deviceRemoved\ndata: {}\n\n"))
                        try await writer.finish(nil)
                        return
                    }
                    try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                }
            }
            try await writer.finish(nil)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: body)
    }

    // MARK: Reading and answering

    /// Runs a route, turning any refusal into its JSON answer (logged by code only).
    private func answer<Context: SyncRequestContext>(_ context: Context, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            let refusal = SyncError.from(error)
            if refusal.code == .internal {
                context.logger.error("sync: request failed", metadata: ["error": "\(refusal.message)"])
            }
            return refusal.response
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int = SyncLimits.requestBytes) async throws -> T {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            throw SyncError(.invalid, "send JSON (Content-Type: application/json)")
        }
        let buffer = try await request.body.collect(upTo: limit)
        return try SyncJSON.decoder.decode(T.self, from: Data(buffer: buffer))
    }

    private func reply(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try SyncJSON.encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: Checks

    static func loginName(_ name: String) throws -> String {
        let folded = name.lowercased()
        guard (1...64).contains(folded.count) else { throw SyncError(.invalid, "an account name is 1 to 64 characters") }
        return folded
    }

    static func deviceID(_ id: String) throws -> String {
        guard id.count == 36, UUID(uuidString: id) != nil else { throw SyncError(.invalid, "a device id is a UUID") }
        return id
    }

    static func checkCounter(_ value: UInt64, _ what: String) throws {
        guard value <= UInt64(Int64.max) else { throw SyncError(.invalid, "\(what) is out of range") }
    }

    static func checkBlob(_ blob: Data, _ what: String) throws {
        guard !blob.isEmpty else { throw SyncError(.invalid, "\(what) is empty") }
        guard blob.count <= SyncLimits.blobBytes else { throw SyncError(.tooLarge, "\(what) is at most \(SyncLimits.blobBytes) bytes") }
    }

    static func checked(_ update: SyncDeviceListUpdate) throws -> SyncDeviceListUpdate {
        try checkCounter(update.version, "the version")
        try checkBlob(update.blob, "the device list")
        return update
    }

    /// A query parameter as a number in `range`, or `default` when absent.
    static func number(_ request: Request, _ name: String, default value: UInt64, range: ClosedRange<UInt64>) throws -> UInt64 {
        guard let text = request.uri.queryParameters[name[...]] else { return value }
        guard let number = UInt64(String(text)), range.contains(number) else {
            throw SyncError(.invalid, "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
