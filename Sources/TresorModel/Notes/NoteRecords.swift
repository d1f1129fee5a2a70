import FoundationEssentials

/// Names a notes account: the local "On My Computer" account, or (later) a web account.
public struct AccountID: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The local account, reached with the keybag passcode as its account password.
    public static let local = AccountID(rawValue: "local")

    /// The notes account of team `team`'s applications: reached only by applications registered
    /// with the group ``notesGroup(ofTeam:)``; no web sign-in, no sharing by name.
    /// - Parameter team: The team id.
    /// - Returns: The account's id, `team:TEAM`.
    public static func applications(ofTeam team: String) -> AccountID { AccountID(rawValue: "team:" + team) }

    /// The access group that entitles team `team`'s applications to their notes account.
    /// - Parameter team: The team id.
    /// - Returns: `TEAM.notes`.
    public static func notesGroup(ofTeam team: String) -> String { team + ".notes" }
    public var description: String { rawValue }
}

/// A notes account and the state of its locked-notes passphrase.
public struct NotesAccount: Codable, Equatable, Sendable {
    public var id: AccountID
    public var name: String
    public var passphrase: PassphraseStatus

    public init(id: AccountID, name: String, passphrase: PassphraseStatus) {
        self.id = id
        self.name = name
        self.passphrase = passphrase
    }
}

/// Where an account's passphrase stands. The hint itself is not here: it is shown after
/// three wrong entries, and for notes of an earlier generation.
public struct PassphraseStatus: Codable, Equatable, Sendable {
    /// Whether a passphrase for locked notes has been set.
    public var isSet: Bool
    /// The current generation (1 for the first passphrase, +1 on each reset).
    public var generation: Int?
    /// When the current passphrase was set or last changed.
    public var setOn: Date?
    public var hasHint: Bool
    /// Consecutive wrong entries, and the wait before the next one is accepted.
    public var failedAttempts: Int
    public var retryAfterSeconds: Int?
    /// Whether the passphrase-derived key is kept in the keychain (docs/API.md, "Unlock through
    /// the keychain").
    public var keychainUnlock: Bool
    /// Whether a secure session for the current passphrase is open.
    public var sessionOpen: Bool

    public init(
        isSet: Bool, generation: Int? = nil, setOn: Date? = nil, hasHint: Bool, failedAttempts: Int,
        retryAfterSeconds: Int? = nil, keychainUnlock: Bool, sessionOpen: Bool
    ) {
        self.isSet = isSet
        self.generation = generation
        self.setOn = setOn
        self.hasHint = hasHint
        self.failedAttempts = failedAttempts
        self.retryAfterSeconds = retryAfterSeconds
        self.keychainUnlock = keychainUnlock
        self.sessionOpen = sessionOpen
    }
}

/// A folder of an account.
public struct Folder: Codable, Equatable, Sendable {
    public var id: String
    public var name: String
    public var noteCount: Int

    public init(id: String, name: String, noteCount: Int) {
        self.id = id
        self.name = name
        self.noteCount = noteCount
    }
}

/// A note as listed: everything but its body and attachments' bytes.
public struct NoteSummary: Codable, Equatable, Sendable {
    /// How a conflict copy's title ends, with whose version it is: "Groceries (conflict copy
    /// from bob)".
    public static let conflictCopyWords = "conflict copy"

    public var id: String
    public var title: String
    public var folder: String?
    public var created: Date
    public var modified: Date
    public var isPinned: Bool
    public var attachmentCount: Int
    /// Present for a locked note.
    public var lock: LockInfo?
    /// Present for a shared note (docs/FORMAT.md, "Web accounts and shared notes"): its owner
    /// and participants.
    public var sharing: ShareInfo?
    /// Counted up on every change: a save names the revision it was made from (``NoteBase``).
    public var revision: Int64
    /// When the note was moved to Recently Deleted; nil for a note that is not there.
    public var deleted: Date?

    public init(
        id: String, title: String, folder: String? = nil, created: Date, modified: Date, isPinned: Bool,
        attachmentCount: Int, lock: LockInfo? = nil, sharing: ShareInfo? = nil, revision: Int64 = 1, deleted: Date? = nil
    ) {
        self.id = id
        self.title = title
        self.folder = folder
        self.created = created
        self.modified = modified
        self.isPinned = isPinned
        self.attachmentCount = attachmentCount
        self.lock = lock
        self.sharing = sharing
        self.revision = revision
        self.deleted = deleted
    }

    public var isLocked: Bool { lock != nil }
}

/// How a locked note is locked, so the user can be told which passphrase opens it.
public struct LockInfo: Codable, Equatable, Sendable {
    /// Where the passphrase came from.
    public enum Source: String, Codable, Sendable {
        /// Set in Tresor (`tresor note passphrase set`), in generation `generation`.
        case tresor
        /// Imported still locked from Apple Notes: it opens with the Apple passphrase.
        case appleNotes = "apple-notes"
    }

    public var source: Source
    /// The passphrase record the note key is wrapped under (what the web client asks for).
    public var passphraseID: Int64?
    /// The passphrase generation, for passphrases set in Tresor.
    public var generation: Int?
    /// Whether this is the account's current passphrase. When false the note was locked
    /// with an earlier (or an imported) passphrase and, once opened, can be re-wrapped.
    public var isCurrent: Bool
    /// The hint of an earlier passphrase (the current one's hint appears after 3 wrong entries).
    public var hint: String?
    /// When that passphrase was set.
    public var setOn: Date
    /// Whether a secure session holds this passphrase now.
    public var isOpen: Bool

