import Foundation
import Hummingbird
import NIOCore
import TresorSyncProtocol
import TresorWebStore

/// Pushes and the devices' live-update streams.
extension SyncRoutes {
    func push<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        let caller = try await trusted(request)
        let body = try await decode(SyncPushRequest.self, request, limit: SyncLimits.pushRequestBytes)
        guard (1...SyncLimits.uploadsPerPush).contains(body.uploads.count) else {
            throw SyncRefusal(body.uploads.isEmpty ? .invalid : .tooLarge, "a push holds 1 to \(SyncLimits.uploadsPerPush) uploads")
        }
        var total = 0
        for (index, upload) in body.uploads.enumerated() {
            guard upload.deviceID == caller.deviceID else { throw SyncRefusal(.forbidden, "upload \(index) names another device") }
            guard UUID(uuidString: upload.recordID) != nil else { throw SyncRefusal(.invalid, "upload \(index): the record id is not a UUID") }
            guard upload.deviceSequence >= 1 else { throw SyncRefusal(.invalid, "upload \(index): device sequences start at 1") }
            try Self.checkCounter(upload.deviceSequence, "upload \(index): the device sequence")
            try Self.checkCounter(upload.baseCounter, "upload \(index): the base counter")
            guard !upload.body.isEmpty else { throw SyncRefusal(.invalid, "upload \(index): the body is empty") }
            guard upload.body.count <= SyncLimits.bodyBytes else {
                throw SyncRefusal(.tooLarge, "upload \(index): a body is at most \(SyncLimits.bodyBytes) bytes")
            }
            total += upload.body.count
        }
        guard total <= SyncLimits.pushBodyBytes else {
            throw SyncRefusal(.tooLarge, "a push's bodies are at most \(SyncLimits.pushBodyBytes) bytes together")
        }
        guard Set(body.uploads.map(\.deviceSequence)).count == body.uploads.count else {
            throw SyncRefusal(.invalid, "a push names each device sequence once")
        }
        let pushed = try await relay.store.push(body.uploads, account: caller.account, device: caller.deviceID)
        if pushed.stored, let latest = pushed.records.map(\.counter).max() {
            await announce(.syncRecords(account: caller.account, counter: Int64(latest), device: caller.deviceID), context)
        }
        return try reply(SyncPushResponse(records: pushed.records))
    }

    /// `GET /v1/sync/events`: Server-Sent Events for the device's account (`records`, `notes`,
    /// `circle`, `resync`), none for what the device's own requests changed; at a `circle`
    /// event or a keep-alive, a device no longer trusted gets `deviceRemoved` and the stream ends.
    func liveUpdates<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        let caller = try await trusted(request)
        let live = relay.live, store = relay.store
        // The notes counters the device was last told of: a note change that left them where
        // they were (a note the account takes part in, another's) is not told.
        let atOpen = try await store.state(account: caller.account)
        guard let (id, stream) = live.open(account: caller.account, device: caller.deviceID) else {
            throw SyncRefusal(.throttled, "too many live-update streams are open; try again later", retryAfterSeconds: 5)
        }
        let body = ResponseBody { writer in
            defer { live.close(id, account: caller.account) }
            var told = SyncNotesEvent(counter: atOpen.notes, settings: atOpen.notesSettings)
            try await writer.write(ByteBuffer(string: "retry: 2000\n: sync live updates\n\n"))
            for await event in stream {
                switch event {
                case .records(let counter):
                    let data = String(decoding: try SyncJSON.encoder.encode(SyncRecordsEvent(counter: counter)), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "event: records\ndata: \(data)\n\n"))
                case .notes:
                    let now = try await store.state(account: caller.account)
                    guard now.notes > told.counter || (now.notesSettings ?? 0) > (told.settings ?? 0) else { continue }
                    told = SyncNotesEvent(counter: now.notes, settings: now.notesSettings)
                    let data = String(decoding: try SyncJSON.encoder.encode(told), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "event: notes\ndata: \(data)\n\n"))
                case .circle, .keepAlive:
                    // A device removed meanwhile (on any instance) hears no more: its stream ends.
                    guard try await store.device(caller.deviceID, account: caller.account)?.state == .trusted else {
                        try await writer.write(ByteBuffer(string: "event: deviceRemoved\ndata: {}\n\n"))
                        try await writer.finish(nil)
                        return
                    }
                    try await writer.write(ByteBuffer(string: event == .circle ? "event: circle\ndata: {}\n\n" : ": keep-alive\n\n"))
                case .resync: try await writer.write(ByteBuffer(string: "event: resync\ndata: {}\n\n"))
                }
            }
            try await writer.finish(nil)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: body)
    }

    /// Tells every instance's device streams of a committed change. The change stands either
    /// way: a device that misses it finds it at its next sync.
    func announce<Context: SyncRequestContext>(_ event: WebEvent, _ context: Context) async {
        do {
            try await relay.events.publish(event)
        } catch {
            context.logger.notice("sync: change notice not published", metadata: ["error": "\(SyncRefusal.from(error).code)"])
        }
    }

    /// Runs `body` — a write of the web store — as `caller`'s: the changes the store announces
    /// name the device, so its own stream does not wake it (``WebEventOrigin``).
    func asDevice<T>(_ caller: SyncCaller, _ body: () async throws -> T) async throws -> T {
        try await WebEventOrigin.$device.withValue(caller.deviceID) { try await body() }
    }
}
