import Foundation

// Notes sync (docs/SYNC.md, "Notes"): a device's local notes and its web account's notes are
// one set. Unlike keychain records, notes travel readable by the server (its server mode reads
// them at rest under its key), so these are plain values the server applies with the notes
// domain's own rules: revisions, three-way merge, conflict copy.

/// A note of the account as the server holds it now.
public struct SyncNote: Codable, Equatable, Sendable {
    /// The server's id of the note.
    public var id: String
    /// Its revision (counted up by every change).
    public var revision: Int64
    public var title: String
    /// The body; nil for a locked note (its sealed body is in `locked`).
    public var body: String?
    /// The folder's name; nil for none.
    public var folder: String?
    public var isPinned: Bool
    public var created: Date
    public var modified: Date
    /// Since when it is in Recently Deleted; nil for a note that is not there.
    public var deleted: Date?
    public var isLocked: Bool
    /// A locked note's sealed record.
    public var locked: SyncLockedNote?
    /// Its attachments as the server holds them now (docs/SYNC.md, "Attachments"); nil from a
    /// server that does not list them.
    public var attachments: [SyncAttachment]?
    /// Who shares it, for a note shared with or by the account (docs/SYNC.md, "Shared notes");
    /// nil for a note shared with nobody, and from a server that does not tell.
    public var sharing: SyncNoteSharing?

    public init(
        id: String, revision: Int64, title: String, body: String?, folder: String?, isPinned: Bool, created: Date, modified: Date,
        deleted: Date?, isLocked: Bool, locked: SyncLockedNote? = nil, attachments: [SyncAttachment]? = nil, sharing: SyncNoteSharing? = nil
    ) {
        self.sharing = sharing
        self.locked = locked
        self.attachments = attachments
        self.id = id
        self.revision = revision
        self.title = title
        self.body = body
        self.folder = folder
        self.isPinned = isPinned
        self.created = created
        self.modified = modified
        self.deleted = deleted
        self.isLocked = isLocked
    }
}

/// Who shares a note: its owner's login name, its participants' (the web client shares and
/// unshares), and whether the account the device syncs owns it. A note shared with the account
/// by another comes with no folder and unpinned: its folder and pin are its owner's.
public struct SyncNoteSharing: Codable, Equatable, Sendable {
    public var owner: String
    public var participants: [String]
    /// The account owns the note (shared by it); false: shared with it.
    public var isOwner: Bool

    public init(owner: String, participants: [String], isOwner: Bool) {
        self.owner = owner
        self.participants = participants
        self.isOwner = isOwner
    }
}

/// One change of the account's notes after a cursor: the note as it is now, or nil when it was
/// deleted for good.
public struct SyncNoteEntry: Codable, Equatable, Sendable {
    /// The account's notes counter of the change (handed out in commit order).
    public var counter: UInt64
    public var noteID: String
    /// The note now; nil: deleted for good.
    public var note: SyncNote?

    public init(counter: UInt64, noteID: String, note: SyncNote?) {
        self.counter = counter
        self.noteID = noteID
        self.note = note
    }
}

/// `GET /v1/sync/notes?after=CURSOR&limit=N`: the account's notes changed after a cursor, in
/// counter order, each once (as it is now).
public struct SyncNotesPage: Codable, Equatable, Sendable {
    public var entries: [SyncNoteEntry]
    /// Where the next page starts (`after=`).
    public var cursor: UInt64
    /// Whether more changes follow the cursor now.
    public var more: Bool

    public init(entries: [SyncNoteEntry], cursor: UInt64, more: Bool) {
        self.entries = entries
        self.cursor = cursor
        self.more = more
    }
}

/// The version of a note a device's change was made from: the server's revision and what the
/// note held then (so that the server can merge a late edit three-way).
public struct SyncNoteBase: Codable, Equatable, Sendable {
    public var revision: Int64
    public var title: String
    public var body: String
    public var folder: String?
    public var isPinned: Bool
    /// When that version was locked: the digest the device took of its locked record (the
    /// notes domain's `SyncedLockedRecord.textDigest`). A locked change whose record has the same
    /// one changed no locked text — a pin, a move, a title, an attachment — and the server keeps
    /// a newer text rather than making a conflict copy. Nil from an older device.
    public var lockedDigest: Data?

    public init(revision: Int64, title: String, body: String, folder: String?, isPinned: Bool, lockedDigest: Data? = nil) {
        self.lockedDigest = lockedDigest
        self.revision = revision
        self.title = title
        self.body = body
        self.folder = folder
        self.isPinned = isPinned
    }
}

/// `POST /v1/sync/notes`: one change of a device's note, as the note is now on the device.
public struct SyncNoteChange: Codable, Equatable, Sendable {
    /// Where the note is on the device.
    public enum State: String, Codable, Sendable {
        case present
        case recentlyDeleted
        case deletedForGood
    }

