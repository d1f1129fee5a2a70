import Foundation
import Synchronization
import TresorWebStore

/// The devices' live-update streams on this instance (`GET /v1/sync/events`), kept by
/// account: a change's event reaches the streams of its account only, found by one lookup, so
/// a device costs nothing when other accounts change — and not the stream of the device whose
/// request made the change, which knows of it already. Events from every instance arrive
/// through the server's ``WebEventBus``.
final class SyncLiveUpdates: Sendable {
    /// What a stream is told.
    enum Event: Sendable, Equatable {
        /// The account's records now reach `counter`.
        case records(counter: UInt64)
        /// A note the account may see, its folders or its notes passphrase changed: the stream
        /// reads the account's notes counters.
        case notes
        /// The account's circle changed: its device list, a device's state, the keys shared.
        case circle
        /// Events may have been missed: pull.
        case resync
        case keepAlive
    }

    private struct Stream {
        let device: String
        let continuation: AsyncStream<Event>.Continuation
    }

    /// Streams open at once, at most, on this instance.
    static let capacity = 1024
    private let streams = Mutex<[AccountID: [UUID: Stream]]>([:])

    /// Opens a stream for `device` of `account`.
    /// - Parameters:
    ///   - account: the device's account.
    ///   - device: the device's id: what its own requests change is not told to it.
    /// - Returns: its id and events; nil when ``capacity`` streams are open.
    func open(account: AccountID, device: String) -> (UUID, AsyncStream<Event>)? {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        let opened = streams.withLock { streams -> Bool in
            guard streams.values.reduce(0, { $0 + $1.count }) < Self.capacity else { return false }
            streams[account, default: [:]][id] = Stream(device: device, continuation: continuation)
            return true
        }
        return opened ? (id, stream) : nil
    }

    /// Forgets stream `id` of `account`.
    func close(_ id: UUID, account: AccountID) {
        let stream = streams.withLock { streams -> Stream? in
            let removed = streams[account]?.removeValue(forKey: id)
            if streams[account]?.isEmpty == true { streams[account] = nil }
            return removed
        }
        stream?.continuation.finish()
    }

    /// Streams open for `account`.
    func count(account: AccountID) -> Int { streams.withLock { $0[account]?.count ?? 0 } }

    /// Passes on what the event bus announced that concerns devices: their account's records,
    /// notes, folders, notes passphrase or circle changed, or events may have been missed.
    func deliver(_ event: WebEvent) {
        switch event {
        case .syncRecords(let account, let counter, let device):
            send(.records(counter: UInt64(max(counter, 0))), to: [account], except: device)
        case .note(let change):
            // Owner and participants: a participant's stream finds its counters unmoved and says nothing.
            send(.notes, to: change.accounts, except: change.device)
        case .notesPassphrase(let account, let device): send(.notes, to: [account], except: device)
        case .syncCircle(let account, let device): send(.circle, to: [account], except: device)
        case .resync: sendToAll(.resync)
        case .secureSessionEnded: break
        }
    }

    /// A comment line on every stream, so proxies keep them open and dead ones fail a write.
    func keepAlive() { sendToAll(.keepAlive) }

    private func send(_ event: Event, to accounts: Set<AccountID>, except device: String?) {
        let continuations = streams.withLock { streams in
            accounts.flatMap { (streams[$0] ?? [:]).values.filter { $0.device != device }.map(\.continuation) }
        }
        for continuation in continuations { continuation.yield(event) }
    }

    private func sendToAll(_ event: Event) {
        for continuation in streams.withLock({ $0.values.flatMap(\.values).map(\.continuation) }) { continuation.yield(event) }
    }
}
