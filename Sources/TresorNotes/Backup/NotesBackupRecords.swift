import Foundation

// The notes of a home as a backup carries them (docs/FORMAT.md, "Backups"): the keybag layer
// opened — a backup is read in another home, under other keys — and locked notes exactly as
// they are sealed under their note keys, which no backup or restore ever opens.

/// A notes account: the local one, a web account (with its salted password hash), or an
/// application team's.
public struct BackedUpAccount: Codable, Equatable, Sendable {
    public var id: String
    public var name: String
    /// A web account's login name.
    public var loginName: String?
    public var passwordSalt: Data?
    public var passwordIterations: Int?
    public var passwordHash: Data?
    /// The account's current passphrase (a ``BackedUpPassphrase/id`` of this backup).
    public var currentPassphrase: Int64?
    /// Whether the passphrase key is kept in the keychain (an item of its own, device-bound).
    public var keychainUnlock: Bool
    public var created: Date
}

/// A passphrase generation, or a passphrase of notes imported from Apple Notes: what checks a
/// passphrase and opens the notes locked with it — never the passphrase or its key.
public struct BackedUpPassphrase: Codable, Equatable, Sendable {
    /// This backup's id for it (notes refer to it); a restore gives it an id of the home's.
    public var id: Int64
    public var account: String
    /// `tresor` or `apple-notes`.
    public var source: String
    public var generation: Int?
    public var salt: Data
    public var iterations: Int
    public var verifier: Data?
    public var proofHash: Data?
    public var hint: String?
    public var created: Date
}

/// A folder.
public struct BackedUpFolder: Codable, Equatable, Sendable {
    public var id: String
    public var account: String
    public var name: String
    public var created: Date
}

/// A note. An unlocked note carries its body; a locked one its Apple-shaped fields and the
/// ciphertext, as sealed under its note key.
public struct BackedUpNote: Codable, Equatable, Sendable {
    public var id: String
    public var account: String
    public var folder: String?
    public var created: Date
    public var modified: Date
    public var pinned: Bool
    public var title: String
    /// An unlocked note's body.
    public var body: String?
    /// A shared note's record key (its title and body are sealed under it).
    public var recordKey: Data?
    public var participants: [BackedUpParticipant]
    public var locked: LockedFields?
    /// `text` or `apple-notes` (a locked body's plaintext encoding).
    public var bodyFormat: String
    /// What a second import of the same Apple note recognises it by, kept only by a restore
    /// into the home it was made in (the tag is keyed by that home's keys).
    public var importTag: Data?
    public var noteProofHash: Data?
    /// The note's revision (docs/FORMAT.md, "Revisions and merges"), so a page that edited it
    /// before the restore still sees its base; absent in backups made before revisions.
    public var revision: Int64?
    /// When it went to Recently Deleted, if it is there: it is restored there, with the days it
    /// had left.
    public var deleted: Date?

    /// A locked note's fields (docs/FORMAT.md, "Notes"): all under the note key.
    public struct LockedFields: Codable, Equatable, Sendable {
        /// The passphrase it is locked with (a ``BackedUpPassphrase/id`` of this backup).
        public var passphrase: Int64
        public var salt: Data
        public var iterations: Int
        public var wrappedKey: Data
        public var iv: Data
        public var tag: Data
        public var ciphertext: Data
    }
}

/// An account a shared note is shared with, and since when.
public struct BackedUpParticipant: Codable, Equatable, Sendable {
    public var account: String
    public var added: Date
}

/// An attachment. Its bytes follow it in the backup: an unlocked note's as plaintext pieces, a
/// locked note's as the chunks sealed under the note key, one per piece.
public struct BackedUpAttachment: Codable, Equatable, Sendable {
    public var id: String
    public var note: String
    public var kind: AttachmentKind
    public var name: String
    public var byteCount: Int
    public var created: Date
    public var isLocked: Bool
    public var excludedFromBackup: Bool

    public init(
        id: String, note: String, kind: AttachmentKind, name: String, byteCount: Int, created: Date, isLocked: Bool, excludedFromBackup: Bool
    ) {
        self.id = id
        self.note = note
        self.kind = kind
        self.name = name
        self.byteCount = byteCount
        self.created = created
        self.isLocked = isLocked
        self.excludedFromBackup = excludedFromBackup
    }
}

/// What reading the notes for a backup hands over, in the order a backup writes it.
public enum NotesReading: Sendable {
    case account(BackedUpAccount)
    case passphrase(BackedUpPassphrase)
    case folder(BackedUpFolder)
    case note(BackedUpNote)
    /// An attachment; its pieces follow, then ``attachmentEnd``.
    case attachment(BackedUpAttachment)
    case attachmentPiece(Data)
    case attachmentEnd
    /// The attachment's file failed after some pieces were handed over: they are worth nothing.
    case attachmentAbandoned(reason: String)
    /// An attachment left out of backups: counted, its bytes not read.
    case excludedAttachment(BackedUpAttachment)
    /// Something that could not be read (a damaged row or file): reported, not fatal.
    case unreadable(what: String, id: String, reason: String)
}
