import Foundation
import TresorNotesDomain

/// What the web side tells the pages of its accounts (docs/WEB.md, "Live updates"): ids,
/// kinds and revisions, never a title or a body.
public enum WebEvent: Sendable, Equatable {
    /// A note (or an account's folders) changed.
    case note(NoteChange)
    /// A page of `account` ended its secure session (Lock Now, auto-lock): every page of the
    /// account drops its keys.
    case secureSessionEnded(account: AccountID, reason: String)
    /// Events may have been missed (a server's listening connection was lost and is back):
    /// every page reads what it shows again.
    case resync
    /// A sync push committed records of `account` up to `counter` (docs/SYNC.md, "Transport"):
    /// that account's connected devices pull.
    case syncRecords(account: AccountID, counter: Int64)
}

/// How changes reach the pages: within one daemon directly; between the instances of a
/// server through the database (PostgreSQL's LISTEN/NOTIFY), each instance telling its own
/// pages. A store announces its committed changes here itself; the web server publishes the
/// rest.
public protocol WebEventBus: Sendable {
    /// Tells every instance's pages.
    /// - Parameter event: what happened.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func publish(_ event: WebEvent) async throws

    /// Calls `listener` with every event from now on (it must return quickly).
    /// - Parameter listener: what to call.
    /// - Returns: the token for ``stopListening(_:)``.
    @discardableResult
    func listen(_ listener: @escaping @Sendable (WebEvent) -> Void) -> UUID

    /// Stops calling the listener `token` names.
    /// - Parameter token: what ``listen(_:)`` returned.
    func stopListening(_ token: UUID)
}

/// Everything the web side keeps, from one backend: the embedded one (a home's notes database,
/// the rest in daemon memory) or a server's database.
public struct WebBackend: Sendable {
    public var store: any WebStore
    public var sessions: any WebSessionStore
    public var throttles: any WebThrottleStore
    public var invites: any WebInviteStore
    public var events: any WebEventBus

    public init(
        store: any WebStore, sessions: any WebSessionStore, throttles: any WebThrottleStore, invites: any WebInviteStore,
        events: any WebEventBus
    ) {
        self.store = store
        self.sessions = sessions
        self.throttles = throttles
        self.invites = invites
        self.events = events
    }
}
