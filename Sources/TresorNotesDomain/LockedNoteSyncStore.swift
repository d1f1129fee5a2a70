import Foundation
import TresorCrypto

/// A locked note's sealed record as it travels between a device and its web account (docs/SYNC.md,
/// "Notes"): the passphrase generation it is locked under — its source, salt, rounds, verifier and
/// proof hash, never the passphrase — the note key wrapped under it, and the body sealed under the
/// note key. Nothing in it opens without the passphrase.
public struct SyncedLockedRecord: Sendable, Equatable {
    /// Where the passphrase came from: a Tresor generation, or a passphrase imported from Apple
    /// Notes (never an account's current one; it has no verifier).
    public var passphraseSource: LockInfo.Source
    public var passphraseSalt: Data
    public var passphraseIterations: Int
    /// Nil only for an Apple Notes passphrase: its notes' own wrapped keys check it.
    public var passphraseVerifier: Data?
    public var passphraseProofHash: Data?
    public var wrappedKey: Data
    public var iv: Data
    public var tag: Data
    public var ciphertext: Data
    public var bodyFormat: LockedBodyFormat
    public var noteProofHash: Data?
    /// The hint of the passphrase generation, when it has one: where it arrives it fills that
    /// generation when it has none and is not the account's current one (whose hint travels as
    /// ``SyncedPassphrase``, and may have been removed on purpose).
    public var passphraseHint: String?

    /// SHA-256 of what an edit of the locked text, or a new wrapping of its key, changes: the
    /// sealed body, its nonce and tag, the wrapped key and the passphrase's salt, each after its
    /// length. A device's change whose record has its base's digest changed no locked text
    /// (docs/SYNC.md, "Notes").
    public var textDigest: Data {
        var bytes = Data()
        for part in [ciphertext, iv, tag, wrappedKey, passphraseSalt] {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(part)
        }
        return Digest.sha256(bytes)
    }

    /// Checks the shapes (``LockedNoteShape``), the hint's length, and that only an Apple Notes
    /// passphrase comes without a verifier.
    /// - Throws: ``NotesError/invalid(_:)`` naming the field.
    public init(
        passphraseSource: LockInfo.Source = .tresor, passphraseSalt: Data, passphraseIterations: Int, passphraseVerifier: Data?,
        passphraseProofHash: Data?, wrappedKey: Data, iv: Data, tag: Data, ciphertext: Data, bodyFormat: LockedBodyFormat, noteProofHash: Data?,
        passphraseHint: String? = nil
    ) throws {
        if let passphraseHint { try NoteRules.validateHint(passphraseHint) }
        self.passphraseHint = passphraseHint
        guard passphraseSalt.count == LockedNoteShape.saltByteCount else { throw NotesError.invalid("the salt must be 16 bytes") }
        guard (1...LockedNoteShape.maximumIterations).contains(passphraseIterations) else {
            throw NotesError.invalid("the iteration count must be 1 to \(LockedNoteShape.maximumIterations)")
        }
        guard passphraseVerifier != nil || passphraseSource == .appleNotes else { throw NotesError.invalid("a Tresor passphrase needs its verifier") }
        guard (passphraseVerifier?.count ?? LockedNoteShape.wrappedKeyByteCount) == LockedNoteShape.wrappedKeyByteCount,
            wrappedKey.count == LockedNoteShape.wrappedKeyByteCount
        else {
            throw NotesError.invalid("the verifier and the wrapped key must be 24 bytes")
        }
        for hash in [passphraseProofHash, noteProofHash].compactMap({ $0 }) where hash.count != LockedNoteShape.proofByteCount {
            throw NotesError.invalid("a proof hash must be 32 bytes")
        }
        try LockedNoteShape.checkBody(iv: iv, tag: tag, ciphertext: ciphertext)
        self.passphraseSource = passphraseSource
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

    /// This record without its generation's hint: what two records of the same note are
    /// compared by (a hint fills in where it arrives; it changes nothing of the note).
    public var withoutHint: SyncedLockedRecord {
        var record = self
        record.passphraseHint = nil
        return record
    }
}

/// The writes of a sync account's devices that the web's own operations do not cover, in the
/// server's store (docs/SYNC.md, "Notes"): a device's locked note is stored as it is, and read
/// back whole by the account's devices; a lock removed on a device is removed here; an edit of a
/// note in Recently Deleted restores it in the edit's transaction. Without a key the server
/// cannot merge a locked body: a change made from an older revision is kept as a conflict copy.
public protocol LockedNoteSyncStore: Sendable {
    /// Locked note `id`'s sealed record, with its passphrase generation.
    /// - Parameter id: the note.
    /// - Returns: the record.
    /// - Throws: ``NotesError/wrongLockState(_:)`` for a note that is not locked.
    func syncedLockedRecord(ofNote id: String) async throws -> SyncedLockedRecord

