import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorNotesDomain

// Reading a home's notes for a backup (docs/FORMAT.md, "Backups"): one read transaction, so
// the backup is one consistent state of the notes while the daemon goes on serving writes.
extension NotesStore {
    /// Reads every account, passphrase, folder, note and attachment, in that order, in one read
    /// transaction, and hands each to `body` as a ``NotesReading``. The keybag layer is opened;
    /// locked notes and their attachments stay sealed under their note keys. Attachment bytes
    /// come in pieces of at most 1 MiB (a locked one's: one sealed chunk each), so memory holds
    /// one piece whatever the attachment's size. What cannot be read is handed over as
    /// ``NotesReading/unreadable(what:id:reason:)`` and the reading goes on.
    /// - Parameters:
    ///   - includingExcluded: hand over the bytes of attachments left out of backups too, as
    ///     any other's (`tresor server migrate` moves them; a backup does not).
    ///   - body: called with each record, inside the read transaction.
    /// - Throws: ``NotesError/contentUnavailable`` before the first unlock; what `body` throws.
    public func readAllForBackup(includingExcluded: Bool = false, _ body: (NotesReading) throws -> Void) throws {
        let sealing = try sealing()
        try pool.read { db in
            for row in try Row.fetchAll(db, sql: "SELECT * FROM accounts ORDER BY created, id") {
                try body(
                    .account(
                        BackedUpAccount(
                            id: row["id"], name: row["name"], loginName: row["login_name"], passwordSalt: row["password_salt"],
                            passwordIterations: row["password_iterations"], passwordHash: row["password_hash"],
                            currentPassphrase: row["current_passphrase_id"], keychainUnlock: row["keychain_unlock"],
                            created: Date(timeIntervalSince1970: row["created"]))))
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM passphrases ORDER BY id").map(PassphraseRow.init) {
                do {
                    try body(.passphrase(try backedUp(row, sealing)))
                } catch let error as NotesError {
                    try body(.unreadable(what: "passphrase", id: "\(row.id)", reason: error.description))
                }
            }
            for row in try Row.fetchAll(db, sql: "SELECT id, account_id, sealed_name, created FROM folders ORDER BY created, id") {
                let id: String = row["id"]
                do {
                    let name = try sealing.openText(row["sealed_name"], table: "folders", id: id, column: "name")
                    try body(
                        .folder(BackedUpFolder(id: id, account: row["account_id"], name: name, created: Date(timeIntervalSince1970: row["created"]))))
                } catch let error as NotesError {
                    try body(.unreadable(what: "folder", id: id, reason: error.description))
                }
            }
            let notes = try Row.fetchCursor(db, sql: "SELECT * FROM notes ORDER BY created, id")
            while let row = try notes.next() {
                let note = NoteRow(row: row)
                let backedUp: BackedUpNote
                do {
                    backedUp = try self.backedUp(note, db, sealing)
                } catch let error as NotesError {
                    try body(.unreadable(what: "note", id: note.id, reason: error.description))
                    continue
                }
                try body(.note(backedUp))
                for attachment in try AttachmentRow.fetchAll(note: note.id, db) {
                    try readForBackup(attachment, sealing, includingExcluded: includingExcluded, body)
                }
            }
        }
    }

