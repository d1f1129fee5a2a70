import Foundation
import Synchronization
import TresorWebStore

/// The devices' live-update streams on this instance (`GET /v1/sync/events`), kept by
/// account: a push's event reaches the streams of its account only, found by one lookup, so
/// a device costs nothing when other accounts change. Events from every instance arrive
/// through the server's ``WebEventBus``.
final class SyncLiveUpdates: Sendable {
    /// What a stream is told.
    enum Event: Sendable, Equatable {
        /// The account's records now reach `counter`.
        case records(counter: UInt64)
        /// A note the account may see changed: the stream reads the account's notes counter.
        case notes
        /// Events may have been missed: pull.
        case resync
        case keepAlive
    }

    /// Streams open at once, at most, on this instance.
    static let capacity = 1024
    private let streams = Mutex<[AccountID: [UUID: AsyncStream<Event>.Continuation]]>([:])

    /// Opens a stream for a device of `account`.
    /// - Returns: its id and events; nil when ``capacity`` streams are open.
    func open(account: AccountID) -> (UUID, AsyncStream<Event>)? {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        let opened = streams.withLock { streams -> Bool in
            guard streams.values.reduce(0, { $0 + $1.count }) < Self.capacity else { return false }
            streams[account, default: [:]][id] = continuation
            return true
        }
        return opened ? (id, stream) : nil
    }

    /// Forgets stream `id` of `account`.
    func close(_ id: UUID, account: AccountID) {
        let continuation = streams.withLock { streams -> AsyncStream<Event>.Continuation? in
            let removed = streams[account]?.removeValue(forKey: id)
            if streams[account]?.isEmpty == true { streams[account] = nil }
            return removed
        }
        continuation?.finish()
    }

    /// Streams open for `account`.
    func count(account: AccountID) -> Int { streams.withLock { $0[account]?.count ?? 0 } }

    /// Passes on what the event bus announced that concerns devices: their account's records
    /// or notes changed, or events may have been missed.
    func deliver(_ event: WebEvent) {
        switch event {
        case .syncRecords(let account, let counter):
            for continuation in streams.withLock({ Array(($0[account] ?? [:]).values) }) {
                continuation.yield(.records(counter: UInt64(max(counter, 0))))
            }
        case .note(let change):
            // Owner and participants: a participant's stream finds its counter unmoved and says nothing.
            let continuations = streams.withLock { streams in change.accounts.flatMap { Array((streams[$0] ?? [:]).values) } }
            for continuation in continuations { continuation.yield(.notes) }
        case .resync: sendToAll(.resync)
        default: break
        }
    }

    /// A comment line on every stream, so proxies keep them open and dead ones fail a write.
    func keepAlive() { sendToAll(.keepAlive) }

    private func sendToAll(_ event: Event) {
        for continuation in streams.withLock({ $0.values.flatMap(\.values) }) { continuation.yield(event) }
    }
}
