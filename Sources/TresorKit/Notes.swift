import FoundationEssentials
import TresorModel
import TresorProtocol

/// Notes, from a client's side: notes and folders, locked notes and their secure sessions,
/// attachments, the passphrase. The `tresor` CLI works on the user's notes; an application
/// registered with its team's notes group (`TEAM.notes`) on its team's own.
///
/// ```swift
/// let notes = try Notes()
/// let note = try notes.create(title: "Bank", body: "PIN 1234")
/// try notes.lock(note.id)                              // the passphrase's session is open
/// try notes.lockNow()                                  // every session ends
/// do {
///     _ = try notes.show(note.id)
/// } catch NotesClientError.passphraseRequired(let lock) {
///     print(lock.explanation)                          // ask, then:
///     print(try notes.show(note.id, passphrase: typed).body)
/// }
/// ```
///
/// A locked note asks for its passphrase (``NotesClientError/passphraseRequired(_:)``) until
/// a secure session holds it; a wrong one is ``NotesClientError/wrongPassphrase(failedAttempts:hint:retryAfterSeconds:)``.
/// Every other failure is the daemon's `APIError`.
///
/// Notes may be shared between threads and tasks (its calls take turns on its connection);
/// the `async` methods never block a Swift concurrency thread.
public final class Notes: Sendable {
    /// The connection the calls go through.
    public let client: TresorClient

    /// Connects to the daemon of `paths` (the default home), starting it when needed.
    /// - Parameter paths: the home whose daemon to use.
    /// - Throws: ``TresorClientError`` when no daemon answers or starts.
    public init(paths: TresorPaths = TresorPaths()) throws {
        client = try TresorClient.connect(paths: paths)
    }

    /// Uses a connection made already (another home, a test's daemon).
    /// - Parameter client: The connection to use.
    public init(client: TresorClient) {
        self.client = client
    }

    // MARK: Notes and folders

    /// Every note (or one folder's), pinned first, then most recently modified. Notes in
    /// Recently Deleted are left out.
    /// - Parameter folder: a folder's name, or nil for every note.
    /// - Returns: the notes' summaries, without their bodies.
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started, `notInitialized`, `missingEntitlement` for an application without its
    ///   team's notes group), or ``TresorClientError``.
    public func list(folder: String? = nil) throws -> [NoteSummary] { try mapped { try client.notesList(folder: folder) } }

    /// A new, unlocked note. An empty title takes the body's first line.
    /// - Parameters:
    ///   - title: the title, at most 4 KiB.
    ///   - body: the body, at most 1 MiB.
    ///   - folder: a folder's name (made when missing), or nil for none.
    ///   - pinned: whether it shows first in lists.
    /// - Returns: the new note, with its id.
    /// - Throws: `APIError` (`param` for a title, body or folder name over its limit,
    ///   `interactionNotAllowed` before the first unlock since the daemon started), or
    ///   ``TresorClientError``.
    @discardableResult
    public func create(title: String, body: String, folder: String? = nil, pinned: Bool = false) throws -> NoteSummary {
        try mapped { try client.notesCreate(CreateNoteRequest(title: title, body: body, folder: folder, pinned: pinned)) }
    }

    /// A note with its body and attachments; a locked one needs `passphrase` or an open session.
    /// A note in Recently Deleted reads too, with `deleted` set.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: a locked note's passphrase when no secure session holds it; entering it
    ///     opens that session.
    /// - Returns: the note's summary, body and attachments.
    /// - Throws: ``NotesClientError`` for a locked note without its passphrase, or with a wrong
    ///   one; `APIError` (`notFound` for no such note, `throttled` after too many wrong
    ///   passphrases); ``TresorClientError``.
    public func show(_ id: String, passphrase: String? = nil) throws -> OpenedNote {
        try mapped { try client.notesShow(id, passphrase: passphrase) }
    }

