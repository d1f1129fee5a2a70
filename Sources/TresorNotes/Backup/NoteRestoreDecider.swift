import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorNotesDomain
import TresorStorage

/// What becomes of one backed-up note in a restore — skipped, already present, in conflict,
/// restored or replaced — and the rows that restore it, sealed under the home's keys. It only
/// reads: the restore's state so far is a copy, so notes are decided on two threads at once
/// (``NotesRestore/stage(_:)-(Array)``).
struct NoteRestoreDecider: Sendable {
    let store: NotesStore
    let onConflict: ConflictPolicy
    let sealing: ContentSealing
    let keepsImportTags: Bool
    /// The accounts restored or present as the backup has them: the only ones notes go into.
    let accounts: Set<String>
    /// Every account the backup holds.
    let backupAccounts: Set<String>
    /// Each backup folder's id in this home.
    let folders: [String: String]
    /// Each backup passphrase's id in this home.
    let passphrases: [Int64: Int64]

    /// The note's outcome and the statements that restore it. A note replaced by
    /// `--on-conflict replace` loses no edit of the home's: its version here is kept in Recently
    /// Deleted with its attachments (``keptVersion(of:as:)``).
    /// - Throws: ``NotesError/invalid(_:)`` for a note this store would not hold;
    ///   ``TresorModel/RestoreSkip/accountNotInBackup``; storage errors.
    func decide(_ note: BackedUpNote, _ db: Database) throws -> (BackupOutcome, [StagedStatement]) {
        guard backupAccounts.contains(note.account) else { throw RestoreSkip.accountNotInBackup }
        guard accounts.contains(note.account) else { return (.skipped, []) }
        try validate(note)
        var mapped = note
        mapped.folder = note.folder.flatMap { folders[$0] }
        if let locked = note.locked {
            guard let passphrase = passphrases[locked.passphrase] else { return (.skipped, []) }
            mapped.locked?.passphrase = passphrase
        }
        var statements: [StagedStatement] = []
        var outcome = BackupOutcome.restored
        let existing = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM notes WHERE id = ?"), arguments: [note.id]).map { row in
            (NoteRow(row: row), try AttachmentRow.fetchAll(note: note.id, db).map(\.id))
        }
        if case let (row, attachments)? = existing {
            if try isIdentical(row, to: mapped, db) { return (.alreadyPresent, []) }
            guard onConflict == .replace else { return (.conflict, []) }
            outcome = .replaced
            // By id, not by note: run again after a crash, the statements leave the restored
            // note's attachments where they are.
            let kept = UUID().uuidString.lowercased()
            statements.append(try keptVersion(of: row, as: kept))
            statements += attachments.map {
                StagedStatement("UPDATE attachments SET note_id = ? WHERE id = ?", [kept.databaseValue, $0.databaseValue])
            }
            statements += [
                StagedStatement("DELETE FROM participants WHERE note_id = ?", [note.id.databaseValue]),
                StagedStatement("DELETE FROM notes WHERE id = ?", [note.id.databaseValue]),
            ]
        }
        let importTag =
            try keepsImportTags
            ? note.importTag.flatMap { tag in
                try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM notes WHERE import_tag = ?"), arguments: [tag]) == true ? nil : tag
            } : nil
        let recordKeySealed = try note.recordKey.map { try sealing.seal($0, table: "notes", id: note.id, column: "record_key") }
        let layer = note.recordKey.map { ContentSealing(classKey: SymmetricKey(data: $0)) } ?? sealing
        let locked = mapped.locked
        var row: [DatabaseValue] = [
            note.id.databaseValue, note.account.databaseValue, mapped.folder.databaseValue,
            note.created.timeIntervalSince1970.databaseValue, note.modified.timeIntervalSince1970.databaseValue, note.pinned.databaseValue,
        ]
        row.append(try layer.sealText(note.title, table: "notes", id: note.id, column: "title").databaseValue)
        row.append(try note.body.map { try layer.sealText($0, table: "notes", id: note.id, column: "body") }.databaseValue)
        let lockedColumns: [DatabaseValue?] = [
            locked?.passphrase.databaseValue, locked?.salt.databaseValue, locked?.iterations.databaseValue,
            locked?.wrappedKey.databaseValue, locked?.iv.databaseValue, locked?.tag.databaseValue,
        ]
        row += lockedColumns.map { $0 ?? .null }
        row.append(try locked.map { try sealing.seal($0.ciphertext, table: "notes", id: note.id, column: "ciphertext") }.databaseValue)
        row += [note.bodyFormat.databaseValue, importTag.databaseValue, recordKeySealed.databaseValue, note.noteProofHash.databaseValue]
        // As stored: an insert fires no revision trigger.
        row += [(note.revision ?? 1).databaseValue, note.deleted.map(\.timeIntervalSince1970).databaseValue]
        statements.append(
            StagedStatement(
                """
                INSERT OR IGNORE INTO notes (id, account_id, folder_id, created, modified, pinned, sealed_title, sealed_body, passphrase_id,
                    crypto_salt, crypto_iterations, crypto_wrapped_key, crypto_iv, crypto_tag, sealed_ciphertext, body_format, import_tag,
                    sealed_record_key, note_proof_hash, revision, deleted)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, row))
        for participant in note.participants where accounts.contains(participant.account) {
            statements.append(
                StagedStatement(
                    "INSERT OR IGNORE INTO participants (note_id, account_id, added) VALUES (?, ?, ?)",
                    [
                        note.id.databaseValue, participant.account.databaseValue, participant.added.timeIntervalSince1970.databaseValue,
                    ]))
        }
        return (outcome, statements)
    }

    /// The home's version of a note the restore replaces, kept as a note of its own, `id`, in
    /// Recently Deleted: its title, body (a locked note's still sealed under its note key),
    /// folder and dates, not shared. Whoever wanted the backup's version loses nothing of theirs.
    private func keptVersion(of row: NoteRow, as id: String) throws -> StagedStatement {
        let layer = try sealing.noteLayer(row)
        let title = try layer.openText(row.sealedTitle, table: "notes", id: row.id, column: "title")
        let body = try row.sealedBody.map { try layer.openText($0, table: "notes", id: row.id, column: "body") }
        let ciphertext = try row.sealedCiphertext.map { try sealing.open($0, table: "notes", id: row.id, column: "ciphertext") }
        let values: [DatabaseValue] = [
            id.databaseValue, row.accountID.databaseValue, row.folderID.databaseValue, row.created.timeIntervalSince1970.databaseValue,
            row.modified.timeIntervalSince1970.databaseValue, try sealing.sealText(title, table: "notes", id: id, column: "title").databaseValue,
            try body.map { try sealing.sealText($0, table: "notes", id: id, column: "body") }.databaseValue, row.passphraseID.databaseValue,
            row.salt.databaseValue, row.iterations.databaseValue, row.wrappedKey.databaseValue, row.iv.databaseValue, row.tag.databaseValue,
            try ciphertext.map { try sealing.seal($0, table: "notes", id: id, column: "ciphertext") }.databaseValue,
            row.bodyFormat.rawValue.databaseValue, row.noteProofHash.databaseValue, store.now.timeIntervalSince1970.databaseValue,
        ]
        return StagedStatement(
            """
            INSERT OR IGNORE INTO notes (id, account_id, folder_id, created, modified, pinned, sealed_title, sealed_body, passphrase_id,
                crypto_salt, crypto_iterations, crypto_wrapped_key, crypto_iv, crypto_tag, sealed_ciphertext, body_format,
                note_proof_hash, deleted)
            VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, values)
    }