    /// One note as a backup carries it.
    func backedUp(_ row: NoteRow, _ db: Database, _ sealing: ContentSealing) throws -> BackedUpNote {
        let layer = try sealing.noteLayer(row)
        var locked: BackedUpNote.LockedFields?
        if let passphrase = row.passphraseID {
            guard let salt = row.salt, let iterations = row.iterations, let wrappedKey = row.wrappedKey, let iv = row.iv,
                let tag = row.tag, let sealed = row.sealedCiphertext
            else { throw NotesError.damaged("the locked fields of note \(row.id)") }
            locked = .init(
                passphrase: passphrase, salt: salt, iterations: iterations, wrappedKey: wrappedKey, iv: iv, tag: tag,
                ciphertext: try sealing.open(sealed, table: "notes", id: row.id, column: "ciphertext"))
        }
        let participants = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT account_id, added FROM participants WHERE note_id = ? ORDER BY added, account_id"), arguments: [row.id]
        ).map { BackedUpParticipant(account: $0["account_id"], added: Date(timeIntervalSince1970: $0["added"])) }
        let importTag = try Data.fetchOne(db.cachedStatement(sql: "SELECT import_tag FROM notes WHERE id = ?"), arguments: [row.id])
        return BackedUpNote(
            id: row.id, account: row.accountID, folder: row.folderID, created: row.created, modified: row.modified, pinned: row.isPinned,
            title: try title(of: row, sealing),
            body: try row.isLocked ? nil : layer.openText(row.sealedBody ?? Data(), table: "notes", id: row.id, column: "body"),
            recordKey: try row.sealedRecordKey.map { try sealing.open($0, table: "notes", id: row.id, column: "record_key") },
            participants: participants, locked: locked, bodyFormat: row.bodyFormat.rawValue, importTag: importTag,
            noteProofHash: row.noteProofHash, revision: row.revision, deleted: row.deleted)
    }

    func backedUp(_ row: PassphraseRow, _ sealing: ContentSealing) throws -> BackedUpPassphrase {
        BackedUpPassphrase(
            id: row.id, account: row.accountID, source: row.source.rawValue, generation: row.generation, salt: row.salt,
            iterations: row.iterations, verifier: row.verifier, proofHash: row.proofHash, hint: try hint(of: row, sealing),
            created: row.created)
    }

    func backedUp(_ row: AttachmentRow, _ sealing: ContentSealing) throws -> BackedUpAttachment {
        BackedUpAttachment(
            id: row.id, note: row.noteID, kind: row.kind, name: try attachmentName(row, sealing), byteCount: row.byteCount,
            created: row.created, isLocked: row.isLocked, excludedFromBackup: row.isExcludedFromBackup)
    }

    /// One attachment and its bytes: an unlocked note's as plaintext pieces, a locked note's as
    /// its chunks sealed under the note key (the keybag layer opened and checked).
    private func readForBackup(
        _ row: AttachmentRow, _ sealing: ContentSealing, includingExcluded: Bool, _ body: (NotesReading) throws -> Void
    ) throws {
        let attachment: BackedUpAttachment
        do {
            attachment = try backedUp(row, sealing)
        } catch let error as NotesError {
            return try body(.unreadable(what: "attachment", id: row.id, reason: error.description))
        }
        if row.isExcludedFromBackup && !includingExcluded { return try body(.excludedAttachment(attachment)) }
        try body(.attachment(attachment))
        do {
            if row.isLocked {
                try AttachmentFile.forEachRecord(row.file, attachmentID: row.id, byteCount: row.byteCount, in: attachmentsFolder, sealing: sealing) {
                    chunk, _, _ in
                    try body(.attachmentPiece(chunk))
                }
            } else {
                try AttachmentFile.forEachChunk(
                    row.file, attachmentID: row.id, byteCount: row.byteCount, in: attachmentsFolder, sealing: sealing, noteKey: nil
                ) {
                    try body(.attachmentPiece($0))
                }
            }
        } catch let error as NotesError {
            return try body(.attachmentAbandoned(reason: error.description))
        }
        try body(.attachmentEnd)
    }

    /// How many notes and attachment bytes a backup would read: for its progress.
    /// - Returns: the number of notes and the bytes of the attachments not left out.
    /// - Throws: storage errors.
    public func backupSize() throws -> (notes: Int, attachmentBytes: Int) {
        try pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notes") ?? 0,
                try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(byte_count), 0) FROM attachments WHERE exclude_from_backup = 0") ?? 0
            )
        }
    }

    /// How many accounts, notes and attachments a reading hands over, and the attachments'
    /// bytes: the totals of `tresor server migrate`'s progress.
    /// - Returns: the counts (every account, note and attachment, excluded ones too).
    /// - Throws: storage errors.
    public func readingTotals() throws -> (accounts: Int, notes: Int, attachments: Int, attachmentBytes: Int) {
        try pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM accounts") ?? 0,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notes") ?? 0,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM attachments") ?? 0,
                try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(byte_count), 0) FROM attachments") ?? 0
            )
        }
    }

    /// Identifies the key this home's import tags are made with, without revealing it: a
    /// restore keeps a note's import tag only where the tag means the same.
    public var importTagKeyID: Data {
        get throws {
            let key = try sealing().indexKey
            return MessageAuthentication.hmacSHA256(Data("tresor.notes.v1.import-tag-key-id".utf8), key: key).prefix(16)
        }
    }
}