    /// Changes what is given. `folder: .some(nil)` moves the note out of any folder. The edit
    /// replaces what is stored; an editor that showed the note first saves with
    /// ``save(_:title:body:pinned:folder:passphrase:base:)`` so a change made meanwhile is merged.
    /// - Parameters:
    ///   - id: the note.
    ///   - title: a new title, or nil.
    ///   - body: a new body, or nil.
    ///   - pinned: pin or unpin, or nil.
    ///   - folder: a folder to move to (made when missing); `.some(nil)` moves it out of any folder.
    ///   - passphrase: a locked note's passphrase when no secure session holds it.
    /// - Returns: the note as it now is.
    /// - Throws: ``NotesClientError`` for a locked note without its passphrase; `APIError`
    ///   (`notFound` for no such note, `forbidden` for pinning or moving a note another account
    ///   shared); ``TresorClientError``.
    @discardableResult
    public func edit(
        _ id: String, title: String? = nil, body: String? = nil, pinned: Bool? = nil, folder: String?? = nil, passphrase: String? = nil
    ) throws -> NoteSummary {
        try save(id, title: title, body: body, pinned: pinned, folder: folder, passphrase: passphrase).note
    }

    /// Saves an edit made from `base` (the revision, title and body the editor started from):
    /// when the note changed meanwhile the edit is merged into it, or kept as a conflict copy.
    /// - Parameters:
    ///   - id: the note.
    ///   - title: a new title, or nil.
    ///   - body: a new body, or nil.
    ///   - pinned: pin or unpin, or nil.
    ///   - folder: a folder to move to; `.some(nil)` moves it out of any folder.
    ///   - passphrase: a locked note's passphrase when no secure session holds it.
    ///   - base: the version the edit was made from (nil: replace whatever is stored).
    /// - Returns: saved, merged or kept as a conflict copy.
    /// - Throws: ``NotesClientError`` for a locked note without its passphrase, or with a wrong
    ///   one; `APIError` (`notFound` for no such note, `param` for a field over its limit);
    ///   ``TresorClientError`` when the daemon cannot be reached.
    @discardableResult
    public func save(
        _ id: String, title: String? = nil, body: String? = nil, pinned: Bool? = nil, folder: String?? = nil, passphrase: String? = nil,
        base: NoteBase? = nil
    ) throws -> NoteSaveOutcome {
        let request = EditNoteRequest(
            id: id, title: title, body: body, pinned: pinned, folder: folder ?? nil,
            removeFromFolder: folder.map { $0 == nil }, passphrase: passphrase, base: base)
        return try mapped { try client.notesEdit(request) }
    }

    /// Moves a note (with its attachments) to Recently Deleted, where it stays 30 days.
    /// - Parameter id: the note.
    /// - Throws: `APIError` (`notFound` for no such note); ``TresorClientError`` when the daemon
    ///   cannot be reached.
    public func delete(_ id: String) throws { try mapped { try client.notesDelete(id) } }

