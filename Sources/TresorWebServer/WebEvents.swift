import Foundation
import Hummingbird
import NIOCore
import Synchronization
import TresorNotesDomain
import TresorProtocol
import TresorWebStore

/// Live updates (docs/WEB.md, "Live updates"): each signed-in page holds one Server-Sent
/// Events stream (`GET /api/events`), and is told within a second what changed for its account
/// — a note changed, was locked, unshared, deleted (by another tab, another person or the CLI),
/// the folders changed, another tab used Lock Now or auto-locked, the keybag locked, the
/// session ended. Events carry ids, kinds and revisions, never a title or a body: the page
/// fetches what it may see through the API, so nothing locked is ever pushed. These are one
/// instance's streams; what happens on another instance of a server reaches them through the
/// backend's ``WebEventBus`` (``deliver(_:)``).
final class WebEvents: Sendable {
    /// One event, as the stream writes it.
    struct Event: Sendable {
        let name: String
        let data: [String: String]

        var text: String {
            let json =
                (try? JSONSerialization.data(withJSONObject: data, options: [.sortedKeys])).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
            return "event: \(name)\ndata: \(json)\n\n"
        }
    }

    private struct Stream {
        let account: AccountID
        let sessionDigest: Data
        let continuation: AsyncStream<Event>.Continuation
    }

    /// Streams open at once, at most (each holds a connection).
    static let capacity = 256
    private let streams = Mutex<[UUID: Stream]>([:])

    /// Opens a stream for `session`.
    /// - Returns: its id and its events; nil when ``capacity`` streams are open.
    func open(for session: WebSession) -> (UUID, AsyncStream<Event>)? {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        let opened = streams.withLock { streams -> Bool in
            guard streams.count < Self.capacity else { return false }
            streams[id] = Stream(account: session.account.id, sessionDigest: session.tokenDigest, continuation: continuation)
            return true
        }
        return opened ? (id, stream) : nil
    }

    /// Forgets stream `id` (its page went away).
    func close(_ id: UUID) {
        streams.withLock { $0.removeValue(forKey: id) }?.continuation.finish()
    }

    var count: Int { streams.withLock { $0.count } }

    /// The cookie-token digests of the open streams' sessions.
    var sessionDigests: [Data] { Array(Set(streams.withLock { $0.values.map(\.sessionDigest) })) }

    /// Passes on what the backend announced.
    func deliver(_ event: WebEvent) {
        switch event {
        case .note(let change): noteChanged(change)
        case .secureSessionEnded(let account, let reason): secureSessionEnded(for: account, reason: reason)
        case .resync: send(Event(name: "resync", data: [:])) { _ in true }
        case .syncRecords, .syncCircle, .notesPassphrase: break  // for devices (TresorSyncServer's own streams), not pages
        }
    }

    /// Tells the accounts of `change` what happened to which note.
    func noteChanged(_ change: NoteChange) {
        var data = ["kind": change.kind.rawValue]
        if let id = change.noteID { data["id"] = id }
        if let revision = change.revision { data["revision"] = String(revision) }
        send(Event(name: change.kind == .folders ? "folders" : "note", data: data)) { change.accounts.contains($0.account) }
    }

    /// Another page of `account` ended its secure session (Lock Now, auto-lock): every page of
    /// the account drops its keys and closes its locked notes.
    func secureSessionEnded(for account: AccountID, reason: String) {
        send(Event(name: "lock", data: ["reason": reason])) { $0.account == account }
    }

    /// The keybag is now `state` (every page: locked notes close when it locks).
    func keybagChanged(to state: String) {
        send(Event(name: "keybag", data: ["state": state])) { _ in true }
    }

    /// A comment line on every stream: proxies keep it open, and a stream whose page went
    /// away fails its write and is closed.
    func keepAlive() {
        send(Event(name: "keepAlive", data: [:])) { _ in true }
    }

    /// Ends the streams whose session was among `checked` and is not in `live`, telling them
    /// first. A stream opened while `checked` was being looked up is not judged: its session
    /// (often one just started) was not asked about.
    /// - Parameters:
    ///   - checked: the session digests looked up (``sessionDigests`` before the lookup).
    ///   - live: those of them the session store found live.
    func endStreams(checked: Set<Data>, live: Set<Data>) {
        let ended = streams.withLock { streams -> [Stream] in
            let gone = streams.filter { checked.contains($0.value.sessionDigest) && !live.contains($0.value.sessionDigest) }
            for key in gone.keys { streams[key] = nil }
            return Array(gone.values)
        }
        for stream in ended {
            stream.continuation.yield(Event(name: "signedOut", data: [:]))
            stream.continuation.finish()
        }
    }

    private func send(_ event: Event, to selected: (Stream) -> Bool) {
        for stream in streams.withLock({ $0.values.filter(selected) }) { stream.continuation.yield(event) }
    }
}
