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
    public init(paths: TresorPaths = TresorPaths()) throws {
        client = try TresorClient.connect(paths: paths)
    }

    /// Uses a connection made already (another home, a test's daemon).
    /// - Parameter client: The connection to use.
    public init(client: TresorClient) {
        self.client = client
    }

    // MARK: Notes and folders

    /// Every note (or one folder's), pinned first, then most recently modified.
    public func list(folder: String? = nil) throws -> [NoteSummary] { try mapped { try client.notesList(folder: folder) } }

    /// A new, unlocked note. An empty title takes the body's first line.
    @discardableResult
    public func create(title: String, body: String, folder: String? = nil, pinned: Bool = false) throws -> NoteSummary {
        try mapped { try client.notesCreate(CreateNoteRequest(title: title, body: body, folder: folder, pinned: pinned)) }
    }

    /// A note with its body and attachments; a locked one needs `passphrase` or an open session.
    public func show(_ id: String, passphrase: String? = nil) throws -> OpenedNote {
        try mapped { try client.notesShow(id, passphrase: passphrase) }
    }

    /// Changes what is given. `folder: .some(nil)` moves the note out of any folder.
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
    /// - Throws: ``NotesClientError`` or ``TresorClientError``.
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
    /// - Throws: ``NotesClientError`` or ``TresorClientError``.
    public func delete(_ id: String) throws { try mapped { try client.notesDelete(id) } }

    /// The notes in Recently Deleted, most recently deleted first.
    /// - Returns: their summaries (`deleted` set).
    /// - Throws: ``NotesClientError`` or ``TresorClientError``.
    public func recentlyDeleted() throws -> [NoteSummary] { try mapped { try client.notesRecentlyDeleted() } }

    /// Brings a note back from Recently Deleted.
    /// - Parameter id: the note.
    /// - Returns: the note as it now is.
    /// - Throws: ``NotesClientError`` or ``TresorClientError``.
    @discardableResult
    public func restore(_ id: String) throws -> NoteSummary { try mapped { try client.notesRestore(id) } }

    /// Deletes a note in Recently Deleted for good: nothing of it stays in the home.
    /// - Parameter id: the note.
    /// - Throws: ``NotesClientError`` or ``TresorClientError``.
    public func deleteForGood(_ id: String) throws { try mapped { try client.notesDeleteForGood(id) } }

    /// Deletes every note in Recently Deleted for good.
    /// - Returns: how many were deleted.
    /// - Throws: ``NotesClientError`` or ``TresorClientError``.
    @discardableResult
    public func emptyRecentlyDeleted() throws -> Int { try mapped { try client.notesEmptyRecentlyDeleted() } }

    /// Notes whose title (or unlocked body) holds every word of `text`.
    public func search(_ text: String) throws -> [NoteSummary] { try mapped { try client.notesSearch(text) } }

    /// Every folder, by name.
    public func folders() throws -> [Folder] { try mapped { try client.notesFolders() } }

    /// Creates a folder, or returns the one of that name.
    @discardableResult
    public func createFolder(_ name: String) throws -> Folder { try mapped { try client.notesCreateFolder(name) } }

    /// Deletes an empty folder; returns the folders left.
    @discardableResult
    public func deleteFolder(_ name: String) throws -> [Folder] { try mapped { try client.notesDeleteFolder(name) } }

    // MARK: Locked notes and sessions

    /// Locks a note with the current passphrase (or its open session).
    @discardableResult
    public func lock(_ id: String, passphrase: String? = nil) throws -> NoteSummary {
        try mapped { try client.notesLock(id, passphrase: passphrase) }
    }

    /// Removes a note's lock (`tresor note unlock`).
    @discardableResult
    public func removeLock(_ id: String, passphrase: String? = nil) throws -> NoteSummary {
        try mapped { try client.notesRemoveLock(id, passphrase: passphrase) }
    }

    /// Re-wraps a note locked with an earlier passphrase under the current one.
    @discardableResult
    public func rewrap(_ id: String, passphrase: String? = nil, currentPassphrase: String? = nil) throws -> NoteSummary {
        try mapped { try client.notesRewrap(id, passphrase: passphrase, currentPassphrase: currentPassphrase) }
    }

    /// Lock Now: ends every secure session; returns how many were open.
    @discardableResult
    public func lockNow() throws -> Int { try mapped { try client.notesLockNow().endedSessions } }

    /// Opens the secure session of note `note`'s passphrase (or the current one), with
    /// `passphrase`, or with `passcode` through the key kept in the keychain (user presence).
    /// With neither, checks that a session (or keychain unlock) already opens `note`.
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
    public func passphraseStatus() throws -> NotesPassphraseStatus { try mapped { try client.notesPassphraseStatus() } }

    /// Sets the first notes passphrase (and its hint).
    @discardableResult
    public func setPassphrase(_ passphrase: String, hint: String? = nil) throws -> NotesPassphraseStatus {
        try mapped { try client.notesSetPassphrase(SetPassphraseRequest(passphrase: passphrase, hint: hint)) }
    }

    /// Changes the passphrase; `current` must be typed. `hint: .some(nil)` removes the hint.
    @discardableResult
    public func changePassphrase(current: String, new: String, hint: String?? = nil) throws -> NotesPassphraseStatus {
        let request = ChangePassphraseRequest(current: current, new: new, hint: hint ?? nil, removeHint: hint.map { $0 == nil })
        return try mapped { try client.notesChangePassphrase(request) }
    }

    /// Where a passphrase change in flight stands (ask on another connection).
    public func passphraseChangeProgress() throws -> PassphraseChangeProgress { try mapped { try client.notesPassphraseProgress() } }

    /// A new passphrase for notes locked from now on, after the keybag passcode.
    @discardableResult
    public func resetPassphrase(passcode: String?, new: String, hint: String? = nil) throws -> NotesPassphraseStatus {
        try mapped { try client.notesResetPassphrase(ResetPassphraseRequest(passcode: passcode, new: new, hint: hint)) }
    }

    /// The passphrase's hint, if one is set.
    public func hint() throws -> String? { try mapped { try client.notesHint() } }

    /// Replaces (nil: removes) the hint; needs the current passphrase or its session.
    @discardableResult
    public func setHint(_ hint: String?, passphrase: String? = nil) throws -> NotesPassphraseStatus {
        try mapped { try client.notesSetHint(SetHintRequest(hint: hint, passphrase: passphrase)) }
    }

    /// Keeps (or stops keeping) the passphrase's key in the keychain (docs/API.md, "Unlock through
    /// the keychain").
    @discardableResult
    public func setKeychainUnlock(_ enabled: Bool, passphrase: String? = nil, userPresence: Bool = false) throws -> NotesPassphraseStatus {
        try mapped {
            try client.notesKeychainUnlock(
                KeychainUnlockRequest(enabled: enabled, passphrase: passphrase, userPresence: enabled ? userPresence : nil))
        }
    }

    /// Imports notes read from another store.
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