    /// The notes in Recently Deleted, most recently deleted first.
    /// - Returns: their summaries (`deleted` set).
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started); ``TresorClientError`` when the daemon cannot be reached.
    public func recentlyDeleted() throws -> [NoteSummary] { try mapped { try client.notesRecentlyDeleted() } }

    /// Brings a note back from Recently Deleted.
    /// - Parameter id: the note.
    /// - Returns: the note as it now is.
    /// - Throws: `APIError` (`notFound` for a note not in Recently Deleted); ``TresorClientError``
    ///   when the daemon cannot be reached.
    @discardableResult
    public func restore(_ id: String) throws -> NoteSummary { try mapped { try client.notesRestore(id) } }

    /// Deletes a note in Recently Deleted for good: nothing of it stays in the home.
    /// - Parameter id: the note.
    /// - Throws: `APIError` (`notFound` for a note not in Recently Deleted); ``TresorClientError``
    ///   when the daemon cannot be reached.
    public func deleteForGood(_ id: String) throws { try mapped { try client.notesDeleteForGood(id) } }

    /// Deletes every note in Recently Deleted for good.
    /// - Returns: how many were deleted.
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started); ``TresorClientError`` when the daemon cannot be reached.
    @discardableResult
    public func emptyRecentlyDeleted() throws -> Int { try mapped { try client.notesEmptyRecentlyDeleted() } }

    /// Notes whose title (or unlocked body) holds every word of `text`.
    /// - Parameter text: the words; each must start a word of the note.
    /// - Returns: the notes with more of the words in the title first, then the most recently
    ///   modified.
    /// - Throws: `APIError` (`param` for a text without a word, `interactionNotAllowed` before
    ///   the first unlock since the daemon started), or ``TresorClientError``.
    public func search(_ text: String) throws -> [NoteSummary] { try mapped { try client.notesSearch(text) } }

    /// Every folder, by name.
    /// - Returns: the folders, each with its note count.
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started, `notInitialized`), or ``TresorClientError``.
    public func folders() throws -> [Folder] { try mapped { try client.notesFolders() } }

    /// Creates a folder, or returns the one of that name.
    /// - Parameter name: the folder's name, at most 256 bytes.
    /// - Returns: the folder.
    /// - Throws: `APIError` (`param` for a bad name), or ``TresorClientError``.
    @discardableResult
    public func createFolder(_ name: String) throws -> Folder { try mapped { try client.notesCreateFolder(name) } }

    /// Deletes an empty folder; returns the folders left.
    /// - Parameter name: the folder's name.
    /// - Returns: the folders left.
    /// - Throws: `APIError` (`notFound` for no such folder, `param` for one that holds
    ///   notes), or ``TresorClientError``.
    @discardableResult
    public func deleteFolder(_ name: String) throws -> [Folder] { try mapped { try client.notesDeleteFolder(name) } }

    // MARK: Locked notes and sessions

    /// Locks a note with the current passphrase (or its open session): its body and
    /// attachments are sealed and the plaintext leaves the home.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: the current passphrase, when its secure session is not open.
    /// - Returns: the note, with its `lock`.
    /// - Throws: ``NotesClientError`` without the passphrase, or with a wrong one; `APIError`
    ///   (`noPassphrase` before one is set, `wrongLockState` for a locked note,
    ///   `attachmentNotLockable` for an audio, pdf or file attachment, `forbidden` for a note
    ///   another account shared); ``TresorClientError``.
    @discardableResult
    public func lock(_ id: String, passphrase: String? = nil) throws -> NoteSummary {
        try mapped { try client.notesLock(id, passphrase: passphrase) }
    }

    /// Removes a note's lock (`tresor note unlock`): it opens without a passphrase again.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: its passphrase, when no secure session holds it.
    /// - Returns: the note, without `lock`.
    /// - Throws: ``NotesClientError`` without the passphrase, or with a wrong one; `APIError`
    ///   (`wrongLockState` for a note that is not locked, `notFound`, `forbidden`);
    ///   ``TresorClientError``.
    @discardableResult
    public func removeLock(_ id: String, passphrase: String? = nil) throws -> NoteSummary {
        try mapped { try client.notesRemoveLock(id, passphrase: passphrase) }
    }

    /// Re-wraps a note locked with an earlier passphrase under the current one.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: the earlier passphrase it is locked with, when its session is not open.
    ///   - currentPassphrase: the current passphrase, when its session is not open.
    /// - Returns: the note, now under the current passphrase.
    /// - Throws: ``NotesClientError`` for a passphrase missing or wrong; `APIError`
    ///   (`wrongLockState` for a note not locked or already under the current passphrase,
    ///   `noPassphrase`); ``TresorClientError``.
    @discardableResult
    public func rewrap(_ id: String, passphrase: String? = nil, currentPassphrase: String? = nil) throws -> NoteSummary {
        try mapped { try client.notesRewrap(id, passphrase: passphrase, currentPassphrase: currentPassphrase) }
    }

    /// Lock Now: ends every secure session; returns how many were open. The `tresor` CLI only.
    /// - Returns: how many secure sessions ended.
    /// - Throws: `APIError` (`missingEntitlement` for any caller but the CLI), or
    ///   ``TresorClientError``.
    @discardableResult
    public func lockNow() throws -> Int { try mapped { try client.notesLockNow().endedSessions } }

    /// Opens the secure session of note `note`'s passphrase (or the current one), with
    /// `passphrase`, or with `passcode` through the key kept in the keychain (user presence).
    /// With neither, checks that a session (or keychain unlock) already opens `note`.
    /// - Parameters:
    ///   - note: a note whose passphrase to open, or nil for the current passphrase.
    ///   - passphrase: the passphrase, or nil.
    ///   - passcode: the keybag passcode, to open through the key kept in the keychain with
    ///     user presence (the `tresor` CLI only); not with `passphrase`.
    /// - Throws: ``NotesClientError`` for a passphrase needed or wrong; `APIError` (`param` for
    ///   both `passphrase` and `passcode`, or none of the three; `notFound` when no key is kept
    ///   in the keychain; `authFailed` for a wrong passcode); ``TresorClientError``.
    public func openSession(note: String? = nil, passphrase: String? = nil, passcode: String? = nil) throws {
        try mapped { try client.notesOpenSession(OpenSessionRequest(passphrase: passphrase, passcode: passcode, note: note)) }
    }

    // MARK: Attachments

    /// Attaches the file at `file`, sent a piece at a time (never held whole); to a locked note
    /// only while its session is open (`openSession(note:passphrase:passcode:)`).
    /// - Parameters:
    ///   - note: the note's id.
    ///   - kind: the attachment's kind.
    ///   - name: its name.
    ///   - file: the file to send.
    ///   - excludedFromBackup: leave it out of backups (``setExcludedFromBackup(_:of:excluded:)`` changes it later).
    /// - Returns: the attachment.
    /// - Throws: `APIError` or ``NotesClientError`` as the daemon answers.
    @discardableResult
    public func addAttachment(to note: String, kind: AttachmentKind, name: String, file: URL, excludedFromBackup: Bool = false) throws
        -> AttachmentInfo
    {
        try mapped { try client.notesAddAttachment(note: note, kind: kind, name: name, file: file, excludedFromBackup: excludedFromBackup) }
    }

    /// Leaves an attachment out of backups, or puts it back in.
    /// - Parameters:
    ///   - id: the attachment's id.
    ///   - note: its note's id.
    ///   - excluded: whether backups leave it out.
    /// - Returns: the attachment as it now is.
    /// - Throws: `APIError` (`notFound` for no such attachment).
    @discardableResult
    public func setExcludedFromBackup(_ id: String, of note: String, excluded: Bool) throws -> AttachmentInfo {
        try mapped { try client.notesSetExcludedFromBackup(id, of: note, excluded: excluded) }
    }

    /// An attachment's bytes, gathered in memory; one of a locked note needs `passphrase` or an
    /// open session. For a large attachment, `readAttachment(_:of:passphrase:receive:)` takes
    /// them a piece at a time instead.
    /// - Parameters:
    ///   - id: the attachment's id.
    ///   - note: its note's id.
    ///   - passphrase: a locked note's passphrase, when its session is not open.
    /// - Returns: the attachment's name, kind and bytes.
    /// - Throws: ``NotesClientError`` for a locked note without its passphrase; `APIError`
    ///   (`notFound` for no such attachment, `decode` for a damaged one);
    ///   ``TresorClientError/protocolError(_:)`` when the answer ends short.
    public func attachment(_ id: String, of note: String, passphrase: String? = nil) throws -> AttachmentData {
        var data = Data()
        let received = try readAttachment(id, of: note, passphrase: passphrase) { data.append($0) }
        return AttachmentData(id: received.id, name: received.name, kind: received.kind, data: data)
    }

    /// An attachment's bytes, handed to `receive` a piece at a time as they arrive from the
    /// daemon, which reads them from the store a chunk at a time too: an attachment of any size
    /// costs either process a few MiB. One of a locked note needs `passphrase` or an open session.
    /// - Parameters:
    ///   - id: the attachment's id.
    ///   - note: its note's id.
    ///   - passphrase: a locked note's passphrase, when its session is not open.
    ///   - receive: takes each piece, in order. What it throws ends the transfer and is thrown.
    /// - Returns: the attachment's name and kind, and how many bytes came.
    /// - Throws: `APIError` or ``NotesClientError`` as the daemon answers (before any piece);
    ///   ``TresorClientError/protocolError(_:)`` when the answer ends short (a damaged attachment,
    ///   after the pieces before the damage); what `receive` throws.
    @discardableResult
    public func readAttachment(
        _ id: String, of note: String, passphrase: String? = nil, receive: (Data) throws -> Void
    ) throws -> ReceivedAttachment {
        try mapped { try client.notesAttachment(id, of: note, passphrase: passphrase) { try receive(Data($0)) } }
    }

    /// Removes an attachment from its note; its file is overwritten, nothing keeps it.
    /// - Parameters:
    ///   - id: the attachment.
    ///   - note: its note.
    ///   - passphrase: for an attachment of a locked note, the note's passphrase when its secure
    ///     session is not open.
    /// - Returns: the note as it now is.
    /// - Throws: ``NotesClientError/passphraseRequired(_:)`` for a locked note with neither.
    @discardableResult
    public func removeAttachment(_ id: String, of note: String, passphrase: String? = nil) throws -> NoteSummary {
        try mapped { try client.notesRemoveAttachment(id, of: note, passphrase: passphrase) }
    }

    // MARK: Passphrase

    /// Whether a notes passphrase is set, its hint's presence, and the wrong-entry counter.
    /// - Returns: the status, never the hint itself (``hint()`` gives it).
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started, `notInitialized`), or ``TresorClientError``.
    public func passphraseStatus() throws -> NotesPassphraseStatus { try mapped { try client.notesPassphraseStatus() } }

    /// Sets the first notes passphrase (and its hint), and opens its secure session.
    /// - Parameters:
    ///   - passphrase: the passphrase, 1 to 1,024 bytes.
    ///   - hint: a hint, which must not contain the passphrase; or nil.
    /// - Returns: the passphrase's status.
    /// - Throws: `APIError` (`passphraseAlreadySet`: change or reset it instead; `param` for
    ///   a passphrase out of bounds or a hint that gives it away), or ``TresorClientError``.
    @discardableResult
    public func setPassphrase(_ passphrase: String, hint: String? = nil) throws -> NotesPassphraseStatus {
        try mapped { try client.notesSetPassphrase(SetPassphraseRequest(passphrase: passphrase, hint: hint)) }
    }

    /// Changes the passphrase; `current` must be typed. `hint: .some(nil)` removes the hint.
    /// Every note locked with it is re-wrapped under the new one, in one transaction.
    /// - Parameters:
    ///   - current: the passphrase now, typed: no session or keychain key stands for it.
    ///   - new: the new passphrase.
    ///   - hint: a new hint, `.some(nil)` to remove it, or nil to keep it (it must not
    ///     contain the new passphrase either).
    /// - Returns: the new passphrase's status.
    /// - Throws: ``NotesClientError`` for a wrong `current`; `APIError` (`noPassphrase` before
    ///   one is set, `param` for a hint that gives the new one away, `throttled`);
    ///   ``TresorClientError``.
    @discardableResult
    public func changePassphrase(current: String, new: String, hint: String?? = nil) throws -> NotesPassphraseStatus {
        let request = ChangePassphraseRequest(current: current, new: new, hint: hint ?? nil, removeHint: hint.map { $0 == nil })
        return try mapped { try client.notesChangePassphrase(request) }
    }

    /// Where a passphrase change in flight stands (ask on another connection). The `tresor`
    /// CLI only.
    /// - Returns: whether one runs, and how many of its notes are done.
    /// - Throws: `APIError` (`missingEntitlement` for any caller but the CLI), or
    ///   ``TresorClientError``.
    public func passphraseChangeProgress() throws -> PassphraseChangeProgress { try mapped { try client.notesPassphraseProgress() } }

    /// A new passphrase for notes locked from now on, after the keybag passcode: what to do
    /// when the passphrase is forgotten. Notes locked before keep theirs. The `tresor` CLI only.
    /// - Parameters:
    ///   - passcode: the keybag passcode, or nil when the home has none.
    ///   - new: the new passphrase.
    ///   - hint: its hint, or nil.
    /// - Returns: the new passphrase's status.
    /// - Throws: `APIError` (`authFailed` for a wrong passcode, counted as at unlock;
    ///   `passcodeRequired`; `throttled`; `missingEntitlement` for any caller but the CLI), or
    ///   ``TresorClientError``.
    @discardableResult
    public func resetPassphrase(passcode: String?, new: String, hint: String? = nil) throws -> NotesPassphraseStatus {
        try mapped { try client.notesResetPassphrase(ResetPassphraseRequest(passcode: passcode, new: new, hint: hint)) }
    }

    /// The passphrase's hint, if one is set.
    /// - Returns: the hint, or nil.
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started), or ``TresorClientError``.
    public func hint() throws -> String? { try mapped { try client.notesHint() } }

    /// Replaces (nil: removes) the hint; needs the current passphrase or its session.
    /// - Parameters:
    ///   - hint: the new hint, or nil to remove it.
    ///   - passphrase: the current passphrase; setting a hint needs it typed (it is checked
    ///     against the hint), removing one only the session.
    /// - Returns: the passphrase's status.
    /// - Throws: ``NotesClientError`` without the passphrase, or with a wrong one; `APIError`
    ///   (`param` for a hint that gives the passphrase away, `noPassphrase`);
    ///   ``TresorClientError``.
    @discardableResult
    public func setHint(_ hint: String?, passphrase: String? = nil) throws -> NotesPassphraseStatus {
        try mapped { try client.notesSetHint(SetHintRequest(hint: hint, passphrase: passphrase)) }
    }

    /// Keeps (or stops keeping) the passphrase's key in the keychain (docs/API.md, "Unlock through
    /// the keychain"): while it is kept, an unlocked keybag opens locked notes. The `tresor`
    /// CLI only.
    /// - Parameters:
    ///   - enabled: keep the key (true) or delete it.
    ///   - passphrase: the current passphrase, required to enable.
    ///   - userPresence: whether reading the key needs the passcode; only when enabling.
    /// - Returns: the passphrase's status.
    /// - Throws: ``NotesClientError`` for a wrong passphrase; `APIError` (`param` when enabling
    ///   without it, `interactionNotAllowed` while the keybag is locked, `missingEntitlement`
    ///   for any caller but the CLI); ``TresorClientError``.
    @discardableResult
    public func setKeychainUnlock(_ enabled: Bool, passphrase: String? = nil, userPresence: Bool = false) throws -> NotesPassphraseStatus {
        try mapped {
            try client.notesKeychainUnlock(
                KeychainUnlockRequest(enabled: enabled, passphrase: passphrase, userPresence: enabled ? userPresence : nil))
        }
    }

    /// Imports notes read from another store (`tresor import apple-notes`). A note already
    /// imported is skipped; an invalid one is refused while the others import. The `tresor`
    /// CLI only.
    /// - Parameter notes: the notes, unlocked or still locked with their Apple passphrase; up
    ///   to 64 MiB in all.
    /// - Returns: how many were imported, locked, already there, and each refused with why.
    /// - Throws: `APIError` (`requestTooLarge` over 64 MiB, `missingEntitlement` for any caller
    ///   but the CLI), or ``TresorClientError``.
    public func importNotes(_ notes: [NoteImport]) throws -> ImportReport { try mapped { try client.notesImport(notes) } }

    private func mapped<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as APIError {
            throw NotesClientError(error) ?? error
        }
    }
}