    public init(
        source: Source, passphraseID: Int64? = nil, generation: Int? = nil, isCurrent: Bool, hint: String? = nil,
        setOn: Date, isOpen: Bool
    ) {
        self.source = source
        self.passphraseID = passphraseID
        self.generation = generation
        self.isCurrent = isCurrent
        self.hint = hint
        self.setOn = setOn
        self.isOpen = isOpen
    }

    /// The sentence shown when the passphrase is asked for.
    public var explanation: String {
        if isCurrent { return "enter the notes passphrase" }
        let date = setOn.formatted(.iso8601.year().month().day())
        let origin = source == .appleNotes ? "a passphrase imported from Apple Notes" : "an earlier passphrase"
        return "this note was locked with \(origin) (hint: \(hint ?? "none"), set on \(date))"
    }
}

/// An attachment as listed.
public struct AttachmentInfo: Codable, Equatable, Sendable {
    public var id: String
    public var kind: AttachmentKind
    public var name: String
    public var byteCount: Int
    public var created: Date
    /// Left out of backups (`tresor note attach --exclude-from-backup`); absent when not.
    public var excludedFromBackup: Bool?

    public init(id: String, kind: AttachmentKind, name: String, byteCount: Int, created: Date, excludedFromBackup: Bool = false) {
        self.id = id
        self.kind = kind
        self.name = name
        self.byteCount = byteCount
        self.created = created
        self.excludedFromBackup = excludedFromBackup ? true : nil
    }
}

/// A note with its content: for a locked note, only while a secure session is open.
public struct OpenedNote: Codable, Equatable, Sendable {
    public var summary: NoteSummary
    public var body: String
    public var attachments: [AttachmentInfo]

    public init(summary: NoteSummary, body: String, attachments: [AttachmentInfo]) {
        self.summary = summary
        self.body = body
        self.attachments = attachments
    }
}

/// What a new note holds.
public struct NoteDraft: Sendable {
    public var title: String
    public var body: String
    /// The folder's name; created when missing. Nil: no folder ("Notes").
    public var folder: String?
    public var isPinned: Bool

    public init(title: String, body: String, folder: String? = nil, isPinned: Bool = false) {
        self.title = title
        self.body = body
        self.folder = folder
        self.isPinned = isPinned
    }
}

/// Changes to a note; nil fields stay as they are.
public struct NoteChanges: Sendable {
    public var title: String?
    public var body: String?
    public var isPinned: Bool?
    /// `.some(nil)` moves the note out of any folder.
    public var folder: String??
    /// The version the new title and body were made from. When the note has changed since,
    /// the edit is merged into it, or kept as a conflict copy (docs/FORMAT.md, "Revisions and
    /// merges"). Nil: the title and body replace what is stored whatever it is.
    public var base: NoteBase?

    public init(title: String? = nil, body: String? = nil, isPinned: Bool? = nil, folder: String?? = nil, base: NoteBase? = nil) {
        self.title = title
        self.body = body
        self.isPinned = isPinned
        self.folder = folder
        self.base = base
    }
}

/// The limits on what a note holds. Larger input is refused with a clear error.
public enum NoteLimits {
    public static let titleBytes = 4 * 1024
    public static let bodyBytes = 1024 * 1024
    public static let folderNameBytes = 256
    public static let attachmentNameBytes = 255
    /// The largest attachment a home or a server takes unless its `config.json` says otherwise
    /// (`notesAttachmentBytes`): 4 GiB, so a 2 GiB film syncs.
    public static let attachmentBytes = 4 << 30
    /// The most `notesAttachmentBytes` may be set to, and what a store's own upload checks as a
    /// last line (its callers check the configured limit first).
    public static let largestAttachmentBytes = 64 << 30
    public static let hintBytes = 256
    /// The largest ciphertext of a note imported still locked by Apple Notes: it is the gzipped
    /// protobuf of the body, formatting included, so it may be larger than the text.
    public static let appleLockedCiphertextBytes = 8 * bodyBytes
}

/// Who a shared note belongs to and who it is shared with (stored in the clear: docs/FORMAT.md,
/// "Web accounts and shared notes").
public struct ShareInfo: Codable, Equatable, Sendable {
    public var owner: String
    public var participants: [String]

    public init(owner: String, participants: [String]) {
        self.owner = owner
        self.participants = participants
    }
}

/// The texts of the two locked-note failures a client answers by asking the user, spelled once
/// for the daemon (`NotesError`) and its clients (`NotesClientError`).
public enum LockedNoteMessage {
    /// The current passphrase is asked for locking a note too, so its text does not say the note
    /// is locked; an earlier one is asked only for a note locked with it.
    public static func passphraseRequired(_ lock: LockInfo) -> String {
        lock.isCurrent ? "this needs the notes passphrase (no secure session is open): enter it" : "the note is locked: \(lock.explanation)"
    }

    public static func wrongPassphrase(failedAttempts: Int, hint: String?, retryAfterSeconds: Int?) -> String {
        var text = "wrong passphrase (\(failedAttempts) consecutive failure\(failedAttempts == 1 ? "" : "s"))"
        if let hint { text += "; hint: \(hint)" }
        if let retryAfterSeconds { text += "; try again in \(retryAfterSeconds) s" }
        return text
    }
}
