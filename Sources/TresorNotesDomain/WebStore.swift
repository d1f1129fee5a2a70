import Foundation

/// Where the web side keeps its accounts, folders, notes, passphrase records, shares and
/// attachments (docs/ARCHITECTURE.md, "The web storage boundary"). Two stores answer it: the
/// embedded one over a home's notes database (SQLite, `TresorWebStoreSQLite`) and the server's
/// (PostgreSQL, `TresorWebStorePostgres`), and one conformance suite holds both to the same
/// answers. Every method is one step: it checks, changes and announces atomically, or throws and
/// changes nothing. Errors are ``NotesError``s; a store that cannot reach its storage throws
/// ``NotesError/unavailable(_:)``.
///
/// Both mean the same by a revision and by an announcement: a note's `revision` counts up with
/// every change another device must fetch again — its title, body, pin, folder, lock,
/// attachments, place in Recently Deleted, participants, and its key's wrapping — and every change
/// of what a client shows is announced (``NoteChange``, on the backend's ``WebEventBus``) with the
/// revision it made. A note in Recently Deleted is not edited, locked, re-wrapped alone, or given or
/// relieved of an attachment (``NotesError/invalid(_:)``: restore it first); a passphrase change
/// re-wraps it with the rest.
///
/// Callers check access first (``access(toNote:for:includingDeleted:)``); the methods that name
/// a note trust that check, as the routes make it for every request.
public protocol WebStore: Sendable {
    /// Returns when the storage answers (`GET /healthz`).
    /// - Throws: ``NotesError/unavailable(_:)`` when it does not.
    func checkHealth() async throws

    // MARK: Accounts

    /// The fewest PBKDF2 rounds accepted for a passphrase made in the browser (and the rounds
    /// account passwords are hashed with).
    var minimumIterations: Int { get }

    /// Creates a web account and keeps only its password's salted hash.
    /// - Parameters:
    ///   - name: the login name as typed (case-folded; `local` is taken).
    ///   - password: the password.
    /// - Returns: the account.
    /// - Throws: ``NotesError/nameTaken(_:)``, ``NotesError/invalid(_:)``.
    func registerAccount(name: String, password: AccountPassword) async throws -> WebAccount

    /// The web account `name` when `password` is its password; nil otherwise (an unknown name
    /// costs the same KDF run as a known one).
    /// - Parameters:
    ///   - name: the login name.
    ///   - password: what was typed.
    /// - Returns: the account, or nil.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func authenticate(name: String, password: AccountPassword) async throws -> WebAccount?

    /// Whether `password` is web account `account`'s password.
    /// - Parameters:
    ///   - password: what was typed.
    ///   - account: the account.
    /// - Returns: true when it is.
    /// - Throws: ``NotesError/notFound(_:)``.
    func checkPassword(_ password: AccountPassword, account: AccountID) async throws -> Bool

    /// Replaces a web account's password when `current` is right (of changes made at once from
    /// one current password, exactly one is kept).
    /// - Parameters:
    ///   - account: the account.
    ///   - current: what was typed as the current password.
    ///   - new: the new password.
    /// - Returns: false, changing nothing, when `current` is wrong.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/invalid(_:)`` for the local account.
    func changePassword(account: AccountID, current: AccountPassword, to new: AccountPassword) async throws -> Bool

    /// The account that signs in as `name`, if any.
    /// - Parameter name: a login name.
    /// - Returns: the account, or nil.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func account(named name: String) async throws -> WebAccount?

    // MARK: Folders

    /// The account's folders, by name, each with its count of notes not deleted.
    /// - Parameter account: the owner.
    /// - Returns: the folders.
    /// - Throws: ``NotesError/unavailable(_:)``, ``NotesError/contentUnavailable``.
    func folders(account: AccountID) async throws -> [Folder]

    /// Creates a folder, or returns the one of that name.
    /// - Parameters:
    ///   - name: its name.
    ///   - account: the owner.
    /// - Returns: the folder.
    /// - Throws: ``NotesError/invalid(_:)``.
    func createFolder(named name: String, account: AccountID) async throws -> Folder

