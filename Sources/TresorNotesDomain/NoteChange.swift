import Foundation

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
    /// The sync device whose request made the change (docs/SYNC.md, "Live updates"): its own
    /// live-events stream is not told. Nil for a browser's, the CLI's or another's change.
    public var device: String?

    public init(kind: Kind, noteID: String?, revision: Int64?, accounts: Set<AccountID>, device: String? = nil) {
        self.kind = kind
        self.noteID = noteID
        self.revision = revision
        self.accounts = accounts
        self.device = device
    }
}
