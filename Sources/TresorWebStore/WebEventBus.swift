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
    /// A sync push of `device` committed records of `account` up to `counter` (docs/SYNC.md,
    /// "Live updates"): that account's other connected devices pull.
    case syncRecords(account: AccountID, counter: Int64, device: String?)
    /// `account`'s sync circle changed (docs/SYNC.md, "Live updates"): its trusted-device list,
    /// a device's state (removed, approved) or the circle keys shared to its devices; `device`
    /// made the change. The account's other connected devices read the list and their keys.
    case syncCircle(account: AccountID, device: String?)
    /// `account`'s notes passphrase changed — a new generation, its hint, which one is current
    /// (docs/SYNC.md, "Live updates"); `device`, when a sync device's request changed it. The
    /// account's other connected devices read it.
    case notesPassphrase(account: AccountID, device: String?)
}

/// Which sync device the current task serves, for the events it announces.
public enum WebEventOrigin {
    /// The sync device whose request the current task serves (the sync relay sets it around
    /// the store's writes), or nil: what the store announces meanwhile names it, so that
    /// device's own live-events stream is not woken by its own change (docs/SYNC.md, "Live
    /// updates").
    @TaskLocal public static var device: String?
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
    /// Invites to register (``WebInvitePurpose/registration``).
    public var invites: any WebInviteStore
    /// Codes to set a forgotten password (``WebInvitePurpose/passwordReset``).
    public var passwordResets: any WebInviteStore
    public var events: any WebEventBus

    /// Makes a backend; the parameters are the properties of the same names.
    public init(
        store: any WebStore, sessions: any WebSessionStore, throttles: any WebThrottleStore, invites: any WebInviteStore,
        passwordResets: any WebInviteStore, events: any WebEventBus
    ) {
        self.store = store
        self.sessions = sessions
        self.throttles = throttles
        self.invites = invites
        self.passwordResets = passwordResets
        self.events = events
    }
}