    /// Deletes a folder; its notes move out of it first (into no folder), in the same step, each
    /// announced as changed with its new revision, and the account's folders as `.folders`.
    /// - Parameters:
    ///   - id: the folder.
    ///   - account: the owner.
    /// - Throws: ``NotesError/notFound(_:)``.
    func deleteFolder(id: String, account: AccountID) async throws

    // MARK: Notes

    /// What `account` may do with note `id`: a note it may not see is `notFound` exactly as a
    /// missing one. A note in Recently Deleted is its owner's alone, and only with
    /// `includingDeleted` (otherwise `invalid`, "restore it first").
    /// - Parameters:
    ///   - id: the note.
    ///   - account: who asks.
    ///   - includingDeleted: whether a note in Recently Deleted is answered (to its owner).
    /// - Returns: owner or participant.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/invalid(_:)``.
    func access(toNote id: String, for account: AccountID, includingDeleted: Bool) async throws -> NoteAccess

    /// The account's own notes not deleted (or one folder's), pinned first, then most recently
    /// modified.
    /// - Parameters:
    ///   - account: the owner.
    ///   - folderID: a folder of the account, or nil for all.
    /// - Returns: their summaries.
    /// - Throws: ``NotesError/notFound(_:)`` for an unknown folder.
    func notes(account: AccountID, folderID: String?) async throws -> [NoteSummary]

    /// The notes others share with `account`, most recently modified first.
    /// - Parameter account: the participant.
    /// - Returns: their summaries.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func notesShared(with account: AccountID) async throws -> [NoteSummary]

    /// The account's notes whose title — or, for unlocked notes, body — holds every word of
    /// `text` (as word prefixes, case and diacritics ignored): those with more of the words in
    /// their title first, then the most recently modified, then by id (``SearchWords``).
    /// - Parameters:
    ///   - text: what was typed.
    ///   - account: the owner.
    /// - Returns: the matching notes' summaries.
    /// - Throws: ``NotesError/invalid(_:)`` for an empty or too long text, or one without a word.
    func search(_ text: String, account: AccountID) async throws -> [NoteSummary]

    /// The preview (``NoteRules/preview(body:title:)``) of each unlocked note of `ids`.
    /// - Parameter ids: the notes.
    /// - Returns: note id → preview (notes without one are left out).
    /// - Throws: ``NotesError/unavailable(_:)``.
    func previews(ofNotes ids: [String]) async throws -> [String: String]

    /// One note's summary.
    /// - Parameter id: the note.
    /// - Returns: its summary.
    /// - Throws: ``NotesError/notFound(_:)``.
    func summary(ofNote id: String) async throws -> NoteSummary

    /// An unlocked note with its body and attachments.
    /// - Parameter id: the note.
    /// - Returns: the note.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/wrongLockState(_:)`` for a locked note.
    func openNote(_ id: String) async throws -> OpenedNote

    /// Creates an unlocked note (its folder, by name, created when missing).
    /// - Parameters:
    ///   - draft: title, body, folder, pin.
    ///   - account: the owner.
    ///   - quota: the owner's quota, when it has one.
    /// - Returns: its summary.
    /// - Throws: ``NotesError/invalid(_:)``, ``NotesError/quotaExceeded(_:)``.
    func createNote(_ draft: NoteDraft, account: AccountID, quota: StorageQuota?) async throws -> NoteSummary

    /// Saves an edit: merged with what changed since `changes.base`, or kept as a conflict
    /// copy (docs/FORMAT.md, "Revisions and merges"). A locked note's body is not saved here
    /// (``replaceLockedBody(ofNote:iv:tag:ciphertext:noteProof:passphraseProof:baseRevision:quota:)``).
    /// - Parameters:
    ///   - id: the note.
    ///   - changes: title, body, pin, folder and the revision they were made from.
    ///   - editor: who saves (names a conflict copy).
    ///   - quota: the owner's quota, for an edit that grows the note.
    /// - Returns: saved, merged or conflict copy.
    /// - Throws: ``NotesError/invalid(_:)``, ``NotesError/passphraseRequired(_:)`` for a new body of a locked note,
    ///   ``NotesError/quotaExceeded(_:)``.
    func saveNote(_ id: String, _ changes: NoteChanges, by editor: AccountID, quota: StorageQuota?) async throws -> NoteSaveOutcome

