import Foundation
import Synchronization

/// A change of a note, as live updates tell it (docs/WEB.md, "Live updates"): what happened
/// to which note, and who may know — ids, kinds and revisions only, never a title or a body,
/// so a listener can pass it on to anyone of `accounts` without leaking content.
public struct NoteChange: Equatable, Sendable {
    public enum Kind: String, Codable, Sendable {
        /// A new note (a conflict copy too).
        case created
        /// Its title, body, pin, folder or attachments changed.
        case changed
        /// Locked, or its lock removed.
        case locked, unlocked
        /// Moved to Recently Deleted, restored, or deleted for good.
        case deleted, restored, deletedForGood
        /// A participant added or removed (the removed one is told too).
        case shared, unshared
        /// The account's folders changed (no note named).
        case folders
    }

    public var kind: Kind
    /// The note, nil for `folders`.
    public var noteID: String?
    /// Its revision after the change (nil when it is gone).
    public var revision: Int64?
    /// The accounts that may see the note: its owner and participants (and one just removed).
    public var accounts: Set<AccountID>

    public init(kind: Kind, noteID: String?, revision: Int64?, accounts: Set<AccountID>) {
        self.kind = kind
        self.noteID = noteID
        self.revision = revision
        self.accounts = accounts
    }
}

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