    /// Stores a device's locked note: a new note (`id` nil), or a new version of note `id` —
    /// kept as its conflict copy when the note's text changed since `base`: a note whose title and
    /// body are still the base's (only its attachments, pin or folder changed since; the device
    /// locked the text it has) takes the lock. The passphrase
    /// generation is the account's one of that salt and source, else recorded (a Tresor one
    /// current when the account has none; an Apple Notes passphrase never).
    /// - Parameters:
    ///   - id: the note, or nil for a new one.
    ///   - title: its title.
    ///   - folder: its folder's name.
    ///   - isPinned: its pin.
    ///   - record: the sealed record.
    ///   - base: the revision the change was made from, with its title and body as the device
    ///     had them (a body only when that version was not locked).
    ///   - restoring: whether the change takes note `id` out of Recently Deleted — in the same
    ///     transaction, so a refused change leaves it there.
    ///   - account: the owner.
    ///   - edit: the device the change came from (names a conflict copy) and when it was made
    ///     (dates the note).
    ///   - quota: the owner's storage quota, checked in the same transaction; nil for none.
    /// - Returns: the note's id, and the conflict copy's when one was made.
    /// - Throws: ``NotesError/invalid(_:)``, ``NotesError/notFound(_:)``, ``NotesError/quotaExceeded(_:)``.
    func storeSyncedLockedNote(
        _ id: String?, title: String, folder: String?, isPinned: Bool, record: SyncedLockedRecord, base: NoteBase?, restoring: Bool,
        account: AccountID, edit: SyncedEdit, quota: StorageQuota?
    ) async throws -> (id: String, conflictCopyID: String?)

    /// Removes the lock of note `id` for a device that removed it (with the passphrase, there):
    /// the device's plaintext body replaces the sealed record, and the unlocked copy the device
    /// sent of each attachment (``beginUnlockedCopy(ofAttachment:note:)``) replaces its sealed
    /// chunks — all in one transaction, refused while a copy is missing, so the note is never
    /// unlocked with an attachment the server cannot read. A note changed since `baseRevision`
    /// keeps its lock and newer version — no key here to merge with — and the device's version
    /// becomes its unlocked conflict copy; the note's unlocked copies are dropped.
    /// - Parameters:
    ///   - id: the locked note.
    ///   - title: its title.
    ///   - body: its body, opened on the device.
    ///   - folder: its folder's name.
    ///   - isPinned: its pin.
    ///   - baseRevision: the revision the change was made from.
    ///   - restoring: whether the change takes the note out of Recently Deleted (same transaction).
    ///   - account: the owner.
    ///   - edit: the device the change came from (names a conflict copy) and when it was made
    ///     (dates the note).
    ///   - quota: the owner's storage quota, checked in the same transaction; nil for none.
    /// - Returns: the note's id, and the conflict copy's when one was made.
    /// - Throws: ``NotesError/wrongLockState(_:)`` for a note that is not locked, or has an
    ///   attachment without its unlocked copy (sealed under its key, which the server does not hold), ``NotesError/invalid(_:)``,
    ///   ``NotesError/notFound(_:)``, ``NotesError/quotaExceeded(_:)``.
    func removeSyncedLock(
        _ id: String, title: String, body: String, folder: String?, isPinned: Bool, baseRevision: Int64?, restoring: Bool,
        account: AccountID, edit: SyncedEdit, quota: StorageQuota?
    ) async throws -> (id: String, conflictCopyID: String?)

    /// The account's current passphrase generation with its hint, for its devices.
    /// - Parameter account: the account.
    /// - Returns: the generation, or nil while none is set.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func syncedCurrentPassphrase(account: AccountID) async throws -> SyncedPassphrase?

    /// A device's current passphrase generation (a passphrase set, changed or reset there, or a
    /// new hint): recorded by its salt, with its hint, and made current when the account's
    /// current one is still `base` (the salt the device last had; nil for none) — else another
    /// device's change came first and stays current. All under the account's row lock.
    /// - Parameters:
    ///   - passphrase: the device's current generation.
    ///   - base: the salt of the account's current generation the device last had.
    ///   - account: the account.
    /// - Returns: the account's current generation now.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func storeSyncedPassphrase(_ passphrase: SyncedPassphrase, base: Data?, account: AccountID) async throws -> SyncedPassphrase?

    /// A device's folders made and deleted, by name, under the account's row lock: each made
    /// one is made when missing; each deleted one is deleted when no note outside Recently
    /// Deleted is in it (those in Recently Deleted move to no folder) — one that holds notes
    /// here outlives the deletion.
    /// - Parameters:
    ///   - created: names of folders the device made.
    ///   - deleted: names of folders the device deleted.
    ///   - account: the account.
    /// - Returns: the account's folder names now.
    /// - Throws: ``NotesError/invalid(_:)`` for a name that is not a folder's.
    func applySyncedFolderChanges(created: [String], deleted: [String], account: AccountID) async throws -> [String]

