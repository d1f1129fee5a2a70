import FoundationEssentials
import TresorModel
import TresorProtocol

#if canImport(Glibc)
import Glibc
#endif

// The notes routes (`/v1/notes/…`), one method each. Errors are `APIError`s as the daemon
// sent them; the ``Notes`` facade turns the passphrase ones into ``NotesClientError``.
// Only the `tresor` CLI may call these routes.
extension TresorClient {
    /// `notes/list`: every note of the caller's account (or one folder's), pinned first, then
    /// most recently modified.
    /// - Parameter folder: a folder's name, or nil for every note.
    /// - Returns: the notes' summaries.
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started, `notInitialized`, `missingEntitlement`).
    package func notesList(folder: String? = nil) throws -> [NoteSummary] {
        let response: NotesResponse = try call("POST", Route.notesList, ListNotesRequest(folder: folder))
        return response.notes
    }

    /// `notes/create`: a new, unlocked note.
    /// - Parameter request: its title, body, folder (made when missing) and whether it is pinned.
    /// - Returns: the new note, with its id.
    /// - Throws: `APIError` (`param` for a field over its limit, `interactionNotAllowed`).
    package func notesCreate(_ request: CreateNoteRequest) throws -> NoteSummary {
        try call("POST", Route.notesCreate, request)
    }

    /// `notes/show`: a note with its body and attachments, also one in Recently Deleted.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: a locked note's passphrase when no secure session holds it.
    /// - Returns: the note's summary, body and attachments.
    /// - Throws: `APIError` (`notFound`, `passphraseRequired`, `wrongPassphrase`, `throttled`).
    package func notesShow(_ id: String, passphrase: String? = nil) throws -> OpenedNote {
        try call("POST", Route.notesShow, NoteRequest(id: id, passphrase: passphrase))
    }

    /// `notes/edit`: changes what the request gives, merged with what changed since its `base`.
    /// - Parameter request: the note, its changes and the version they were made from.
    /// - Returns: saved, merged or kept as a conflict copy.
    /// - Throws: `APIError` (`notFound`, `passphraseRequired`, `forbidden` for pinning or
    ///   moving a note another account shared, `param` for both a folder and `removeFromFolder`).
    package func notesEdit(_ request: EditNoteRequest) throws -> NoteSaveOutcome {
        try call("POST", Route.notesEdit, request)
    }

    /// `notes/recently-deleted`: the notes in Recently Deleted, most recently deleted first.
    /// - Returns: their summaries (`deleted` set).
    /// - Throws: `APIError` (`interactionNotAllowed`, `missingEntitlement`).
    package func notesRecentlyDeleted() throws -> [NoteSummary] {
        let response: NotesResponse = try call("POST", Route.notesRecentlyDeleted)
        return response.notes
    }

    /// `notes/recently-deleted/restore`: brings a note back from Recently Deleted.
    /// - Parameter id: the note.
    /// - Returns: the note as it now is.
    /// - Throws: `APIError` (`notFound`, `forbidden` for a note another account shared).
    package func notesRestore(_ id: String) throws -> NoteSummary {
        try call("POST", Route.notesRestore, NoteRequest(id: id))
    }

    /// `notes/recently-deleted/delete`: deletes a note in Recently Deleted for good.
    /// - Parameter id: the note.
    /// - Throws: `APIError` (`param` for a note not in Recently Deleted, `notFound`, `forbidden`).
    package func notesDeleteForGood(_ id: String) throws {
        try callExpectingNoContent("POST", Route.notesDeleteForGood, NoteRequest(id: id))
    }

    /// `notes/recently-deleted/empty`: deletes every note in Recently Deleted for good.
    /// - Returns: how many were deleted.
    /// - Throws: `APIError` (`interactionNotAllowed`, `missingEntitlement`).
    package func notesEmptyRecentlyDeleted() throws -> Int {
        let response: EmptiedResponse = try call("POST", Route.notesEmptyRecentlyDeleted)
        return response.deleted
    }

    /// `notes/delete`: moves a note, with its attachments, to Recently Deleted for 30 days.
    /// - Parameter id: the note.
    /// - Throws: `APIError` (`notFound`, `forbidden` for a note another account shared).
    package func notesDelete(_ id: String) throws {
        try callExpectingNoContent("POST", Route.notesDelete, NoteRequest(id: id))
    }

    /// `notes/search`: notes whose title (or unlocked body) holds every word of `text`.
    /// - Parameter text: the words.
    /// - Returns: the notes with more of the words in the title first, then most recently modified.
    /// - Throws: `APIError` (`param` for a text without a word, `interactionNotAllowed`).
    package func notesSearch(_ text: String) throws -> [NoteSummary] {
        let response: NotesResponse = try call("POST", Route.notesSearch, SearchNotesRequest(text: text))
        return response.notes
    }

    /// `notes/folders`: every folder of the caller's account.
    /// - Returns: the folders, by name, each with its note count.
    /// - Throws: `APIError` (`interactionNotAllowed`, `missingEntitlement`).
    package func notesFolders() throws -> [Folder] {
        let response: FoldersResponse = try call("POST", Route.notesFolders)
        return response.folders
    }

    /// `notes/folders/create`: a folder, made unless one of that name exists.
    /// - Parameter name: the folder's name.
    /// - Returns: the folder.
    /// - Throws: `APIError` (`param` for a bad name).
    package func notesCreateFolder(_ name: String) throws -> Folder {
        try call("POST", Route.notesCreateFolder, FolderRequest(name: name))
    }

    /// `notes/folders/delete`: deletes an empty folder.
    /// - Parameter name: the folder's name.
    /// - Returns: the folders left.
    /// - Throws: `APIError` (`notFound` for no such folder, `param` for one holding notes).
    package func notesDeleteFolder(_ name: String) throws -> [Folder] {
        let response: FoldersResponse = try call("POST", Route.notesDeleteFolder, FolderRequest(name: name))
        return response.folders
    }

    /// `notes/lock`: locks a note with the current passphrase.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: the current passphrase, when its secure session is not open.
    /// - Returns: the note, with its `lock`.
    /// - Throws: `APIError` (`passphraseRequired`, `wrongPassphrase`, `noPassphrase`,
    ///   `wrongLockState`, `attachmentNotLockable`, `forbidden`).
    package func notesLock(_ id: String, passphrase: String? = nil) throws -> NoteSummary {
        try call("POST", Route.notesLock, NoteRequest(id: id, passphrase: passphrase))
    }

    /// `notes/remove-lock`: removes a note's lock.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: its passphrase, when no secure session holds it.
    /// - Returns: the note, without `lock`.
    /// - Throws: `APIError` (`passphraseRequired`, `wrongPassphrase`, `wrongLockState` for a
    ///   note that is not locked, `forbidden`).
    package func notesRemoveLock(_ id: String, passphrase: String? = nil) throws -> NoteSummary {
        try call("POST", Route.notesRemoveLock, NoteRequest(id: id, passphrase: passphrase))
    }

    /// `notes/rewrap`: moves a note locked with an earlier passphrase to the current one.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: the earlier passphrase it is locked with, when its session is not open.
    ///   - currentPassphrase: the current passphrase, when its session is not open.
    /// - Returns: the note, now under the current passphrase.
    /// - Throws: `APIError` (`passphraseRequired`, `wrongPassphrase`, `wrongLockState` for a
    ///   note not locked or already under the current passphrase).
    package func notesRewrap(_ id: String, passphrase: String? = nil, currentPassphrase: String? = nil) throws -> NoteSummary {
        try call("POST", Route.notesRewrap, RewrapNoteRequest(id: id, passphrase: passphrase, currentPassphrase: currentPassphrase))
    }

    /// `notes/lock-now`: ends every secure session (the `tresor` CLI only).
    /// - Returns: how many sessions ended.
    /// - Throws: `APIError` (`missingEntitlement` for any caller but the CLI).
    package func notesLockNow() throws -> LockNowResponse { try call("POST", Route.notesLockNow) }

    /// `notes/session`: opens a secure session without reading anything.
    /// - Parameter request: the note (or none, for the current passphrase), and the passphrase
    ///   or the passcode for the key kept in the keychain.
    /// - Throws: `APIError` (`param` for both a passphrase and a passcode or none of the three,
    ///   `passphraseRequired`, `wrongPassphrase`, `authFailed` for a wrong passcode, `notFound`
    ///   when no key is kept in the keychain).
    package func notesOpenSession(_ request: OpenSessionRequest) throws {
        try callExpectingNoContent("POST", Route.notesSession, request)
    }

    /// Uploads the file at `file` as an attachment, the raw request body read and sent a piece at
    /// a time: a large file is never held whole in this process (nor in the daemon).
    /// - Parameters:
    ///   - note: the note's id; a locked one's secure session must be open.
    ///   - kind: the attachment's kind.
    ///   - name: its name, sent percent-encoded.
    ///   - file: the file to send.
    ///   - excludedFromBackup: leave it out of backups.
    /// - Returns: the attachment.
    /// - Throws: ``TresorClientError/fileChanged(path:)`` for a file that cannot be opened, is
    ///   not a regular file or changes while it is sent; `APIError` (`requestTooLarge` for a
    ///   file over the limit, before anything is sent; `notFound`, `passphraseRequired`,
    ///   `attachmentNotLockable`, `param` for a bad name).
    package func notesAddAttachment(
        note: String, kind: AttachmentKind, name: String, file: URL, excludedFromBackup: Bool = false
    ) throws -> AttachmentInfo {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TresorClientError.fileChanged(path: file.path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw TresorClientError.fileChanged(path: file.path) }
        guard Int(info.st_size) <= NotesWire.maximumAttachmentRequestBytes else {
            throw APIError(.requestTooLarge, "the attachment is larger than \(NotesWire.maximumAttachmentRequestBytes) bytes")
        }
        let response = try callRaw(
            "POST", Route.notesAddAttachment, file: fd, length: Int(info.st_size), fileName: file.path,
            contentType: "application/octet-stream",
            headers: [(NotesWire.noteHeader, note), (NotesWire.kindHeader, kind.rawValue), (NotesWire.nameHeader, NotesWire.encodeHeader(name))]
                + (excludedFromBackup ? [(NotesWire.excludeFromBackupHeader, "1")] : []))
        return try decoded(response)
    }

    /// `notes/attachments/backup`: leaves an attachment out of backups, or puts it back in.
    /// - Parameters:
    ///   - id: the attachment's id.
    ///   - note: its note's id.
    ///   - excluded: whether backups leave it out.
    /// - Returns: the attachment as it now is.
    /// - Throws: `APIError` (`notFound` for no such attachment, `forbidden` for a note another
    ///   account shared).
    package func notesSetExcludedFromBackup(_ id: String, of note: String, excluded: Bool) throws -> AttachmentInfo {
        try call("POST", Route.notesAttachmentBackup, AttachmentBackupRequest(note: note, attachment: id, excluded: excluded))
    }

    /// An attachment's bytes handed to `receive` a piece at a time as they arrive — never held
    /// whole here —, with its name and kind from the answer's headers.
    /// - Parameters:
    ///   - id: the attachment's id.
    ///   - note: its note's id.
    ///   - passphrase: a locked note's passphrase, when its session is not open.
    ///   - receive: takes each piece, in order; what it throws ends the transfer and is thrown.
    /// - Returns: the attachment's id, name and kind, and how many bytes came.
    /// - Throws: `APIError` before any piece (`notFound`, `passphraseRequired`, `decode` for a
    ///   damaged attachment); ``TresorClientError/protocolError(_:)`` for an answer without its
    ///   name and kind, or that ends short; what `receive` throws.
    package func notesAttachment(
        _ id: String, of note: String, passphrase: String? = nil, receive: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> ReceivedAttachment {
        let body = try APICoding.encoder.encode(AttachmentRequest(note: note, attachment: id, passphrase: passphrase))
        var byteCount = 0
        let response = try callRaw("POST", Route.notesGetAttachment, body: body) { piece in
            byteCount += piece.count
            try receive(piece)
        }
        guard let name = response.headers[NotesWire.nameHeader.lowercased()].flatMap(NotesWire.decodeHeader),
            let kind = response.headers[NotesWire.kindHeader.lowercased()].flatMap(AttachmentKind.init(rawValue:))
        else { throw TresorClientError.protocolError("attachment answer without its name and kind headers") }
        return ReceivedAttachment(id: id, name: name, kind: kind, byteCount: byteCount)
    }

    /// `notes/attachments/remove`: removes an attachment; its file is overwritten.
    /// - Parameters:
    ///   - id: the attachment's id.
    ///   - note: its note's id.
    ///   - passphrase: a locked note's passphrase, when its session is not open.
    /// - Returns: the note as it now is.
    /// - Throws: `APIError` (`notFound`, `passphraseRequired`, `forbidden`).
    package func notesRemoveAttachment(_ id: String, of note: String, passphrase: String?) throws -> NoteSummary {
        try call("POST", Route.notesRemoveAttachment, RemoveAttachmentRequest(note: note, attachment: id, passphrase: passphrase))
    }

    /// `notes/passphrase/status`: whether a passphrase is set, its hint's presence, and the
    /// wrong-entry counter.
    /// - Returns: the status, never the hint itself.
    /// - Throws: `APIError` (`interactionNotAllowed`, `missingEntitlement`).
    package func notesPassphraseStatus() throws -> NotesPassphraseStatus { try call("POST", Route.notesPassphraseStatus) }

    /// `notes/passphrase/set`: the first passphrase, which opens its session.
    /// - Parameter request: the passphrase and its hint.
    /// - Returns: the passphrase's status.
    /// - Throws: `APIError` (`passphraseAlreadySet`, `param` for a hint that gives it away).
    package func notesSetPassphrase(_ request: SetPassphraseRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesSetPassphrase, request)
    }

    /// `notes/passphrase/change`: re-wraps every note locked with the current passphrase under
    /// a new one. Takes as long as there are such notes: ``notesPassphraseProgress()``, asked on
    /// another connection, follows it.
    /// - Parameter request: the current passphrase (typed), the new one, and the hint.
    /// - Returns: the new passphrase's status.
    /// - Throws: `APIError` (`wrongPassphrase`, `throttled`, `noPassphrase`, `param`).
    package func notesChangePassphrase(_ request: ChangePassphraseRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesChangePassphrase, request)
    }

    /// `notes/passphrase/progress`: where a passphrase change in flight stands (the `tresor`
    /// CLI only).
    /// - Returns: whether one runs, and how many of its notes are done.
    /// - Throws: `APIError` (`missingEntitlement` for any caller but the CLI).
    package func notesPassphraseProgress() throws -> PassphraseChangeProgress { try call("POST", Route.notesPassphraseProgress) }

    /// `notes/passphrase/reset`: a new passphrase for notes locked from now on, after the
    /// keybag passcode (the `tresor` CLI only).
    /// - Parameter request: the passcode, the new passphrase and its hint.
    /// - Returns: the new passphrase's status.
    /// - Throws: `APIError` (`authFailed` for a wrong passcode, counted as at unlock;
    ///   `passcodeRequired`; `throttled`; `missingEntitlement`).
    package func notesResetPassphrase(_ request: ResetPassphraseRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesResetPassphrase, request)
    }

    /// `notes/passphrase/hint`: the passphrase's hint.
    /// - Returns: the hint, or nil when none is set.
    /// - Throws: `APIError` (`interactionNotAllowed`, `missingEntitlement`).
    package func notesHint() throws -> String? {
        let response: HintResponse = try call("POST", Route.notesHint)
        return response.hint
    }

    /// `notes/passphrase/hint/set`: replaces or removes the hint.
    /// - Parameter request: the new hint (nil removes it) and the current passphrase, needed
    ///   typed to set one.
    /// - Returns: the passphrase's status.
    /// - Throws: `APIError` (`passphraseRequired`, `wrongPassphrase`, `param` for a hint that
    ///   gives the passphrase away).
    package func notesSetHint(_ request: SetHintRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesSetHint, request)
    }

    /// `notes/passphrase/keychain`: keeps (or stops keeping) the passphrase's key in the login
    /// keychain (the `tresor` CLI only).
    /// - Parameter request: on or off, the current passphrase to turn it on, and user presence.
    /// - Returns: the passphrase's status.
    /// - Throws: `APIError` (`param` to turn it on without the passphrase, `wrongPassphrase`,
    ///   `interactionNotAllowed` while the keybag is locked, `missingEntitlement`).
    package func notesKeychainUnlock(_ request: KeychainUnlockRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesKeychainUnlock, request)
    }

    /// `notes/import`: imports notes read from another store (the `tresor` CLI only).
    /// - Parameter notes: the notes, up to 64 MiB in all.
    /// - Returns: how many were imported, locked, already there, and those refused with why.
    /// - Throws: `APIError` (`requestTooLarge`, `missingEntitlement`).
    package func notesImport(_ notes: [NoteImport]) throws -> ImportReport {
        try call("POST", Route.notesImport, ImportNotesRequest(notes: notes))
    }
}

/// An attachment read back: its bytes, with the name and kind it was added with.
public struct AttachmentData: Sendable, Equatable {
    /// The attachment's id within its note.
    public var id: String
    /// The file name it was added with.
    public var name: String
    /// What it is (image, document…).
    public var kind: AttachmentKind
    /// Its bytes.
    public var data: Data
}

/// An attachment read back a piece at a time (`Notes.readAttachment(_:of:passphrase:receive:)`):
/// the name and kind it was added with, and how many bytes came.
public struct ReceivedAttachment: Sendable, Equatable {
    /// The attachment's id within its note.
    public var id: String
    /// The file name it was added with.
    public var name: String
    /// What it is (image, document…).
    public var kind: AttachmentKind
    /// How many bytes came: all of them.
    public var byteCount: Int
}