    private func validate(_ note: BackedUpNote) throws {
        try NoteRules.validate(note.title, limit: NoteLimits.titleBytes, what: "title")
        if let body = note.body { try NoteRules.validate(body, limit: NoteLimits.bodyBytes, what: "body") }
        guard BodyFormat(rawValue: note.bodyFormat) != nil, (note.body == nil) == (note.locked != nil) else {
            throw NotesError.invalid("the note is neither a plain nor a locked note")
        }
        if let key = note.recordKey, key.count != 32 { throw NotesError.invalid("a shared note's record key is 32 bytes") }
        if let locked = note.locked {
            guard (1...LockedNoteCrypto.maximumIterations).contains(locked.iterations), (1...64).contains(locked.salt.count),
                locked.wrappedKey.count == LockedNoteCrypto.wrappedKeyByteCount, (12...64).contains(locked.iv.count),
                locked.tag.count == AESGCM.tagByteCount, locked.ciphertext.count <= NoteLimits.appleLockedCiphertextBytes
            else { throw NotesError.invalid("the locked note's fields are malformed") }
        }
    }

    /// Whether the home's note `row` holds what `note` (with this home's folder and passphrase
    /// ids) does.
    private func isIdentical(_ row: NoteRow, to note: BackedUpNote, _ db: Database) throws -> Bool {
        let current = try store.backedUp(row, db, sealing)
        var comparable = note
        comparable.importTag = current.importTag
        comparable.participants = current.participants
        // A backup from before revisions says nothing of them.
        if note.revision == nil { comparable.revision = current.revision }
        return current == comparable
    }
}
