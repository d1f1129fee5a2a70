import Foundation
import TresorNotes
import TresorWebStore

extension WebBackend {
    /// The embedded backend of one daemon and its home: notes in the home's notes database,
    /// sessions, counters, invites and password-reset codes in the daemon's memory, live updates within the process.
    /// - Parameters:
    ///   - store: opens the home's notes store.
    ///   - feed: where that store announces its changes.
    ///   - lifetimes: how long web sessions last.
    /// - Returns: the backend.
    public static func embedded(store: @escaping @Sendable () throws -> NotesStore, feed: NoteChangeFeed, lifetimes: SessionLifetimes) -> WebBackend {
        WebBackend(
            store: SQLiteWebStore(store: store), sessions: MemorySessionStore(lifetimes: lifetimes), throttles: MemoryThrottleStore(),
            invites: MemoryInviteStore(.registration), passwordResets: MemoryInviteStore(.passwordReset), events: LocalEventBus(feed: feed))
    }
}