    // MARK: Sharing

    /// Shares note `id` with the account that signs in as `name` (the owner only; not a locked
    /// note). The note's revision counts up (sharing it with a participant again changes nothing).
    /// - Parameters:
    ///   - id: the note.
    ///   - name: the participant's login name.
    ///   - owner: who shares.
    /// - Returns: the note's owner and participants now.
    /// - Throws: ``NotesError/notFound(_:)`` for an unknown name, ``NotesError/wrongLockState(_:)``,
    ///   ``NotesError/invalid(_:)`` (itself, too many).
    func share(note id: String, with name: String, by owner: AccountID) async throws -> ShareInfo

    /// Removes `name` from note `id`'s participants: the owner removes anyone, a participant
    /// only themself. The note's revision counts up.
    /// - Parameters:
    ///   - id: the note.
    ///   - name: the participant's login name.
    ///   - account: who asks.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/forbidden(_:)``.
    func unshare(note id: String, participant name: String, by account: AccountID) async throws

    // MARK: Recently Deleted

    /// Moves a note to Recently Deleted.
    /// - Parameter id: the note.
    /// - Throws: ``NotesError/invalid(_:)`` when it is there already.
    func moveToRecentlyDeleted(_ id: String) async throws

    /// Brings a note back from Recently Deleted.
    /// - Parameter id: the note.
    /// - Returns: its summary.
    /// - Throws: ``NotesError/invalid(_:)`` when it is not there.
    func restoreNote(_ id: String) async throws -> NoteSummary

    /// The account's notes in Recently Deleted, most recently deleted first.
    /// - Parameter account: the owner.
    /// - Returns: their summaries.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func recentlyDeleted(account: AccountID) async throws -> [NoteSummary]

    /// Deletes a note in Recently Deleted for good, with its attachments.
    /// - Parameter id: the note.
    /// - Throws: ``NotesError/invalid(_:)`` when it is not in Recently Deleted.
    func deleteForGood(_ id: String) async throws

    /// Deletes every note of `account` in Recently Deleted for good.
    /// - Parameter account: the owner.
    /// - Returns: how many.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func emptyRecentlyDeleted(account: AccountID) async throws -> Int

    /// Deletes for good the notes in Recently Deleted for ``NoteRules/recentlyDeletedDays`` days.
    /// - Returns: how many.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func deleteExpiredNotes() async throws -> Int

    // MARK: Attachments

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
    /// - Returns: the writer to hand the bytes to.
    /// - Throws: ``NotesError/invalid(_:)`` (a bad name, a note in Recently Deleted), ``NotesError/wrongLockState(_:)``.
    func beginAttachment(to noteID: String, kind: AttachmentKind, name: String) async throws -> any AttachmentWriter

    /// An attachment's bytes, a piece at a time; a locked note's as its sealed chunks, one after
    /// another (what the browser opens).
    /// - Parameters:
    ///   - id: the attachment.
    ///   - noteID: its note.
    /// - Returns: the reader.
    /// - Throws: ``NotesError/notFound(_:)``.
    func readAttachment(_ id: String, of noteID: String) async throws -> any AttachmentReader

    /// Removes an attachment.
    /// - Parameters:
    ///   - id: the attachment.
    ///   - noteID: its note.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/invalid(_:)`` for a note in Recently Deleted.
    func removeAttachment(_ id: String, of noteID: String) async throws

    // MARK: Passphrases and locked notes (made in the browser)

