import FoundationEssentials
import TresorModel

// The notes routes' wire types (`/v1/notes/…`, docs/API.md, "Notes"). The `tresor` CLI calls
// them, and applications with their team's notes group call most of them ("Notes for
// applications"). Notes, folders, summaries and attachments travel as TresorNotes' own Codable
// value types (`NoteSummary`, `OpenedNote`, `Folder`, `AttachmentInfo`, `LockInfo`, `PassphraseStatus`).
// Passphrases travel in request bodies only, never in paths, headers or query strings.

/// `POST /v1/notes/list`: every note of the caller's account (the local account for the `tresor`
/// CLI), or of one folder; the body is optional.
public struct ListNotesRequest: Codable, Sendable {
    /// A folder's name (`404 notFound` when there is none); absent: every note.
    public var folder: String?
    /// Makes a list request; the parameter is the property of the same name.
    public init(folder: String? = nil) { self.folder = folder }
}

/// A list of notes: `list` and `search`. Pinned first, then most recently modified (`list`),
/// or best match first (`search`).
public struct NotesResponse: Codable, Sendable {
    /// The notes, as summaries without their bodies.
    public var notes: [NoteSummary]
    /// Makes a list of notes; the parameter is the property of the same name.
    public init(notes: [NoteSummary]) { self.notes = notes }
}

/// `POST /v1/notes/create`: a new, unlocked note.
public struct CreateNoteRequest: Codable, Sendable {
    /// The note's title, up to 4 KiB of UTF-8. Empty: the body's first line, else "New Note".
    public var title: String
    /// The note's text, up to 1 MiB of UTF-8.
    public var body: String
    /// A folder's name, created when missing; absent: no folder.
    public var folder: String?
    /// Whether the note is pinned (listed first); nil: not pinned.
    public var pinned: Bool?

    /// Makes a create request; the parameters are the properties of the same names.
    public init(title: String, body: String, folder: String? = nil, pinned: Bool? = nil) {
        self.title = title
        self.body = body
        self.folder = folder
        self.pinned = pinned
    }
}

/// One note, and the passphrase that opens it when it is locked and no secure session holds
/// its passphrase: `show`, `lock`, `remove-lock`, `delete` (which ignores `passphrase`).
public struct NoteRequest: Codable, Sendable {
    /// The note's id, as its `NoteSummary` gives it.
    public var id: String
    /// The note's passphrase, when it is locked and no secure session holds it; nil otherwise.
    public var passphrase: String?

    /// Makes a note request; the parameters are the properties of the same names.
    public init(id: String, passphrase: String? = nil) {
        self.id = id
        self.passphrase = passphrase
    }
}

/// `POST /v1/notes/edit`: absent fields stay as they are.
public struct EditNoteRequest: Codable, Sendable {
    /// The note's id.
    public var id: String
    /// The new title (up to 4 KiB); nil keeps it.
    public var title: String?
    /// The new body (up to 1 MiB); nil keeps it. A locked note's body is re-sealed under its
    /// note key: needs `passphrase` or a session.
    public var body: String?
    /// Pins (`true`) or unpins (`false`) the note; nil leaves it as it is.
    public var pinned: Bool?
    /// Moves the note to this folder (created when missing).
    public var folder: String?
    /// Moves the note out of any folder; excludes `folder`.
    public var removeFromFolder: Bool?
    /// The note's passphrase, when it is locked and no secure session holds it.
    public var passphrase: String?
    /// The revision the new title and body were made from, with their text then: a later
    /// revision is merged with, or the edit kept as a conflict copy (docs/API.md, "Revisions").
    public var base: NoteBase?

    /// Makes an edit request; the parameters are the properties of the same names.
    public init(
        id: String, title: String? = nil, body: String? = nil, pinned: Bool? = nil, folder: String? = nil,
        removeFromFolder: Bool? = nil, passphrase: String? = nil, base: NoteBase? = nil
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.pinned = pinned
        self.folder = folder
        self.removeFromFolder = removeFromFolder
        self.passphrase = passphrase
        self.base = base
    }
}

/// `POST /v1/notes/recently-deleted/empty`: how many notes were deleted for good.
public struct EmptiedResponse: Codable, Sendable {
    /// How many notes were deleted for good.
    public var deleted: Int
    /// Makes the answer; the parameter is the property of the same name.
    public init(deleted: Int) { self.deleted = deleted }
}

/// `POST /v1/notes/search`: every word must match a word of the title or (unlocked notes
/// only) of the body, as a prefix; case and diacritics are ignored.
public struct SearchNotesRequest: Codable, Sendable {
    /// The words to look for, 1 to 1,024 bytes of UTF-8.
    public var text: String
    /// Makes a search request; the parameter is the property of the same name.
    public init(text: String) { self.text = text }
}

/// `POST /v1/notes/folders`.
public struct FoldersResponse: Codable, Sendable {
    /// The folders of the caller's account, each with its id, name and note count.
    public var folders: [Folder]
    /// Makes a folder list; the parameter is the property of the same name.
    public init(folders: [Folder]) { self.folders = folders }
}

/// `POST /v1/notes/folders/create` and `…/delete` (only an empty folder may be deleted).
public struct FolderRequest: Codable, Sendable {
    /// The folder's name, up to 256 bytes of UTF-8.
    public var name: String
    /// Makes a folder request; the parameter is the property of the same name.
    public init(name: String) { self.name = name }
}

