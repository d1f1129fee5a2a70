import FoundationEssentials
import TresorModel
import TresorSystem

/// The notes calls an application or a server makes, without blocking a Swift concurrency
/// thread (each runs its blocking twin on a thread of its own). The user's own calls — lock
/// now, import, the passphrase reset, keychain unlock — are the CLI's and stay blocking.
extension Notes {
    /// ``list(folder:)`` without blocking a Swift concurrency thread.
    /// - Parameter folder: a folder's name, or nil for every note.
    /// - Returns: the notes' summaries, pinned first, then most recently modified.
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started…), or ``TresorClientError``.
    public func list(folder: String? = nil) async throws -> [NoteSummary] {
        try await offloaded { try self.list(folder: folder) }
    }

    /// ``create(title:body:folder:pinned:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - title: the title; empty takes the body's first line.
    ///   - body: the body.
    ///   - folder: a folder's name (made when missing), or nil for none.
    ///   - pinned: whether it shows first in lists.
    /// - Returns: the new note, with its id.
    /// - Throws: `APIError` (`param` for a title, body or folder name over its limit…), or
    ///   ``TresorClientError``.
    @discardableResult
    public func create(title: String, body: String, folder: String? = nil, pinned: Bool = false) async throws -> NoteSummary {
        try await offloaded { try self.create(title: title, body: body, folder: folder, pinned: pinned) }
    }

    /// ``show(_:passphrase:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: a locked note's passphrase when no secure session holds it.
    /// - Returns: the note's summary, body and attachments.
    /// - Throws: ``NotesClientError`` for a locked note without its passphrase, or with a wrong
    ///   one; `APIError` (`notFound` for no such note…); ``TresorClientError``.
    public func show(_ id: String, passphrase: String? = nil) async throws -> OpenedNote {
        try await offloaded { try self.show(id, passphrase: passphrase) }
    }

    /// ``delete(_:)`` without blocking a Swift concurrency thread.
    /// - Parameter id: the note, moved to Recently Deleted for 30 days.
    /// - Throws: `APIError` (`notFound` for no such note, `forbidden` for one another account
    ///   shared…), or ``TresorClientError``.
    public func delete(_ id: String) async throws {
        try await offloaded { try self.delete(id) }
    }

    /// ``search(_:)`` without blocking a Swift concurrency thread.
    /// - Parameter text: the words; each must start a word of the note.
    /// - Returns: the notes with more of the words in the title first.
    /// - Throws: `APIError` (`param` for a text without a word…), or ``TresorClientError``.
    public func search(_ text: String) async throws -> [NoteSummary] {
        try await offloaded { try self.search(text) }
    }

    /// ``edit(_:title:body:pinned:folder:passphrase:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - id: the note.
    ///   - title: a new title, or nil.
    ///   - body: a new body, or nil.
    ///   - pinned: pin or unpin, or nil.
    ///   - folder: a folder to move to; `.some(nil)` moves it out of any folder.
    ///   - passphrase: a locked note's passphrase when no secure session holds it.
    /// - Returns: the note as it now is.
    /// - Throws: ``NotesClientError`` for a locked note without its passphrase; `APIError`
    ///   (`notFound` for no such note…); ``TresorClientError``.
    @discardableResult
    public func edit(
        _ id: String, title: String? = nil, body: String? = nil, pinned: Bool? = nil, folder: String?? = nil, passphrase: String? = nil
    ) async throws -> NoteSummary {
        try await offloaded { try self.edit(id, title: title, body: body, pinned: pinned, folder: folder, passphrase: passphrase) }
    }

    /// ``folders()`` without blocking a Swift concurrency thread.
    /// - Returns: every folder, by name, each with its note count.
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started…), or ``TresorClientError``.
    public func folders() async throws -> [Folder] {
        try await offloaded { try self.folders() }
    }

    /// ``lock(_:passphrase:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: the current passphrase, when its secure session is not open.
    /// - Returns: the note, with its `lock`.
    /// - Throws: ``NotesClientError`` without the passphrase, or with a wrong one; `APIError`
    ///   (`noPassphrase`, `wrongLockState`, `attachmentNotLockable`…); ``TresorClientError``.
    @discardableResult
    public func lock(_ id: String, passphrase: String? = nil) async throws -> NoteSummary {
        try await offloaded { try self.lock(id, passphrase: passphrase) }
    }

    /// ``removeLock(_:passphrase:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - id: the note.
    ///   - passphrase: its passphrase, when no secure session holds it.
    /// - Returns: the note, without `lock`.
    /// - Throws: ``NotesClientError`` without the passphrase, or with a wrong one; `APIError`
    ///   (`wrongLockState` for a note that is not locked…); ``TresorClientError``.
    @discardableResult
    public func removeLock(_ id: String, passphrase: String? = nil) async throws -> NoteSummary {
        try await offloaded { try self.removeLock(id, passphrase: passphrase) }
    }

    /// ``openSession(note:passphrase:passcode:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - note: a note whose passphrase to open, or nil for the current passphrase.
    ///   - passphrase: the passphrase, or nil.
    ///   - passcode: the keybag passcode, for the key kept in the keychain with user presence
    ///     (the `tresor` CLI only).
    /// - Throws: ``NotesClientError`` for a passphrase needed or wrong; `APIError` (`param`,
    ///   `authFailed` for a wrong passcode…); ``TresorClientError``.
    public func openSession(note: String? = nil, passphrase: String? = nil, passcode: String? = nil) async throws {
        try await offloaded { try self.openSession(note: note, passphrase: passphrase, passcode: passcode) }
    }

    /// ``addAttachment(to:kind:name:file:excludedFromBackup:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - note: the note's id; a locked one's session must be open.
    ///   - kind: the attachment's kind.
    ///   - name: its name.
    ///   - file: the file to send, a piece at a time.
    ///   - excludedFromBackup: leave it out of backups.
    /// - Returns: the attachment.
    /// - Throws: `APIError` (`notFound`, `attachmentNotLockable`, `requestTooLarge`…) or
    ///   ``NotesClientError`` as the daemon answers; ``TresorClientError/fileChanged(path:)``
    ///   for a file that cannot be read whole.
    @discardableResult
    public func addAttachment(to note: String, kind: AttachmentKind, name: String, file: URL, excludedFromBackup: Bool = false) async throws
        -> AttachmentInfo
    {
        try await offloaded { try self.addAttachment(to: note, kind: kind, name: name, file: file, excludedFromBackup: excludedFromBackup) }
    }

    /// ``attachment(_:of:passphrase:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - id: the attachment's id.
    ///   - note: its note's id.
    ///   - passphrase: a locked note's passphrase, when its session is not open.
    /// - Returns: the attachment's name, kind and bytes.
    /// - Throws: ``NotesClientError`` for a locked note without its passphrase; `APIError`
    ///   (`notFound`, `decode` for a damaged attachment…); ``TresorClientError``.
    public func attachment(_ id: String, of note: String, passphrase: String? = nil) async throws -> AttachmentData {
        try await offloaded { try self.attachment(id, of: note, passphrase: passphrase) }
    }

    /// ``readAttachment(_:of:passphrase:receive:)`` without blocking a Swift concurrency thread;
    /// `receive` is called on the thread that reads the answer.
    /// - Parameters:
    ///   - id: the attachment's id.
    ///   - note: its note's id.
    ///   - passphrase: a locked note's passphrase, when its session is not open.
    ///   - receive: takes each piece, in order. What it throws ends the transfer and is thrown.
    /// - Returns: the attachment's name and kind, and how many bytes came.
    /// - Throws: `APIError` or ``NotesClientError`` as the daemon answers (before any piece);
    ///   ``TresorClientError/protocolError(_:)`` when the answer ends short; what `receive` throws.
    @discardableResult
    public func readAttachment(
        _ id: String, of note: String, passphrase: String? = nil, receive: @escaping @Sendable (Data) throws -> Void
    ) async throws -> ReceivedAttachment {
        try await offloaded { try self.readAttachment(id, of: note, passphrase: passphrase, receive: receive) }
    }

    /// ``passphraseStatus()`` without blocking a Swift concurrency thread.
    /// - Returns: whether a passphrase is set, its hint's presence, and the wrong-entry counter.
    /// - Throws: `APIError` (`interactionNotAllowed` before the first unlock since the daemon
    ///   started…), or ``TresorClientError``.
    public func passphraseStatus() async throws -> NotesPassphraseStatus {
        try await offloaded { try self.passphraseStatus() }
    }
}