    /// The account's passphrase state (``PassphraseStatus/sessionOpen`` is always false here:
    /// browsers keep their own secure sessions).
    /// - Parameter account: the account.
    /// - Returns: whether one is set, wrong entries, the wait.
    /// - Throws: ``NotesError/notFound(_:)``.
    func passphraseStatus(account: AccountID) async throws -> PassphraseStatus

    /// The account's current passphrase's hint.
    /// - Parameter account: the account.
    /// - Returns: the hint, or nil.
    /// - Throws: ``NotesError/noPassphrase``.
    func passphraseHint(account: AccountID) async throws -> String?

    /// The account's current passphrase generation, for the browser to derive its key.
    /// - Parameter account: the account.
    /// - Returns: the record, or nil when none is set.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func passphraseRecord(account: AccountID) async throws -> PassphraseRecord?

    /// Sets the account's first passphrase.
    /// - Parameters:
    ///   - material: salt, rounds, verifier, proof hash.
    ///   - hint: its hint.
    ///   - account: the account.
    /// - Throws: ``NotesError/passphraseAlreadySet``, ``NotesError/invalid(_:)``.
    func setPassphrase(_ material: PassphraseMaterial, hint: String?, account: AccountID) async throws

    /// A new generation after a forgotten passphrase (the caller checked the account password).
    /// - Parameters:
    ///   - material: salt, rounds, verifier, proof hash.
    ///   - hint: its hint.
    ///   - account: the account.
    /// - Throws: ``NotesError/invalid(_:)``.
    func resetPassphrase(to material: PassphraseMaterial, hint: String?, account: AccountID) async throws

    /// Changes the passphrase: every note locked with the current one re-wrapped, in one step;
    /// each such note's revision counts up and it is announced as changed.
    /// - Parameters:
    ///   - proof: proves the current passphrase.
    ///   - material: the new salt, rounds, verifier, proof hash.
    ///   - hint: absent: keep; `.some(nil)`: remove.
    ///   - rewrappedKeys: note id → its key wrapped under the new passphrase (every such note).
    ///   - account: the account.
    /// - Throws: ``NotesError/conflict(_:)``, the proof errors.
    func changePassphrase(
        proof: PassphraseProof, to material: PassphraseMaterial, hint: String??, rewrappedKeys: [String: Data], account: AccountID
    ) async throws

    /// An entry of the passphrase: the proof of the key the browser derived, checked and counted.
    /// - Parameters:
    ///   - proof: the passphrase and the proof of its key.
    ///   - establish: the browser checked it itself (only while no proof is recorded).
    ///   - account: the account.
    /// - Returns: the count after the entry.
    /// - Throws: ``NotesError/wrongPassphrase(failedAttempts:hint:retryAfterSeconds:)``, ``NotesError/throttled(retryAfterSeconds:hint:)``.
    func enterPassphrase(_ proof: PassphraseProof, establish: Bool, account: AccountID) async throws -> PassphraseEntryOutcome

    /// A locked note's wrapped key, for a proof of its passphrase.
    /// - Parameters:
    ///   - id: the note.
    ///   - proof: proves the note's passphrase.
    ///   - account: the owner.
    /// - Returns: the wrapped key.
    /// - Throws: ``NotesError/conflict(_:)``, the proof errors.
    func wrappedKey(ofNote id: String, proof: PassphraseProof, account: AccountID) async throws -> Data

    /// A locked note's crypto fields without the store's sealing.
    /// - Parameter id: the note.
    /// - Returns: the record.
    /// - Throws: ``NotesError/wrongLockState(_:)``.
    func lockedRecord(ofNote id: String) async throws -> LockedNoteRecord

    /// Locks an unlocked note with ciphertext made in the browser; the plaintext goes in the
    /// same step. Its refusals come in one order: locked already, in Recently Deleted, shared, an
    /// attachment of a kind that cannot be locked.
    /// - Parameters:
    ///   - id: the note.
    ///   - client: the wrapped key, note proof hash, sealed body and every attachment's chunks.
    ///   - proof: proves the current passphrase.
    ///   - quota: the owner's quota.
    /// - Throws: ``NotesError/conflict(_:)``, ``NotesError/wrongLockState(_:)``, ``NotesError/invalid(_:)`` for a note
    ///   in Recently Deleted (restore it first), the proof errors.
    func lockNote(_ id: String, sealedBy client: ClientLockedNote, proof: Data, quota: StorageQuota?) async throws