    /// The device's own id of the note: a retried creation finds the note it made.
    public var localID: String
    /// The server's id; nil for a note the server has not had yet.
    public var noteID: String?
    /// What the change was made from; nil for a new note.
    public var base: SyncNoteBase?
    public var title: String
    public var body: String
    public var folder: String?
    public var isPinned: Bool
    public var state: State
    /// For a locked note: its sealed record (`body` is empty).
    public var locked: SyncLockedNote?
    /// When the note was made on the device, and when it was last edited there: a new note keeps
    /// both, an edit its time (the server never dates one later than its own clock, nor moves a
    /// note's time back). Absent from older devices: the server's time then.
    public var created: Date?
    public var modified: Date?
    /// Set by a device for an unlocked change made from a version that was not locked: should
    /// the note have been locked since (on another device), the server stores nothing of it and
    /// answers ``SyncNoteChangeResult/Outcome/lockedSince`` — its text never stays on the server
    /// unlocked. Absent from older devices: such an edit is then kept as an unlocked conflict copy.
    public var refuseIfLockedSince: Bool?

    public init(
        localID: String, noteID: String?, base: SyncNoteBase?, title: String, body: String, folder: String?, isPinned: Bool, state: State,
        locked: SyncLockedNote? = nil, created: Date? = nil, modified: Date? = nil
    ) {
        self.locked = locked
        self.created = created
        self.modified = modified
        self.localID = localID
        self.noteID = noteID
        self.base = base
        self.title = title
        self.body = body
        self.folder = folder
        self.isPinned = isPinned
        self.state = state
    }
}

/// What the server made of a device's change.
public struct SyncNoteChangeResult: Codable, Equatable, Sendable {
    public enum Outcome: String, Codable, Sendable {
        /// Created on the server (`note` holds its server id).
        case created
        /// Saved as it was: nothing changed meanwhile.
        case saved
        /// Merged with a change made meanwhile: `note` holds both.
        case merged
        /// The same lines changed meanwhile: the note keeps the other version and this change
        /// is a new note, `conflictCopyID`.
        case conflictCopy
        /// A deletion refused because the note changed since the version it was made from: the
        /// edit survives, `note` is the note as it is.
        case keptAfterEdit
        /// Nothing stored: an unlocked change sent with ``SyncNoteChange/refuseIfLockedSince`` of
        /// a note locked since the version it was made from; `note` is the note as it is. The
        /// device keeps the edit until it is locked there too, when it goes as a locked change.
        case lockedSince
        /// Deleted for good.
        case deleted
    }

    public var outcome: Outcome
    /// The note as it is now on the server; nil when deleted.
    public var note: SyncNote?
    public var conflictCopyID: String?

    public init(outcome: Outcome, note: SyncNote?, conflictCopyID: String? = nil) {
        self.outcome = outcome
        self.note = note
        self.conflictCopyID = conflictCopyID
    }
}

/// A locked note's sealed record as it travels (docs/SYNC.md, "Notes"): the passphrase generation
/// it is locked under (source, salt, rounds, verifier, proof hash — never the passphrase), the
/// note key wrapped under it, and the body sealed under the note key, as they are.
public struct SyncLockedNote: Codable, Equatable, Sendable {
    /// `apple-notes` for a passphrase imported from Apple Notes; absent (or `tresor`) for a Tresor
    /// generation — an older server or device knows no other. A device sends an Apple one only
    /// to a server whose ``SyncAccountState/appleNotesPassphrases`` says it keeps them.
    public var passphraseSource: String?
    public var passphraseSalt: Data
    public var passphraseIterations: Int
    /// Absent only for an Apple Notes passphrase (which an older server, needing it, refuses).
    public var passphraseVerifier: Data?
    public var passphraseProofHash: Data?
    public var wrappedKey: Data
    public var iv: Data
    public var tag: Data
    public var ciphertext: Data
    /// `text` or `appleNotes`.
    public var bodyFormat: String
    public var noteProofHash: Data?
    /// The hint of the passphrase generation it is locked under, when it has one; absent from
    /// an older server or device. It fills a generation that has none where it arrives
    /// (docs/SYNC.md, "Notes": the hints of earlier generations).
    public var passphraseHint: String?

    public init(
        passphraseSource: String? = nil, passphraseSalt: Data, passphraseIterations: Int, passphraseVerifier: Data?, passphraseProofHash: Data?,
        wrappedKey: Data, iv: Data, tag: Data, ciphertext: Data, bodyFormat: String, noteProofHash: Data?, passphraseHint: String? = nil
    ) {
        self.passphraseSource = passphraseSource
        self.passphraseHint = passphraseHint
        self.passphraseSalt = passphraseSalt
        self.passphraseIterations = passphraseIterations
        self.passphraseVerifier = passphraseVerifier
        self.passphraseProofHash = passphraseProofHash
        self.wrappedKey = wrappedKey
        self.iv = iv
        self.tag = tag
        self.ciphertext = ciphertext
        self.bodyFormat = bodyFormat
        self.noteProofHash = noteProofHash
    }
}
