import Crypto
import Foundation
import GRDB
import Synchronization
import TresorNotesDomain

// Attachments: add, read, remove. A locked note's attachments are sealed under its note key.
extension NotesStore {
    /// Adds an attachment. To a locked note only lockable kinds may be added, and its
    /// passphrase (or open session) is needed.
    @discardableResult
    public func addAttachment(
        to noteID: String, kind: AttachmentKind, name: String, data: Data, passphrase: Passphrase? = nil
    ) throws -> AttachmentInfo {
        let upload = try beginAttachment(to: noteID, kind: kind, name: name, passphrase: passphrase)
        try upload.append(data)
        return try upload.finish()
    }

    /// Starts adding an attachment whose bytes arrive piece by piece (an upload): everything
    /// ``addAttachment(to:kind:name:data:passphrase:)`` checks is checked here, before any byte is
    /// read; ``AttachmentUpload/append(_:)`` seals and writes the bytes as they come and
    /// ``AttachmentUpload/finish()`` adds the attachment to the note.
    /// - Parameters:
    ///   - noteID: the note the attachment is added to.
    ///   - kind: the attachment's kind.
    ///   - name: its name.
    ///   - passphrase: a locked note's passphrase, when its session is not open.
    ///   - excludedFromBackup: leave it out of backups (it can be changed later with
    ///     ``setExcludedFromBackup(_:of:excluded:)``).
    ///   - id: the attachment's id, when it has one already (a lowercase UUID: the web store's
    ///     upload of an attachment a sync device sent); nil for a new one.
    ///   - created: when the sync device that sent it added it, which dates it and its note (never
    ///     later than now, nor the note earlier than it was); nil: now.
    /// - Returns: the upload to hand the bytes to.
    /// - Throws: ``NotesError`` for an invalid name or id, a note in Recently Deleted (`invalid`), a
    ///   kind a locked note does not take, a missing passphrase or note.
    public func beginAttachment(
        to noteID: String, kind: AttachmentKind, name: String, passphrase: Passphrase? = nil, excludedFromBackup: Bool = false,
        id: String? = nil, created: Date? = nil
    ) throws -> AttachmentUpload {
        try beginAttachment(
            to: noteID, kind: kind, name: name, passphrase: passphrase, excludedFromBackup: excludedFromBackup, id: id, created: created,
            isSynced: false)
    }

    /// ``beginAttachment(to:kind:name:passphrase:excludedFromBackup:id:created:)``, or, `isSynced`, for an
    /// attachment the sync server holds.
    /// `arrivesSealed`: a synced attachment whose bytes are its chunks sealed under the note key.
    /// Into a locked note they are kept as they are; into a note whose lock was removed here
    /// they are opened with the key kept for the removal (``keptUnlockKey(ofNote:_:_:)``).
    func beginAttachment(
        to noteID: String, kind: AttachmentKind, name: String, passphrase: Passphrase?, excludedFromBackup: Bool, id given: String?,
        created: Date?, isSynced: Bool, arrivesSealed: Bool = false, byteCount: Int = 0
    ) throws -> AttachmentUpload {
        try NoteRules.validateAttachmentName(name)
        if let given, !(given.count == 36 && UUID(uuidString: given) != nil && given == given.lowercased()) {
            throw NotesError.invalid("an attachment id is a lowercase UUID")
        }
        let sealing = try sealing()
        let (row, keptKey, sharedWith) = try pool.read { db in
            let row = try NoteRow.fetch(noteID, db)
            var keptKey: SymmetricKey?
            if isSynced && arrivesSealed && !row.isLocked {
                // Sealed chunks into a note unlocked here open only with the key its lock's removal kept.
                guard let kept = try keptUnlockKey(ofNote: noteID, db, sealing) else {
                    throw NotesError.wrongLockState("note \(noteID) is not locked here: its sealed attachment does not open")
                }
                keptKey = kept
            }
            return (row, keptKey, try SharingSyncTables.isSharedWith(noteID, db))
        }
        // A fetched one may go to a note in Recently Deleted: it travels with its note.
        if !isSynced { try requireNotDeleted(row) }
        if !isSynced && sharedWith { throw Self.ownersAttachments(noteID) }
        if row.isLocked && !kind.isLockable { throw NotesError.attachmentNotLockable(name: name, kind: kind) }
        // A synced locked note's attachment comes sealed under its note key: no key is needed here.
        let presealed = isSynced && row.isLocked
        let noteKey = row.isLocked && !presealed ? try self.noteKey(of: row, passphrase: passphrase, sealing) : nil
        let id = given ?? UUID().uuidString.lowercased()
        let writer = try AttachmentFile.Writer(attachmentID: id, in: attachmentsFolder, sealing: sealing, noteKey: noteKey, presealed: presealed)
        return AttachmentUpload(
            store: self, noteID: noteID, wrappedKey: row.wrappedKey, isLocked: row.isLocked, id: id, kind: kind, name: name,
            excludedFromBackup: excludedFromBackup, created: created, isSynced: isSynced, isPresealed: presealed,
            opener: keptKey.map { SealedChunkOpener(noteKey: $0, attachmentID: id, byteCount: byteCount) }, writer: writer)
    }

