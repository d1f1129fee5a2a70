import Foundation
import Synchronization
import TresorNotesDomain

/// An attachment being added while its bytes arrive — the daemon's upload route, or
/// ``NotesStore/addAttachment(to:kind:name:data:passphrase:)`` with all of them at once.
///
/// Made by ``NotesStore/beginAttachment(to:kind:name:passphrase:)``. Its chunks are sealed and
/// written as the bytes come, so the store holds about one chunk (1 MiB) of it in memory however
/// large it is. ``finish()`` adds it to the note; ``abandon()`` — or dropping it unfinished,
/// or any error — removes what was written, and the note is as it was.
///
/// Calls may come from different threads one after another (an upload is appended to from
/// whichever thread reads its next piece); a lock keeps them in order.
public final class AttachmentUpload: Sendable {
    let store: NotesStore
    let noteID: String
    /// The note's wrapped key when the upload began: if the note was locked or unlocked since,
    /// the chunks are sealed for the wrong state and `finish()` refuses them.
    let wrappedKey: Data?
    let isLocked: Bool
    /// The attachment's id.
    public let id: String
    let kind: AttachmentKind
    let name: String
    let excludedFromBackup: Bool
    /// When it was added where it was made — a sync device's date, or the server's for one
    /// fetched — no later than now; nil: now.
    let created: Date?
    /// An attachment fetched from the sync server (docs/SYNC.md, "Attachments"): added as
    /// synced, its note not put in the outbox.
    let isSynced: Bool
    /// A synced locked note's attachment that arrives as its chunks sealed under the note key
    /// (the web client's format): written as they are, opened only with the note's passphrase.
    let isPresealed: Bool
    /// A synced attachment that arrives sealed under the key of a note whose lock was removed
    /// here: each chunk is opened as it completes and written as plaintext.
    private let opener: Mutex<SealedChunkOpener?>
    /// Nil once finished, abandoned or failed.
    private let writer: Mutex<AttachmentFile.Writer?>

    init(
        store: NotesStore, noteID: String, wrappedKey: Data?, isLocked: Bool, id: String, kind: AttachmentKind, name: String,
        excludedFromBackup: Bool, created: Date? = nil, isSynced: Bool = false, isPresealed: Bool = false,
        opener: SealedChunkOpener? = nil, writer: sending AttachmentFile.Writer
    ) {
        self.created = created
        self.opener = Mutex(opener)
        self.isSynced = isSynced
        self.isPresealed = isPresealed
        self.store = store
        self.noteID = noteID
        self.wrappedKey = wrappedKey
        self.isLocked = isLocked
        self.id = id
        self.kind = kind
        self.name = name
        self.excludedFromBackup = excludedFromBackup
        self.writer = Mutex(writer)
    }

    /// How many bytes to hand to ``append(_:)`` at a time when they arrive in small pieces: one
    /// chunk, so each call seals and writes about one.
    public static let preferredAppendBytes = AttachmentFile.chunkByteCount

    /// Bytes appended so far: as they came, sealed chunks too.
    public var byteCount: Int {
        opener.withLock { $0?.receivedByteCount } ?? writer.withLock { $0?.byteCount ?? 0 }
    }

    /// Whether the bytes it takes are an attachment's chunks sealed under its note key, each
    /// ``LockedNoteShape/chunkOverheadByteCount`` longer than its plaintext.
    public var takesSealedChunks: Bool {
        isPresealed || opensSealedChunks
    }

    /// Whether it opens the sealed chunks it takes (into a note whose lock was removed here).
    var opensSealedChunks: Bool {
        opener.withLock { $0 != nil }
    }

    /// The largest attachment this upload takes (the store's ``NotesSettings/attachmentByteLimit``).
    public var byteLimit: Int { store.settings.attachmentByteLimit }

    /// Seals and writes the whole chunks `bytes` completes. An attachment that grows past
    /// ``NoteLimits/attachmentBytes`` (the store's ``NotesSettings/attachmentByteLimit``) is
    /// refused and abandoned, as is one whose write fails.
    public func append(_ bytes: Data) throws {
        guard let opened = try openedChunks(bytes) else { return try write(bytes) }
        for chunk in opened { try write(chunk) }
    }

    /// The plaintext chunks `bytes` completes when they arrive sealed; nil when they do not.
    private func openedChunks(_ bytes: Data) throws -> [Data]? {
        try opener.withLock { opener in
            guard opener != nil else { return nil }
            do {
                return try opener!.open(bytes)
            } catch {
                abandon()
                throw error
            }
        }
    }

    private func write(_ bytes: Data) throws {
        try writer.withLock { writer in
            guard let current = writer else { throw Self.ended }
            let plaintextLimit = store.settings.attachmentByteLimit
            let limit =
                isPresealed
                ? plaintextLimit + LockedNoteShape.chunkCount(plaintextByteCount: plaintextLimit) * LockedNoteShape.chunkOverheadByteCount
                : plaintextLimit
            guard current.byteCount + bytes.count <= limit else {
                current.abandon()
                writer = nil
                throw NotesError.invalid("attachment \"\(name)\" is larger than \(plaintextLimit) bytes")
            }
            do {
                try current.append(bytes)
            } catch {
                current.abandon()
                writer = nil
                throw error
            }
        }
    }

    /// Seals the last chunk, makes the file durable and adds the attachment to the note. Fails —
    /// leaving nothing — if the note was locked or unlocked since the upload began.
    public func finish() throws -> AttachmentInfo {
        let (file, byteCount) = try writer.withLock { writer -> (String, Int) in
            guard let current = writer else { throw Self.ended }
            writer = nil
            do {
                try opener.withLock { try $0?.finish() }
                let file = try current.finish()
                guard isPresealed else { return (file, current.byteCount) }
                // Sealed chunks: each 28 bytes more than its plaintext, as many as that needs.
                let plaintext = current.byteCount - current.chunkCount * LockedNoteShape.chunkOverheadByteCount
                guard plaintext >= 0, LockedNoteShape.chunkCount(plaintextByteCount: plaintext) == current.chunkCount else {
                    AttachmentFile.remove(file, in: store.attachmentsFolder)
                    throw NotesError.invalid("attachment \(id) is not whole sealed chunks")
                }
                return (file, plaintext)
            } catch {
                current.abandon()
                throw error
            }
        }
        return try store.insertAttachment(self, file: file, byteCount: byteCount)
    }

    /// Removes what was written. Nothing happens if the upload was already finished.
    public func abandon() {
        writer.withLock { writer in
            writer?.abandon()
            writer = nil
        }
    }

    private static var ended: NotesError {
        NotesError.invalid("this attachment upload was already finished or abandoned")
    }
}
