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
    package func notesList(folder: String? = nil) throws -> [NoteSummary] {
        let response: NotesResponse = try call("POST", Route.notesList, ListNotesRequest(folder: folder))
        return response.notes
    }

    package func notesCreate(_ request: CreateNoteRequest) throws -> NoteSummary {
        try call("POST", Route.notesCreate, request)
    }

    package func notesShow(_ id: String, passphrase: String? = nil) throws -> OpenedNote {
        try call("POST", Route.notesShow, NoteRequest(id: id, passphrase: passphrase))
    }

    package func notesEdit(_ request: EditNoteRequest) throws -> NoteSaveOutcome {
        try call("POST", Route.notesEdit, request)
    }

    package func notesRecentlyDeleted() throws -> [NoteSummary] {
        let response: NotesResponse = try call("POST", Route.notesRecentlyDeleted)
        return response.notes
    }

    package func notesRestore(_ id: String) throws -> NoteSummary {
        try call("POST", Route.notesRestore, NoteRequest(id: id))
    }

    package func notesDeleteForGood(_ id: String) throws {
        try callExpectingNoContent("POST", Route.notesDeleteForGood, NoteRequest(id: id))
    }

    package func notesEmptyRecentlyDeleted() throws -> Int {
        let response: EmptiedResponse = try call("POST", Route.notesEmptyRecentlyDeleted)
        return response.deleted
    }

    package func notesDelete(_ id: String) throws {
        try callExpectingNoContent("POST", Route.notesDelete, NoteRequest(id: id))
    }

    package func notesSearch(_ text: String) throws -> [NoteSummary] {
        let response: NotesResponse = try call("POST", Route.notesSearch, SearchNotesRequest(text: text))
        return response.notes
    }

    package func notesFolders() throws -> [Folder] {
        let response: FoldersResponse = try call("POST", Route.notesFolders)
        return response.folders
    }

    package func notesCreateFolder(_ name: String) throws -> Folder {
        try call("POST", Route.notesCreateFolder, FolderRequest(name: name))
    }

    package func notesDeleteFolder(_ name: String) throws -> [Folder] {
        let response: FoldersResponse = try call("POST", Route.notesDeleteFolder, FolderRequest(name: name))
        return response.folders
    }

    package func notesLock(_ id: String, passphrase: String? = nil) throws -> NoteSummary {
        try call("POST", Route.notesLock, NoteRequest(id: id, passphrase: passphrase))
    }

    package func notesRemoveLock(_ id: String, passphrase: String? = nil) throws -> NoteSummary {
        try call("POST", Route.notesRemoveLock, NoteRequest(id: id, passphrase: passphrase))
    }

    package func notesRewrap(_ id: String, passphrase: String? = nil, currentPassphrase: String? = nil) throws -> NoteSummary {
        try call("POST", Route.notesRewrap, RewrapNoteRequest(id: id, passphrase: passphrase, currentPassphrase: currentPassphrase))
    }

    package func notesLockNow() throws -> LockNowResponse { try call("POST", Route.notesLockNow) }

    package func notesOpenSession(_ request: OpenSessionRequest) throws {
        try callExpectingNoContent("POST", Route.notesSession, request)
    }

    /// Uploads the file at `file` as an attachment, the raw request body read and sent a piece at
    /// a time: a large file is never held whole in this process (nor in the daemon).
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

    package func notesSetExcludedFromBackup(_ id: String, of note: String, excluded: Bool) throws -> AttachmentInfo {
        try call("POST", Route.notesAttachmentBackup, AttachmentBackupRequest(note: note, attachment: id, excluded: excluded))
    }

    /// An attachment's bytes handed to `receive` a piece at a time as they arrive — never held
    /// whole here —, with its name and kind from the answer's headers.
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

    package func notesRemoveAttachment(_ id: String, of note: String, passphrase: String?) throws -> NoteSummary {
        try call("POST", Route.notesRemoveAttachment, RemoveAttachmentRequest(note: note, attachment: id, passphrase: passphrase))
    }

    package func notesPassphraseStatus() throws -> NotesPassphraseStatus { try call("POST", Route.notesPassphraseStatus) }

    package func notesSetPassphrase(_ request: SetPassphraseRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesSetPassphrase, request)
    }

    package func notesChangePassphrase(_ request: ChangePassphraseRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesChangePassphrase, request)
    }

    package func notesPassphraseProgress() throws -> PassphraseChangeProgress { try call("POST", Route.notesPassphraseProgress) }

    package func notesResetPassphrase(_ request: ResetPassphraseRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesResetPassphrase, request)
    }

    package func notesHint() throws -> String? {
        let response: HintResponse = try call("POST", Route.notesHint)
        return response.hint
    }

    package func notesSetHint(_ request: SetHintRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesSetHint, request)
    }

    package func notesKeychainUnlock(_ request: KeychainUnlockRequest) throws -> NotesPassphraseStatus {
        try call("POST", Route.notesKeychainUnlock, request)
    }

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