    /// Adds the row of an attachment whose file `upload` wrote; removes the file if that fails.
    func insertAttachment(_ upload: AttachmentUpload, file: String, byteCount: Int) throws -> AttachmentInfo {
        let created = min(upload.created ?? now, now)
        do {
            let sealing = try sealing()
            try pool.write { db in
                // A fetched attachment is the server's already: its note is not sent again.
                // Opened from the server's sealed copy into a note unlocked here: the server
                // holds it in the other form, so its plaintext goes as the lock's removal needs.
                if upload.isSynced {
                    try AttachmentSyncTables.beginApplying(
                        recordingSynced: upload.id, note: upload.noteID, excludedFromBackup: upload.excludedFromBackup,
                        inOtherForm: upload.opensSealedChunks, db)
                }
                guard try NoteRow.fetch(upload.noteID, db).wrappedKey == upload.wrappedKey else {
                    throw NotesError.wrongLockState("note \(upload.noteID) was locked or unlocked meanwhile; try again")
                }
                try db.execute(
                    sql: """
                        INSERT INTO attachments (id, note_id, kind, sealed_name, byte_count, created, file, is_locked, exclude_from_backup)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        upload.id, upload.noteID, upload.kind.rawValue,
                        try sealing.sealText(upload.name, table: "attachments", id: upload.id, column: "name"),
                        byteCount, created.timeIntervalSince1970, file, upload.isLocked, upload.excludedFromBackup,
                    ])
                // A fetched attachment changes nothing of its note: the note keeps the date the
                // server gave it, rather than jumping to the top of the list when it arrives.
                // A sync device's date never dates the note back: it may have been edited since.
                if !upload.isSynced {
                    try db.execute(
                        sql: "UPDATE notes SET modified = MAX(modified, ?) WHERE id = ?", arguments: [created.timeIntervalSince1970, upload.noteID])
                }
                if upload.isSynced { try AttachmentSyncTables.endApplying(db) }
            }
        } catch {
            AttachmentFile.remove(file, in: attachmentsFolder)
            throw error
        }
        announce(.changed, note: upload.noteID)
        return AttachmentInfo(
            id: upload.id, kind: upload.kind, name: upload.name, byteCount: byteCount, created: created,
            excludedFromBackup: upload.excludedFromBackup)
    }

    /// An attachment's bytes (a locked note's: with its passphrase or open session).
    public func attachment(_ attachmentID: String, of noteID: String, passphrase: Passphrase? = nil) throws -> (AttachmentInfo, Data) {
        let (attachment, noteKey, sealing) = try openableAttachment(attachmentID, of: noteID, passphrase: passphrase)
        let data = try AttachmentFile.read(
            attachment.file, attachmentID: attachment.id, byteCount: attachment.byteCount, in: attachmentsFolder,
            sealing: sealing, noteKey: noteKey)
        return (try info(attachment, sealing), data)
    }

    /// An attachment opened to be read a chunk at a time, as its reader asks (a locked note's
    /// with its passphrase or open session): what answers an attachment of any size while holding
    /// about one chunk (1 MiB) of it — the daemon's answer, the web client's download.
    /// - Parameters:
    ///   - attachmentID: the attachment.
    ///   - noteID: its note.
    ///   - passphrase: a locked note's passphrase, when its session is not open.
    /// - Returns: the attachment's description, and the reader of its bytes.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/passphraseRequired(_:)`` and the other
    ///   passphrase errors, ``NotesError/damaged(_:)``.
    public func openAttachment(
        _ attachmentID: String, of noteID: String, passphrase: Passphrase? = nil
    ) throws -> (AttachmentInfo, AttachmentChunks) {
        let (attachment, noteKey, sealing) = try openableAttachment(attachmentID, of: noteID, passphrase: passphrase)
        let reader = try AttachmentFile.Reader(
            attachment.file, attachmentID: attachment.id, byteCount: attachment.byteCount, in: attachmentsFolder,
            sealing: sealing, layers: .plaintext(noteKey))
        return (try info(attachment, sealing), AttachmentChunks(reader, byteCount: attachment.byteCount, attachmentID: attachment.id))
    }

    /// Checks that the key of an attachment of a locked note is at hand — from `passphrase` or
    /// its note's open session — before something destroys it; an unlocked attachment needs none.
    /// - Parameters:
    ///   - attachmentID: the attachment.
    ///   - noteID: its note.
    ///   - passphrase: the note's passphrase, when its session is not open.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/passphraseRequired(_:)`` and the other
    ///   passphrase errors.
    public func requireKey(ofAttachment attachmentID: String, of noteID: String, passphrase: Passphrase?) throws {
        _ = try openableAttachment(attachmentID, of: noteID, passphrase: passphrase)
    }

    /// An attachment's row and what opens it: the note key of a locked note (from `passphrase` or
    /// its open session).
    private func openableAttachment(
        _ attachmentID: String, of noteID: String, passphrase: Passphrase?
    ) throws -> (AttachmentRow, SymmetricKey?, ContentSealing) {
        let sealing = try sealing()
        let (row, attachment) = try pool.read { db -> (NoteRow, AttachmentRow) in
            let note = try NoteRow.fetch(noteID, db)
            guard let attachment = try AttachmentRow.fetchAll(note: noteID, db).first(where: { $0.id == attachmentID }) else {
                throw NotesError.notFound("attachment \(attachmentID.prefix(64)) of note \(noteID)")
            }
            return (note, attachment)
        }
        let noteKey = attachment.isLocked ? try self.noteKey(of: row, passphrase: passphrase, sealing) : nil
        return (attachment, noteKey, sealing)
    }

    /// Removes an attachment; its file is overwritten and unlinked. A note in Recently Deleted
    /// keeps its attachments until it is restored (`invalid`).
    /// - Parameters:
    ///   - attachmentID: the attachment.
    ///   - noteID: its note.
    ///   - authority: who removes it; the browser proves a locked note's key
    ///     (``AttachmentRemovalAuthority``), checked and counted in this transaction.
    /// - Throws: `notFound`, `invalid`, `wrongPassphrase`, `passphraseRequired`, `throttled`.
    public func removeAttachment(_ attachmentID: String, of noteID: String, by authority: AttachmentRemovalAuthority) throws {
        let file = try pool.write { db -> Result<String, NotesError> in
            let row = try NoteRow.fetch(noteID, db)
            try requireNotDeleted(row)
            if try SharingSyncTables.isSharedWith(noteID, db) { throw Self.ownersAttachments(noteID) }
            guard let attachment = try AttachmentRow.fetchAll(note: noteID, db).first(where: { $0.id == attachmentID }) else {
                throw NotesError.notFound("attachment \(attachmentID.prefix(64)) of note \(noteID)")
            }
            if row.isLocked, case .browser(let noteProof, let passphraseProof) = authority {
                guard let noteProof else { throw NotesError.invalid("a locked note's attachment is removed with the note's proof") }
                // The content key only here: an unlocked note's attachment goes without it, as before the first unlock.
                if let wrong = try checkNoteProof(row, noteProof: noteProof, passphraseProof: passphraseProof, db, try sealing()) {
                    return .failure(wrong)
                }
            }
            try db.execute(sql: "DELETE FROM attachments WHERE id = ?", arguments: [attachmentID])
            // Setting `modified`, even to itself, counts the note's revision.
            if authority.datesTheNote {
                try db.execute(sql: "UPDATE notes SET modified = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, noteID])
            } else {
                try db.execute(sql: "UPDATE notes SET modified = modified WHERE id = ?", arguments: [noteID])
            }
            return .success(attachment.file)
        }.get()
        AttachmentFile.remove(file, in: attachmentsFolder)
        purgeRemovedPages()
        announce(.changed, note: noteID)
    }

    /// The refusal of an attachment added to or removed from a note another account shares with
    /// the sync account: as in the web client, its attachments are its owner's.
    static func ownersAttachments(_ noteID: String) -> NotesError {
        .forbidden("note \(noteID) is shared with this account: only its owner adds or removes its attachments")
    }

    /// Leaves an attachment out of backups, or puts it back in (docs/FORMAT.md, "Backups").
    /// - Parameters:
    ///   - attachmentID: the attachment.
    ///   - noteID: its note.
    ///   - excluded: whether backups leave it out.
    /// - Returns: the attachment as it now is.
    /// - Throws: ``NotesError/notFound(_:)`` when the note has no such attachment.
    @discardableResult
    public func setExcludedFromBackup(_ attachmentID: String, of noteID: String, excluded: Bool) throws -> AttachmentInfo {
        let sealing = try sealing()
        return try pool.write { db in
            try db.execute(
                sql: "UPDATE attachments SET exclude_from_backup = ? WHERE id = ? AND note_id = ?",
                arguments: [excluded, attachmentID, noteID])
            guard let row = try AttachmentRow.fetchAll(note: noteID, db).first(where: { $0.id == attachmentID }) else {
                throw NotesError.notFound("attachment \(attachmentID.prefix(64)) of note \(noteID)")
            }
            return try info(row, sealing)
        }
    }

    func attachmentInfos(of noteID: String, _ db: Database, _ sealing: ContentSealing) throws -> [AttachmentInfo] {
        try AttachmentRow.fetchAll(note: noteID, db).map { try info($0, sealing) }
    }

    func info(_ row: AttachmentRow, _ sealing: ContentSealing) throws -> AttachmentInfo {
        AttachmentInfo(
            id: row.id, kind: row.kind, name: try attachmentName(row, sealing), byteCount: row.byteCount, created: row.created,
            excludedFromBackup: row.isExcludedFromBackup)
    }

    func attachmentName(_ row: AttachmentRow, _ sealing: ContentSealing) throws -> String {
        try sealing.openText(row.sealedName, table: "attachments", id: row.id, column: "name")
    }

}

/// An attachment read a chunk at a time — its plaintext (``NotesStore/openAttachment(_:of:passphrase:)``)
/// or a locked one's sealed chunks (``NotesStore/openSealedChunks(ofAttachment:note:)``): each
/// chunk is read from its file and opened when asked for, and together they are exactly
/// ``byteCount`` bytes or the read fails — what an answer that declares its length first needs.
/// Calls may come from different threads one after another; a lock keeps them in order.
public final class AttachmentChunks: Sendable {
    /// What all the chunks add up to.
    public let byteCount: Int
    private let attachmentID: String
    /// The reader, and the bytes it handed out so far.
    private let reader: Mutex<(AttachmentFile.Reader, Int)>

    init(_ reader: sending AttachmentFile.Reader, byteCount: Int, attachmentID: String) {
        self.reader = Mutex((reader, 0))
        self.byteCount = byteCount
        self.attachmentID = attachmentID
    }

    /// The next chunk, or nil after the last.
    /// - Returns: up to 1 MiB of the attachment (a sealed chunk: 28 bytes more).
    /// - Throws: ``NotesError/damaged(_:)`` when the file is cut, reordered, spliced or of the wrong
    ///   size (the chunks before were good).
    public func next() throws -> Data? {
        try reader.withLock { state in
            let chunk = try state.0.next()
            state.1 += chunk?.count ?? 0
            guard chunk == nil ? state.1 == byteCount : state.1 <= byteCount else { throw NotesError.damaged("attachment \(attachmentID)") }
            return chunk
        }
    }
}