    /// Saves an edited locked note's body (same note key, proved by `noteProof`).
    /// - Parameters:
    ///   - id: the note.
    ///   - iv: the body's IV.
    ///   - tag: its tag.
    ///   - ciphertext: the body sealed under the note key.
    ///   - noteProof: proves the note key.
    ///   - passphraseProof: for a note with no note proof recorded.
    ///   - baseRevision: the revision the edit was made from (older: ``NotesError/staleRevision(current:)``).
    ///   - quota: the owner's quota.
    /// - Returns: the note now.
    /// - Throws: ``NotesError/staleRevision(current:)``, the proof errors.
    func replaceLockedBody(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        baseRevision: Int64?, quota: StorageQuota?
    ) async throws -> NoteSummary

    /// Keeps a locked note's edited body as its conflict copy (the browser found both versions
    /// changing the same lines).
    /// - Parameters:
    ///   - id: the note.
    ///   - iv: the body's IV.
    ///   - tag: its tag.
    ///   - ciphertext: the body sealed under the note key.
    ///   - noteProof: proves the note key.
    ///   - passphraseProof: for a note with no note proof recorded.
    ///   - editor: who saves (names the copy).
    ///   - quota: the owner's quota.
    /// - Returns: the conflict copy.
    /// - Throws: the proof errors.
    func saveLockedConflictCopy(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        by editor: AccountID, quota: StorageQuota?
    ) async throws -> NoteSummary

    /// Re-wraps a note of an earlier passphrase under the current one; its revision counts up and
    /// it is announced as changed.
    /// - Parameters:
    ///   - id: the note.
    ///   - proof: proves the current passphrase.
    ///   - wrappedKey: the note key wrapped under it.
    ///   - noteProof: proves the note key.
    ///   - earlierProof: for a note with no note proof recorded: proves its own passphrase.
    ///   - quota: the owner's quota.
    /// - Throws: ``NotesError/conflict(_:)``, ``NotesError/wrongLockState(_:)``, ``NotesError/invalid(_:)`` for a note
    ///   in Recently Deleted, the proof errors.
    func rewrap(
        _ id: String, proof: PassphraseProof, wrappedKey: Data, noteProof: Data, earlierProof: PassphraseProof?, quota: StorageQuota?
    ) async throws

    // MARK: The widget

    /// The account's note count, most recently changed and pinned notes.
    /// - Parameter account: the owner.
    /// - Returns: the summary (titles included: the caller redacts).
    /// - Throws: ``NotesError/contentUnavailable``.
    func widget(account: AccountID) async throws -> WidgetSummary

    /// (notes, locked notes) of the account — readable even when titles are not.
    /// - Parameter account: the owner.
    /// - Returns: the counts.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func widgetCounts(account: AccountID) async throws -> (notes: Int, locked: Int)
}

/// A web account's storage limit, checked in the same step as the write that would exceed it,
/// so two concurrent writes of one account cannot both take the last room.
public struct StorageQuota: Sendable, Equatable {
    /// Bytes the account may store in all.
    public var limitBytes: Int64
    /// Bytes this write adds at most.
    public var addingBytes: Int

    public init(limitBytes: Int64, addingBytes: Int) {
        self.limitBytes = limitBytes
        self.addingBytes = addingBytes
    }

    /// Throws ``NotesError/quotaExceeded(_:)`` when `used` plus this write passes the limit.
    /// - Parameter used: the bytes the account stores now.
    /// - Throws: ``NotesError/quotaExceeded(_:)``.
    public func check(used: Int64) throws {
        guard used + Int64(addingBytes) <= limitBytes else {
            throw NotesError.quotaExceeded("this account stores \(used) bytes of its \(limitBytes): no room for \(addingBytes) more")
        }
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
