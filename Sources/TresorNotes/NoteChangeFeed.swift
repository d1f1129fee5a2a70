import Foundation
import Synchronization
import TresorNotesDomain

/// Where a notes store announces its changes, after they are committed — whichever client
/// made them (the web, the CLI, an application). The daemon's web server listens and tells
/// the browsers (`GET /api/events`).
public final class NoteChangeFeed: Sendable {
    private let listeners = Mutex<[UUID: @Sendable (NoteChange) -> Void]>([:])

    public init() {}

    /// Calls `listener` with every change from now on, on the thread that made it (it must
    /// return quickly).
    /// - Parameter listener: what to call.
    /// - Returns: the token for ``stopListening(_:)``.
    @discardableResult
    public func listen(_ listener: @escaping @Sendable (NoteChange) -> Void) -> UUID {
        let id = UUID()
        listeners.withLock { $0[id] = listener }
        return id
    }

    /// Stops calling the listener `token` names.
    /// - Parameter token: what ``listen(_:)`` returned.
    public func stopListening(_ token: UUID) {
        listeners.withLock { _ = $0.removeValue(forKey: token) }
    }

    /// Whether anyone listens (the store skips working out a change's audience otherwise).
    var hasListeners: Bool { listeners.withLock { !$0.isEmpty } }

    func publish(_ change: NoteChange) {
        for listener in listeners.withLock({ Array($0.values) }) { listener(change) }
    }
}
