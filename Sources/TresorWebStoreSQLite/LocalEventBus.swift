import Foundation
import Synchronization
import TresorNotes
import TresorWebStore

/// The embedded daemon's live updates: the notes store's committed changes (whichever client
/// made them: the web, the CLI, an application) and the web server's own events, told to this
/// process's listeners directly.
public final class LocalEventBus: WebEventBus {
    private let listeners = Mutex<[UUID: @Sendable (WebEvent) -> Void]>([:])
    private let feed: NoteChangeFeed
    private let feedToken: Mutex<UUID?> = Mutex(nil)

    /// - Parameter feed: where the home's notes store announces its changes.
    public init(feed: NoteChangeFeed) {
        self.feed = feed
    }

    public func publish(_ event: WebEvent) async throws {
        deliver(event)
    }

    public func listen(_ listener: @escaping @Sendable (WebEvent) -> Void) -> UUID {
        let id = UUID()
        let first = listeners.withLock { listeners in
            listeners[id] = listener
            return listeners.count == 1
        }
        if first {
            // The store's feed is listened to while anyone listens here.
            let token = feed.listen { [weak self] change in self?.deliver(.note(change)) }
            feedToken.withLock { $0 = token }
        }
        return id
    }

    public func stopListening(_ token: UUID) {
        let last = listeners.withLock { listeners in
            listeners[token] = nil
            return listeners.isEmpty
        }
        if last,
            let token = feedToken.withLock({ current -> UUID? in
                defer { current = nil }
                return current
            })
        {
            feed.stopListening(token)
        }
    }

    private func deliver(_ event: WebEvent) {
        for listener in listeners.withLock({ Array($0.values) }) { listener(event) }
    }
}