    /// Saves a device's edit of unlocked note `id` as ``FoldersAndNotesStore/saveNote(_:_:by:quota:)``
    /// does, taking it out of Recently Deleted first when `restoring` — one transaction, so an
    /// edit refused (over the quota) leaves the note where it was.
    /// - Parameters:
    ///   - id: the note.
    ///   - changes: what the edit changes.
    ///   - restoring: whether the edit restores the note.
    ///   - editor: who saves.
    ///   - edit: the editor's device the edit came from — a conflict copy is "from" it (and from
    ///     the editor's login name, when the editor is not the owner) — and when it was made.
    ///   - quota: the owner's storage quota; nil for none.
    /// - Returns: what the save made.
    /// - Throws: as `saveNote`.
    func saveSyncedNote(
        _ id: String, _ changes: NoteChanges, restoring: Bool, by editor: AccountID, edit: SyncedEdit, quota: StorageQuota?
    ) async throws -> NoteSaveOutcome

    /// Starts storing a device's attachment of locked note `noteID` as its chunks sealed under
    /// the note key (docs/WEB.md, "Locked notes in the browser": the browser's format), which then
    /// arrive one after another in pieces of any size. The size limit and the quota count its
    /// plaintext's bytes.
    /// - Parameters:
    ///   - noteID: the locked note.
    ///   - kind: a lockable kind.
    ///   - name: its name.
    ///   - id: its id (a device's: no other attachment may have it).
    ///   - created: when the device added it, as
    ///     ``AttachmentStore/beginAttachment(to:kind:name:id:created:excludedFromBackup:)`` takes it.
    ///   - excludedFromBackup: whether the device keeps it out of backups, as that takes it.
    /// - Returns: the writer of the sealed chunks.
    /// - Throws: ``NotesError/wrongLockState(_:)`` for a note that is not locked,
    ///   ``NotesError/attachmentNotLockable(name:kind:)``, ``NotesError/conflict(_:)`` for an id
    ///   taken, ``NotesError/invalid(_:)``.
    func beginSyncedLockedAttachment(
        to noteID: String, kind: AttachmentKind, name: String, id: String, created: Date?, excludedFromBackup: Bool
    ) async throws -> any AttachmentWriter

    /// Starts storing the plaintext of attachment `id` of locked note `noteID`, which the server
    /// holds sealed under the note key, as its **unlocked copy**: a device that removed the
    /// note's lock sends it before the removal, which then puts it in the sealed chunks' place
    /// (``removeSyncedLock(_:title:body:folder:isPinned:baseRevision:restoring:account:quota:)``).
    /// Its pieces then arrive one after another; it must come to the attachment's byte count. The
    /// quota counts nothing: the copy replaces an attachment of the same size.
    /// - Parameters:
    ///   - id: the attachment, held sealed.
    ///   - noteID: its locked note.
    /// - Returns: the writer of the plaintext, or nil when the whole copy is here already (a
    ///   retry whose answer was lost).
    /// - Throws: ``NotesError/notFound(_:)`` for no such attachment of the note,
    ///   ``NotesError/wrongLockState(_:)`` for a note that is not locked or an attachment not
    ///   held sealed.
    func beginUnlockedCopy(ofAttachment id: String, note noteID: String) async throws -> (any AttachmentWriter)?

    /// The ids of note `id`'s attachments stored as their chunks sealed under the note key (as
    /// the browser or a device sent them); the others are stored as their plaintext, sealed
    /// under the server's key — one sent before the note's lock travelled, until it is sent anew.
    /// - Parameter id: the note.
    /// - Returns: the sealed ones' ids.
    /// - Throws: ``NotesError/notFound(_:)`` for no such note.
    func sealedAttachmentIDs(ofNote id: String) async throws -> Set<String>
}

/// A notes passphrase generation as sync carries it between a device and its web account
/// (docs/SYNC.md, "Notes"): salt, rounds, verifier and proof hash — never the passphrase — and
/// its hint.
public struct SyncedPassphrase: Sendable, Equatable, Codable {
    public var salt: Data
    public var iterations: Int
    public var verifier: Data
    public var proofHash: Data?
    public var hint: String?

    /// Checks the shapes (``LockedNoteShape``) and the hint's length.
    /// - Throws: ``NotesError/invalid(_:)`` naming the field.
    public init(salt: Data, iterations: Int, verifier: Data, proofHash: Data?, hint: String?) throws {
        guard salt.count == LockedNoteShape.saltByteCount else { throw NotesError.invalid("the salt must be 16 bytes") }
        guard verifier.count == LockedNoteShape.wrappedKeyByteCount else { throw NotesError.invalid("the verifier must be 24 bytes") }
        guard proofHash.map({ $0.count == LockedNoteShape.proofByteCount }) ?? true else {
            throw NotesError.invalid("a proof hash must be 32 bytes")
        }
        guard (1...LockedNoteShape.maximumIterations).contains(iterations) else {
            throw NotesError.invalid("the iteration count must be 1 to \(LockedNoteShape.maximumIterations)")
        }
        if let hint { try NoteRules.validateHint(hint) }
        self.salt = salt
        self.iterations = iterations
        self.verifier = verifier
        self.proofHash = proofHash
        self.hint = hint
    }
}
