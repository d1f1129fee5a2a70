import Foundation
import NIOCore
import TresorSyncProtocol

/// What the relay's live-events stream tells a device (docs/SYNC.md, "Live updates").
public enum SyncLiveEvent: Sendable, Equatable {
    /// The stream is open: events from now on arrive (what came before, a pull finds).
    case opened
    /// The account's records now reach `counter`: pull if it is past the device's cursor.
    case records(counter: UInt64)
    /// The account's notes, folders or notes passphrase changed; its notes counter is now
    /// `counter`: sync the notes.
    case notes(counter: UInt64)
    /// The account's circle changed — its trusted-device list, a device removed or approved,
    /// the circle keys shared: read the list and this device's keys.
    case circle
    /// Events may have been missed: pull.
    case resync
    /// This device is no longer trusted; the stream ends.
    case deviceRemoved
}

extension SyncClient {
    /// The longest one stream is held before the server is asked for a new one.
    static let streamDuration: TimeInterval = 3600
    /// The longest event (or comment) the relay sends, with room to spare.
    static let eventLimit = 64 * 1024

    /// Listens to the account's live events (`GET /v1/sync/events`), signing in first when
    /// needed, and hands each to `handle` in order, ``SyncLiveEvent/opened`` first.
    /// - Parameter handle: called with each event; an error it throws ends the stream.
    /// - Throws: ``SyncClientError`` when the stream cannot open or drops (`unreachable`, also
    ///   when the server goes silent past the read timeout — it sends a keep-alive every 15 s),
    ///   or what `handle` threw. Returns when the server ends the stream, or after an hour.
    public func listen(_ handle: @Sendable (SyncLiveEvent) async throws -> Void) async throws {
        let request = SyncHTTPRequest(method: "GET", url: server.url("/v1/sync/events"), headers: [("Accept", "text/event-stream")])
        var (status, body) = try await http.open(try await authorized(request), for: Self.streamDuration)
        if status == 401 {
            try await signIn()
            (status, body) = try await http.open(try await authorized(request), for: Self.streamDuration)
        }
        guard (200..<300).contains(status) else {
            let answer = (try? await body.collect(upTo: Self.eventLimit)).map { Data($0.readableBytesView) } ?? Data()
            throw Self.refusal(SyncHTTPResponse(status: status, body: answer))
        }
        try await handle(.opened)
        var parser = SyncEventParser()
        do {
            for try await chunk in body {
                for event in try parser.feed(Data(chunk.readableBytesView)) {
                    try await handle(event)
                    if event == .deviceRemoved { return }
                }
            }
        } catch let error as SyncClientError {
            throw error
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw SyncHTTP.failure(error)
        }
    }
}

/// Reads Server-Sent Events as bytes arrive: blocks end with an empty line; `event:` names
/// the event, `data:` carries its JSON, lines starting with `:` are comments (keep-alives).
struct SyncEventParser {
    private var buffer = Data()

    /// The events completed by `bytes`.
    /// - Throws: ``SyncClientError/tooLarge(limit:)`` for an event over the limit,
    ///   ``SyncClientError/garbage(_:)`` for a `records` or `notes` event whose data is not a
    ///   counter. An event of another name is skipped (a newer server's).
    mutating func feed(_ bytes: Data) throws -> [SyncLiveEvent] {
        buffer.append(bytes)
        var events: [SyncLiveEvent] = []
        while let end = Self.blockEnd(in: buffer) {
            let block = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
            buffer.removeSubrange(buffer.startIndex..<end.upperBound)
            if let event = try Self.event(block) { events.append(event) }
        }
        guard buffer.count <= SyncClient.eventLimit else { throw SyncClientError.tooLarge(limit: SyncClient.eventLimit) }
        return events
    }

    private static func blockEnd(in data: Data) -> Range<Data.Index>? {
        let lf = data.range(of: Data("\n\n".utf8)), crlf = data.range(of: Data("\r\n\r\n".utf8))
        switch (lf, crlf) {
        case (let lf?, let crlf?): return lf.lowerBound < crlf.lowerBound ? lf : crlf
        case (let lf?, nil): return lf
        case (nil, let crlf?): return crlf
        case (nil, nil): return nil
        }
    }

    private static func event(_ block: String) throws -> SyncLiveEvent? {
        var name = "message", data = ""
        for line in block.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            if line.hasPrefix(":") { continue }
            let (field, value) = line.firstIndex(of: ":").map { (line[..<$0], line[line.index(after: $0)...]) } ?? (line[...], "")
            let trimmed = value.hasPrefix(" ") ? value.dropFirst() : value
            switch field {
            case "event": name = String(trimmed)
            case "data": data += data.isEmpty ? String(trimmed) : "\n" + trimmed
            default: continue
            }
        }
        switch name {
        case "records":
            guard let event = try? SyncJSON.decoder.decode(SyncRecordsEvent.self, from: Data(data.utf8)) else {
                throw SyncClientError.garbage("a records event without its counter")
            }
            return .records(counter: event.counter)
        case "notes":
            guard let event = try? SyncJSON.decoder.decode(SyncNotesEvent.self, from: Data(data.utf8)) else {
                throw SyncClientError.garbage("a notes event without its counter")
            }
            return .notes(counter: event.counter)
        case "circle": return .circle
        case "resync": return .resync
        case "deviceRemoved": return .deviceRemoved
        default: return nil
        }
    }
}