/// `POST /v1/notes/rewrap`: re-wraps a note locked with an earlier (or imported) passphrase
/// under the current one. `passphrase` is the note's own, `currentPassphrase` the current
/// one; either may be absent when its secure session is open.
public struct RewrapNoteRequest: Codable, Sendable {
    /// The note's id.
    public var id: String
    /// The passphrase the note is locked with now; nil when its secure session is open.
    public var passphrase: String?
    /// The account's current passphrase; nil when its secure session is open.
    public var currentPassphrase: String?

    /// Makes a re-wrap request; the parameters are the properties of the same names.
    public init(id: String, passphrase: String? = nil, currentPassphrase: String? = nil) {
        self.id = id
        self.passphrase = passphrase
        self.currentPassphrase = currentPassphrase
    }
}

/// `POST /v1/notes/lock-now`: how many secure sessions ended.
public struct LockNowResponse: Codable, Sendable {
    /// How many secure sessions ended.
    public var endedSessions: Int
    /// Makes the answer; the parameter is the property of the same name.
    public init(endedSessions: Int) { self.endedSessions = endedSessions }
}

/// `POST /v1/notes/session`: opens a secure session without reading anything — for the
/// passphrase of note `note`, or the current passphrase when `note` is absent. Give either
/// `passphrase`, or `passcode` to use the key kept in the keychain with user presence
/// (docs/API.md, "Unlock through the keychain").
public struct OpenSessionRequest: Codable, Sendable {
    /// The passphrase to open the session with; not with `passcode`.
    public var passphrase: String?
    /// The keybag passcode, to open the session with the passphrase key kept in the keychain
    /// with user presence; not with `passphrase`. The `tresor` CLI only.
    public var passcode: String?
    /// A note whose passphrase to open the session for; nil: the current passphrase.
    public var note: String?

    /// Makes a session request; the parameters are the properties of the same names.
    public init(passphrase: String? = nil, passcode: String? = nil, note: String? = nil) {
        self.passphrase = passphrase
        self.passcode = passcode
        self.note = note
    }
}

/// `POST /v1/notes/attachments/get`: an attachment's bytes (the response body is raw).
public struct AttachmentRequest: Codable, Sendable {
    /// The note's id.
    public var note: String
    /// The attachment's id, as its `AttachmentInfo` gives it.
    public var attachment: String
    /// The note's passphrase, when it is locked and no secure session holds it.
    public var passphrase: String?

    /// Makes an attachment request; the parameters are the properties of the same names.
    public init(note: String, attachment: String, passphrase: String? = nil) {
        self.note = note
        self.attachment = attachment
        self.passphrase = passphrase
    }
}

/// `POST /v1/notes/attachments/remove`.
public struct RemoveAttachmentRequest: Codable, Sendable {
    /// The note's id.
    public var note: String
    /// The attachment's id.
    public var attachment: String
    /// A locked note's passphrase, when its secure session is not open: removing a locked
    /// attachment destroys content, which needs the note's key.
    public var passphrase: String?

    /// Makes a removal request; the parameters are the properties of the same names.
    public init(note: String, attachment: String, passphrase: String? = nil) {
        self.note = note
        self.attachment = attachment
        self.passphrase = passphrase
    }
}

/// `POST /v1/notes/attachments/backup`: leaves an attachment out of backups, or puts it back.
public struct AttachmentBackupRequest: Codable, Sendable {
    /// The note's id (its owner only).
    public var note: String
    /// The attachment's id.
    public var attachment: String
    /// `true` leaves the attachment out of backups, `false` puts it back in.
    public var excluded: Bool

    /// Makes the request; the parameters are the properties of the same names.
    public init(note: String, attachment: String, excluded: Bool) {
        self.note = note
        self.attachment = attachment
        self.excluded = excluded
    }
}

/// The notes routes' limits and the headers of the raw attachment routes.
public enum NotesWire {
    /// `POST /v1/notes/attachments/add` takes the attachment's bytes as its body, up to the
    /// daemon's limit (`notesAttachmentBytes`), never more than this.
    public static let maximumAttachmentRequestBytes = NoteLimits.largestAttachmentBytes
    /// `POST /v1/notes/import` takes up to this much JSON.
    public static let maximumImportRequestBytes = 64 * 1024 * 1024
    /// `POST /v1/notes/create` and `/v1/notes/edit` take a note at every limit of ``NoteLimits``
    /// even when each of its bytes is escaped in JSON (`\u0001` is six bytes), and an edit the
    /// version it was made from beside it: the note's own limits decide, not its JSON's size.
    public static let maximumNoteRequestBytes =
        6 * 2 * (NoteLimits.bodyBytes + NoteLimits.titleBytes + NoteLimits.folderNameBytes) + 64 * 1024
    /// The note an attachment is added to (request header).
    public static let noteHeader = "Tresor-Note"
    /// The attachment's kind (`AttachmentKind`), request and response header.
    public static let kindHeader = "Tresor-Kind"
    /// The attachment's name, percent-encoded UTF-8, request and response header.
    public static let nameHeader = "Tresor-Name"
    /// `1` to leave the attachment out of backups (request header, optional).
    public static let excludeFromBackupHeader = "Tresor-Exclude-From-Backup"

    /// A header-safe form of `name` (``PercentEncoding``).
    public static func encodeHeader(_ name: String) -> String { PercentEncoding.encode(name) }

    /// The name a percent-encoded header carries; nil when it is not valid percent-encoded UTF-8.
    public static func decodeHeader(_ value: String) -> String? { PercentEncoding.decode(value) }
}
