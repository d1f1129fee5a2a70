import Foundation
import TresorModel
import TresorWebStore

// The JSON shapes of the web API (docs/WEB.md, "Shapes"). They are built from the store's
// records for one account: `owner` and `canManage` depend on who is asking.

/// A note as listed.
struct WebNoteSummary: Encodable, Sendable {
    var id: String
    var title: String
    /// The folder's name and id; nil for a note without one, and for a note shared with me
    /// (its folder is the owner's).
    var folder: String?
    var folderID: String?
    var created: Date
    var modified: Date
    var isPinned: Bool
    var attachmentCount: Int
    var lock: WebLockInfo?
    var isShared: Bool
    /// The owner's login name for a note shared with me; nil for my own.
    var owner: String?
    /// Whether I own it: delete, lock, share and manage participants.
    var canManage: Bool
    /// Counted up on every change: what a save names as `base.revision`.
    var revision: Int64
    /// When it was moved to Recently Deleted (nil: it is not there).
    var deleted: Date?
    /// In lists: the first line of text after the title, without markup (none for a locked note).
    var preview: String?

    init(_ summary: NoteSummary, for account: WebAccount, folders: [Folder]) {
        let mine = summary.sharing.map { $0.owner == account.name } ?? true
        id = summary.id
        title = summary.title
        folder = mine ? summary.folder : nil
        folderID = mine ? summary.folder.flatMap { name in folders.first { $0.name == name }?.id } : nil
        created = summary.created
        modified = summary.modified
        isPinned = summary.isPinned
        attachmentCount = summary.attachmentCount
        lock = summary.lock.map(WebLockInfo.init)
        isShared = summary.sharing != nil
        owner = mine ? nil : summary.sharing?.owner
        canManage = mine
        revision = summary.revision
        deleted = summary.deleted
    }
}

/// `PATCH /api/notes/{id}` and `PUT …/locked-body`: the note as it is now (a NoteSummary),
/// plus what became of the save — `saved`, `merged` (with `mergedBody`, for an unlocked
/// note) or `conflictCopy` (with the new note that holds the edit).
struct WebSaveAnswer: Encodable, Sendable {
    var summary: WebNoteSummary
    var outcome: NoteSaveOutcome.Kind
    var mergedBody: String?
    var conflictCopy: WebNoteSummary?

    init(_ outcome: NoteSaveOutcome, for account: WebAccount, folders: [Folder]) {
        summary = WebNoteSummary(outcome.note, for: account, folders: folders)
        self.outcome = outcome.kind
        mergedBody = outcome.mergedBody
        conflictCopy = outcome.conflictCopy.map { WebNoteSummary($0, for: account, folders: folders) }
    }

    enum CodingKeys: String, CodingKey { case outcome, mergedBody, conflictCopy }

    func encode(to encoder: Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(outcome, forKey: .outcome)
        try container.encodeIfPresent(mergedBody, forKey: .mergedBody)
        try container.encodeIfPresent(conflictCopy, forKey: .conflictCopy)
    }
}

/// How a locked note is locked: which passphrase record opens it.
struct WebLockInfo: Encodable, Sendable {
    var passphraseID: Int64?
    /// `tresor` or `appleNotes`.
    var source: String
    var generation: Int?
    var isCurrent: Bool
    /// Only for a note of an earlier passphrase.
    var hint: String?
    var setOn: Date

    init(_ lock: LockInfo) {
        passphraseID = lock.passphraseID
        source = lock.source == .appleNotes ? "appleNotes" : "tresor"
        generation = lock.generation
        isCurrent = lock.isCurrent
        hint = lock.isCurrent ? nil : lock.hint
        setOn = lock.setOn
    }
}

/// A locked note's crypto fields, for the browser to open (`bodyFormat` `text` or `appleNotes`).
struct WebLockedRecord: Encodable, Sendable {
    var passphraseID: Int64
    var salt: Data
    var iterations: Int
    /// Only while the note's passphrase has no recorded proof (see `POST …/wrapped-key`).
    var wrappedKey: Data?
    /// Whether the server checks proofs of this note's passphrase (else the browser checks
    /// the passphrase against `wrappedKey` and records its proof).
    var hasProof: Bool
    var iv: Data
    var tag: Data
    var ciphertext: Data
    var bodyFormat: String

    init(_ record: LockedNoteRecord) {
        passphraseID = record.passphraseID
        salt = record.salt
        iterations = record.iterations
        wrappedKey = record.wrappedKey
        hasProof = record.hasProof
        iv = record.iv
        tag = record.tag
        ciphertext = record.ciphertext
        bodyFormat = record.bodyFormat == "apple-notes" || record.bodyFormat == "appleNotes" ? "appleNotes" : "text"
    }
}

/// An attachment as listed (kinds as the store names them: `image`, `map-location`, …).
struct WebAttachment: Encodable, Sendable {
    var id: String
    var kind: String
    var name: String
    var byteCount: Int
    var created: Date

    init(_ info: AttachmentInfo) {
        id = info.id
        kind = info.kind.rawValue
        name = info.name
        byteCount = info.byteCount
        created = info.created
    }
}

/// `GET /api/notes/{id}`.
struct WebNoteDetail: Encodable, Sendable {
    var summary: WebNoteSummary
    /// An unlocked note's text; absent for a locked note (its `locked` record opens in the browser).
    var body: String?
    var attachments: [WebAttachment]
    var locked: WebLockedRecord?
    var share: ShareInfo?
}

/// `GET /api/notes`.
struct WebNotesList: Encodable, Sendable {
    var notes: [WebNoteSummary]
}
