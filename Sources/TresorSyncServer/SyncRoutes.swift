import Crypto
import Foundation
import Hummingbird
import NIOCore
import TresorSyncProtocol

/// The routes of ``SyncRelay``. Each answers JSON (``SyncJSON``); a refusal is a
/// ``SyncErrorBody`` with its status, and changes nothing. Devices send their session as
/// `Authorization: Bearer TOKEN`; nothing here logs a token, a password, a name or a body.
struct SyncRoutes {
    let relay: SyncRelay

    func register<Context: SyncRequestContext>(on router: Router<Context>) {
        router.post("/v1/sync/accounts") { request, context in
            await answer(context) { try await registerAccount(request, context) }
        }
        router.post("/v1/sync/devices") { request, context in
            await answer(context) { try await enroll(request, context) }
        }
        router.get("/v1/sync/devices") { request, context in
            await answer(context) { try await reply(relay.store.devices(account: try await trusted(request).account)) }
        }
        router.delete("/v1/sync/devices/:id") { request, context in
            await answer(context) {
                // A trusted device removes any; a pending one withdraws itself only (a recovery
                // that failed), so its join request cannot be approved into a member no one holds.
                let caller = try await signedIn(request, allowingPending: true)
                let removed = try Self.deviceID(context.parameters.require("id"))
                guard caller.state != .pending || removed == caller.deviceID else {
                    throw SyncRefusal(.devicePending, "this device waits for approval: it can withdraw only itself")
                }
                try await relay.store.removeDevice(removed, account: caller.account)
                await announce(.syncCircle(account: caller.account, device: caller.deviceID), context)
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
        router.get("/v1/sync/state") { request, context in
            // A device with nothing to do asks only this (docs/SYNC.md, "A sync with nothing to do").
            await answer(context) { try await reply(relay.store.state(account: try await trusted(request).account)) }
        }
        router.get("/v1/sync/device-list") { request, context in
            // A pending device reads it too: it shows fingerprint words for the circle it names,
            // and verifies it from the first list once approved. It is public by design.
            await answer(context) {
                try await reply(relay.store.deviceList(account: try await signedIn(request, allowingPending: true).account))
            }
        }
        router.put("/v1/sync/device-list") { request, context in
            await answer(context) {
                let caller = try await trusted(request)
                let update = try Self.checked(try await decode(SyncDeviceListUpdate.self, request))
                try await relay.store.putDeviceList(update, account: caller.account)
                await announce(.syncCircle(account: caller.account, device: caller.deviceID), context)
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
                else { throw SyncRefusal(.notFound, "no such join request in this circle") }
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
                await announce(.syncCircle(account: caller.account, device: caller.deviceID), context)
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
                guard (1...256).contains(body.envelopes.count) else { throw SyncRefusal(.invalid, "send 1 to 256 envelopes") }
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
                guard (1...256).contains(body.envelopes.count) else { throw SyncRefusal(.invalid, "send 1 to 256 envelopes") }
                for envelope in body.envelopes {
                    _ = try Self.deviceID(envelope.deviceID)
                    try Self.checkCounter(envelope.epoch, "epoch")
                    try Self.checkBlob(envelope.blob, "a key envelope")
                }
                try await relay.store.putEnvelopes(body.envelopes, account: caller.account)
                // A device that read a rolled list waits for its share of the new key.
                await announce(.syncCircle(account: caller.account, device: caller.deviceID), context)
                return Response(status: .noContent)
            }
        }
        router.get("/v1/sync/events") { request, context in
            await answer(context) { try await liveUpdates(request, context) }
        }
        registerNotes(on: router)
        registerAttachments(on: router)
    }

    // MARK: Reading and answering

    /// Runs a route, turning any refusal into its JSON answer (logged by code only).
    func answer<Context: SyncRequestContext>(_ context: Context, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            let refusal = SyncRefusal.from(error)
            if refusal.code == .internal {
                context.logger.error("sync: request failed", metadata: ["error": "\(refusal.message)"])
            }
            return refusal.response
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int = SyncLimits.requestBytes) async throws -> T {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            throw SyncRefusal(.invalid, "send JSON (Content-Type: application/json)")
        }
        let buffer = try await request.body.collect(upTo: limit)
        return try SyncJSON.decoder.decode(T.self, from: Data(buffer: buffer))
    }

    func reply(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try SyncJSON.encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: Checks

    static func loginName(_ name: String) throws -> String {
        let folded = name.lowercased()
        guard (1...64).contains(folded.count) else { throw SyncRefusal(.invalid, "an account name is 1 to 64 characters") }
        return folded
    }

    static func deviceID(_ id: String) throws -> String {
        guard SyncDeviceID.isWellFormed(id) else { throw SyncRefusal(.invalid, "a device id is 32 lowercase hexadecimal characters") }
        return id
    }

    static func checkCounter(_ value: UInt64, _ what: String) throws {
        guard value <= UInt64(Int64.max) else { throw SyncRefusal(.invalid, "\(what) is out of range") }
    }

    static func checkBlob(_ blob: Data, _ what: String) throws {
        guard !blob.isEmpty else { throw SyncRefusal(.invalid, "\(what) is empty") }
        guard blob.count <= SyncLimits.blobBytes else { throw SyncRefusal(.tooLarge, "\(what) is at most \(SyncLimits.blobBytes) bytes") }
    }

    static func checked(_ update: SyncDeviceListUpdate) throws -> SyncDeviceListUpdate {
        try checkCounter(update.version, "the version")
        try checkBlob(update.blob, "the device list")
        if let key = update.recoveryPublicKey, (try? Curve25519.Signing.PublicKey(rawRepresentation: key)) == nil {
            throw SyncRefusal(.invalid, "the recovery public key is not an Ed25519 public key (32 bytes)")
        }
        return update
    }

    /// A query parameter as a number in `range`, or `default` when absent.
    static func number(_ request: Request, _ name: String, default value: UInt64, range: ClosedRange<UInt64>) throws -> UInt64 {
        guard let text = request.uri.queryParameters[name[...]] else { return value }
        guard let number = UInt64(String(text)), range.contains(number) else {
            throw SyncRefusal(.invalid, "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
