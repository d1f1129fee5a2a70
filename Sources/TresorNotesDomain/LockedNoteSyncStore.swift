import Foundation

/// A locked note's sealed record as it travels between a device and its web account (docs/SYNC.md,
/// "Notes"): the passphrase generation it is locked under — salt, rounds, verifier and proof
/// hash, never the passphrase — the note key wrapped under it, and the body sealed under the
/// note key. Nothing in it opens without the passphrase.
public struct SyncedLockedRecord: Sendable, Equatable {
    public var passphraseSalt: Data
    public var passphraseIterations: Int
    public var passphraseVerifier: Data
    public var passphraseProofHash: Data?
    public var wrappedKey: Data
    public var iv: Data
    public var tag: Data
    public var ciphertext: Data
    public var bodyFormat: LockedBodyFormat
    public var noteProofHash: Data?

    /// Checks the shapes (``LockedNoteShape``).
    /// - Throws: ``NotesError/invalid(_:)`` naming the field.
    public init(
        passphraseSalt: Data, passphraseIterations: Int, passphraseVerifier: Data, passphraseProofHash: Data?, wrappedKey: Data, iv: Data,
        tag: Data, ciphertext: Data, bodyFormat: LockedBodyFormat, noteProofHash: Data?
    ) throws {
        guard passphraseSalt.count == LockedNoteShape.saltByteCount else { throw NotesError.invalid("the salt must be 16 bytes") }
        guard (1...LockedNoteShape.maximumIterations).contains(passphraseIterations) else {
            throw NotesError.invalid("the iteration count must be 1 to \(LockedNoteShape.maximumIterations)")
        }
        guard passphraseVerifier.count == LockedNoteShape.wrappedKeyByteCount, wrappedKey.count == LockedNoteShape.wrappedKeyByteCount else {
            throw NotesError.invalid("the verifier and the wrapped key must be 24 bytes")
        }
        for hash in [passphraseProofHash, noteProofHash].compactMap({ $0 }) where hash.count != LockedNoteShape.proofByteCount {
            throw NotesError.invalid("a proof hash must be 32 bytes")
        }
        try LockedNoteShape.checkBody(iv: iv, tag: tag, ciphertext: ciphertext)
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

/// Locked notes of a sync account's devices, in the server's store (docs/SYNC.md, "Notes"): a
/// device's locked note is stored as it is, and read back whole by the account's devices.
/// Without a key the server cannot merge a locked body: a change made from an older revision is
/// kept as a conflict copy.
public protocol LockedNoteSyncStore: Sendable {
    /// Locked note `id`'s sealed record, with its passphrase generation.
    /// - Parameter id: the note.
    /// - Returns: the record.
    /// - Throws: ``NotesError/wrongLockState(_:)`` for a note that is not locked.
    func syncedLockedRecord(ofNote id: String) async throws -> SyncedLockedRecord

    /// Stores a device's locked note: a new note (`id` nil), or a new version of note `id` —
    /// kept as its conflict copy when the note changed since `baseRevision`. The passphrase
    /// generation is the account's one of that salt, else recorded (current when the account
    /// has none).
    /// - Parameters:
    ///   - id: the note, or nil for a new one.
    ///   - title: its title.
    ///   - folder: its folder's name.
    ///   - isPinned: its pin.
    ///   - record: the sealed record.
    ///   - baseRevision: the revision the change was made from.
    ///   - account: the owner.
    ///   - quota: the owner's storage quota, checked in the same transaction; nil for none.
    /// - Returns: the note's id, and the conflict copy's when one was made.
    /// - Throws: ``NotesError/invalid(_:)``, ``NotesError/notFound(_:)``, ``NotesError/quotaExceeded(_:)``.
    func storeSyncedLockedNote(
        _ id: String?, title: String, folder: String?, isPinned: Bool, record: SyncedLockedRecord, baseRevision: Int64?, account: AccountID,
        quota: StorageQuota?
    ) async throws -> (id: String, conflictCopyID: String?)

    /// Starts storing a device's attachment of locked note `noteID` as its chunks sealed under
    /// the note key (docs/WEB.md, "Locked notes in the browser": the browser's format), which then
    /// arrive one after another in pieces of any size. The size limit and the quota count its
    /// plaintext's bytes.
    /// - Parameters:
    ///   - noteID: the locked note.
    ///   - kind: a lockable kind.
    ///   - name: its name.
    ///   - id: its id (a device's: no other attachment may have it).
    /// - Returns: the writer of the sealed chunks.
    /// - Throws: ``NotesError/wrongLockState(_:)`` for a note that is not locked,
    ///   ``NotesError/attachmentNotLockable(name:kind:)``, ``NotesError/conflict(_:)`` for an id
    ///   taken, ``NotesError/invalid(_:)``.
    func beginSyncedLockedAttachment(to noteID: String, kind: AttachmentKind, name: String, id: String) async throws -> any AttachmentWriter

    /// The ids of note `id`'s attachments stored as their chunks sealed under the note key (as
    /// the browser or a device sent them); the others are stored as their plaintext, sealed
    /// under the server's key — one sent before the note's lock travelled, until it is sent anew.
    /// - Parameter id: the note.
    /// - Returns: the sealed ones' ids.
    /// - Throws: ``NotesError/notFound(_:)`` for no such note.
    func sealedAttachmentIDs(ofNote id: String) async throws -> Set<String>
}