/// The notes failures a client reacts to by asking the user. Everything else arrives as the
/// daemon's `APIError`.
public enum NotesClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The note is locked and no secure session holds its passphrase: ask for it, saying
    /// `LockInfo/explanation`, and try again with it.
    case passphraseRequired(LockInfo)
    /// The passphrase was wrong. `hint` comes from the third consecutive failure; from the
    /// fifth, the next attempt must wait `retryAfterSeconds`.
    case wrongPassphrase(failedAttempts: Int, hint: String?, retryAfterSeconds: Int?)

    /// The daemon's error for these cases (with `lock`, `hint`, `failedAttempts`).
    /// - Parameter error: an error the daemon sent.
    public init?(_ error: APIError) {
        switch error.code {
        case .passphraseRequired:
            guard let lock = error.lock else { return nil }
            self = .passphraseRequired(lock)
        case .wrongPassphrase:
            self = .wrongPassphrase(failedAttempts: error.failedAttempts ?? 0, hint: error.hint, retryAfterSeconds: error.retryAfterSeconds)
        default:
            return nil
        }
    }

    /// The same text the daemon sends.
    public var description: String {
        switch self {
        case .passphraseRequired(let lock): return LockedNoteMessage.passphraseRequired(lock)
        case .wrongPassphrase(let failures, let hint, let wait):
            return LockedNoteMessage.wrongPassphrase(failedAttempts: failures, hint: hint, retryAfterSeconds: wait)
        }
    }

    /// As an `APIError`, for `--json` output.
    public var apiError: APIError {
        switch self {
        case .passphraseRequired(let lock): return APIError(.passphraseRequired, description, lock: lock)
        case .wrongPassphrase(let failures, let hint, let wait):
            return APIError(.wrongPassphrase, description, retryAfterSeconds: wait, hint: hint, failedAttempts: failures)
        }
    }
}
