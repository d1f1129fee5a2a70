import Foundation

/// A note's attachments — ``WebStore``'s attachments area, streamed a piece at a time through
/// ``AttachmentWriter`` and ``AttachmentReader``.
public protocol AttachmentStore: Sendable {
    /// A note's attachments as listed (a locked note's too).
    /// - Parameter id: the note.
    /// - Returns: their descriptions.
    /// - Throws: ``NotesError/notFound(_:)``.
    func listedAttachments(ofNote id: String) async throws -> [AttachmentInfo]

    /// Starts adding an attachment to an unlocked note, whose bytes then arrive piece by piece.
    /// - Parameters:
    ///   - noteID: the note.
    ///   - kind: its kind.
    ///   - name: its name (``NoteRules/validateAttachmentName(_:)``).
    ///   - id: the attachment's id — one a device gave it (docs/SYNC.md, "Attachments"), which no
    ///     other attachment may have — or nil for a new one. An unfinished upload of the same id
    ///     to the same note is dropped: this one starts it again from its first byte.
    ///   - created: when a device added it, which dates it and its note — never later than now,
    ///     nor the note earlier than it was; nil: now.
    ///   - excludedFromBackup: whether the device that sent it keeps it out of backups: set
    ///     with the attachment, in the one revision of the note its upload makes.
    /// - Returns: the writer to hand the bytes to.
    /// - Throws: ``NotesError/invalid(_:)`` (a bad name, a note in Recently Deleted),
    ///   ``NotesError/wrongLockState(_:)``, ``NotesError/conflict(_:)`` for an id already taken.
    func beginAttachment(to noteID: String, kind: AttachmentKind, name: String, id: String?, created: Date?, excludedFromBackup: Bool)
        async throws -> any AttachmentWriter

    /// An attachment's bytes, a piece at a time; a locked note's as its sealed chunks, one after
    /// another (what the browser opens).
    /// - Parameters:
    ///   - id: the attachment.
    ///   - noteID: its note.
    /// - Returns: the reader.
    /// - Throws: ``NotesError/notFound(_:)``.
    func readAttachment(_ id: String, of noteID: String) async throws -> any AttachmentReader

    /// Removes an attachment; of a locked note, only as `authority` allows.
    /// - Parameters:
    ///   - id: the attachment.
    ///   - noteID: its note.
    ///   - authority: who removes it: the browser proves a locked note's key, in the
    ///     transaction of the removal (a wrong proof is counted as a wrong passphrase).
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/invalid(_:)`` for a note in Recently
    ///   Deleted or a locked note's attachment without a note proof,
    ///   ``NotesError/wrongPassphrase(_:retryAfterSeconds:hint:)`` for a wrong proof,
    ///   ``NotesError/passphraseRequired(_:)`` for a note whose proof is not recorded yet.
    func removeAttachment(_ id: String, of noteID: String, by authority: AttachmentRemovalAuthority) async throws

    /// Leaves an attachment out of backups, or puts it back in (docs/FORMAT.md, "Backups"). The
    /// server's store makes a change a revision of its note, so that the account's devices read
    /// it (docs/SYNC.md, "Attachments").
    /// - Parameters:
    ///   - id: the attachment.
    ///   - noteID: its note.
    ///   - excluded: whether backups leave it out.
    /// - Returns: the attachment as it now is.
    /// - Throws: ``NotesError/notFound(_:)``.
    func setExcludedFromBackup(_ id: String, of noteID: String, excluded: Bool) async throws -> AttachmentInfo
}

/// Who removes an attachment, which decides what a locked note's attachment needs.
public enum AttachmentRemovalAuthority: Sendable {
    /// The web client: a locked note's attachment goes only with a proof of the note key
    /// (docs/WEB.md, "Proofs") — `noteProof`, and `passphraseProof` for a note whose proof is
    /// not recorded yet — as every other change of a locked note.
    case browser(noteProof: Data?, passphraseProof: PassphraseProof?)
    /// A caller that holds the note's key or needs none: the daemon after checking the passphrase
    /// or the secure session itself.
    case keyHolder
    /// A sync device of the account, which holds the account's locked notes as they are. Its
    /// note's own change, sent before, carries when the attachment was removed there
    /// (docs/SYNC.md, "Attachments"): the removal leaves that date.
    case syncDevice

    /// Whether the removal dates its note now; each one makes a revision of it.
    public var datesTheNote: Bool {
        if case .syncDevice = self { return false }
        return true
    }
}

extension AttachmentStore {
    /// Starts adding an attachment with a new id to an unlocked note.
    /// - Parameters:
    ///   - noteID: the note.
    ///   - kind: its kind.
    ///   - name: its name.
    /// - Returns: the writer to hand the bytes to.
    /// - Throws: as ``beginAttachment(to:kind:name:id:created:excludedFromBackup:)``.
    public func beginAttachment(to noteID: String, kind: AttachmentKind, name: String) async throws -> any AttachmentWriter {
        try await beginAttachment(to: noteID, kind: kind, name: name, id: nil, created: nil, excludedFromBackup: false)
    }
}

/// The bytes of an attachment being added, handed over as they arrive: at most a chunk is
/// held at a time. Nothing is visible until ``finish(quota:)``; ``abandon()`` leaves nothing.
public protocol AttachmentWriter: Sendable {
    /// Adds bytes.
    /// - Parameter data: the next bytes.
    /// - Throws: ``NotesError/invalid(_:)`` past the size limit, a storage error.
    func append(_ data: Data) async throws

    /// Adds the attachment to its note.
    /// - Parameter quota: the owner's quota.
    /// - Returns: the attachment.
    /// - Throws: ``NotesError/quotaExceeded(_:)``, ``NotesError/wrongLockState(_:)``.
    func finish(quota: StorageQuota?) async throws -> AttachmentInfo

    /// Drops what was written.
    func abandon() async
}

/// An attachment's bytes, read a piece at a time.
public protocol AttachmentReader: Sendable {
    /// The bytes the reader gives in all (a locked note's: its sealed chunks').
    var byteCount: Int { get }

    /// The next piece, or nil at the end.
    /// - Returns: bytes, or nil.
    /// - Throws: ``NotesError/damaged(_:)``, a storage error.
    func next() async throws -> Data?
}
