import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorNotesDomain

// Revisions, merges and conflict copies (docs/FORMAT.md, "Revisions and merges"): a save made
// from an older revision is merged into the stored note, or — when both changed the same
// lines — kept whole as a new note next to it. Never a silent overwrite.
extension NotesStore {

    /// Counts note `id`'s revision up for a change the trigger `notes_revision` does not see: a
    /// participant added or removed, a passphrase change's new wrapping of its key — what another
    /// device must fetch again, as it must after any change the trigger counts.
    func countRevision(of id: String, _ db: Database) throws {
        try db.execute(sql: "UPDATE notes SET revision = revision + 1 WHERE id = ?", arguments: [id])
    }

    /// The plaintext body stored now: an unlocked note's, or a locked one's opened with `noteKey`.
    func storedBody(of row: NoteRow, noteKey: SymmetricKey?, _ sealing: ContentSealing) throws -> String {
        if row.isLocked {
            guard let noteKey else { throw NotesError.wrongLockState("note \(row.id) is locked") }
            return try lockedBody(of: row, noteKey: noteKey, sealing)
        }
        return try sealing.noteLayer(row).openText(row.sealedBody ?? Data(), table: "notes", id: row.id, column: "body")
    }

    /// Makes the conflict copy of note `row` holding `content` (title and body both given): a
    /// new note of the same owner, folder and participants, titled "… (conflict copy from
    /// NAME)". A locked note's copy is locked with the same note key (`noteKey`), its body sealed
    /// with a new IV. Returns its summary and its search-index entry.
    func conflictCopy(
        of row: NoteRow, content: NoteContent, noteKey: SymmetricKey?, editor: AccountID?, _ db: Database, _ sealing: ContentSealing
    ) throws -> (NoteSummary, SearchIndex.Entry) {
        let body = content.body ?? ""
        let lockedBody = try row.isLocked ? noteKey.map { try LockedNoteCrypto.sealBody(Data(body.utf8), with: $0) } : nil
        if row.isLocked && lockedBody == nil { throw NotesError.wrongLockState("note \(row.id) is locked") }
        let id = try insertConflictCopy(
            of: row, title: content.title ?? "", body: row.isLocked ? nil : body, lockedBody: lockedBody, editor: editor, db, sealing)
        let copy = try summary(of: NoteRow.fetch(id, db), db, sealing)
        return (copy, .init(noteID: id, accountID: row.accountID, title: copy.title, body: row.isLocked ? nil : body))
    }

    /// Inserts the conflict copy of `row`: `body` for an unlocked note, or `lockedBody` sealed
    /// under the note's own key (the copy shares its wrapped key, passphrase and note proof).
    /// Returns the copy's id.
    func insertConflictCopy(
        of row: NoteRow, title: String, body: String?, lockedBody: AESGCM.Sealed?, editor: AccountID?, _ db: Database, _ sealing: ContentSealing
    ) throws -> String {
        let id = UUID().uuidString.lowercased()
        let timestamp = now.timeIntervalSince1970
        let participants = try String.fetchAll(db, sql: "SELECT account_id FROM participants WHERE note_id = ?", arguments: [row.id])
        // A shared note's copy is shared too, under a record key of its own.
        let recordKey = participants.isEmpty ? nil : SecureRandom.bytes(count: 32)
        let layer = recordKey.map { ContentSealing(classKey: SymmetricKey(data: $0)) } ?? sealing
        let copyTitle = try conflictCopyTitle(title, editor: editor, db)
        try db.execute(
            sql: """
                INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, sealed_title, sealed_body, sealed_record_key,
                                   passphrase_id, crypto_salt, crypto_iterations, crypto_wrapped_key, crypto_iv, crypto_tag,
                                   sealed_ciphertext, body_format, note_proof_hash)
                VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                id, row.accountID, row.folderID, timestamp, timestamp,
                try layer.sealText(copyTitle, table: "notes", id: id, column: "title"),
                try body.map { try layer.sealText($0, table: "notes", id: id, column: "body") },
                try recordKey.map { try sealing.seal($0, table: "notes", id: id, column: "record_key") },
                lockedBody == nil ? nil : row.passphraseID, lockedBody == nil ? nil : row.salt,
                lockedBody == nil ? nil : row.iterations, lockedBody == nil ? nil : row.wrappedKey,
                lockedBody?.iv, lockedBody?.tag,
                try lockedBody.map { try sealing.seal($0.ciphertext, table: "notes", id: id, column: "ciphertext") },
                BodyFormat.text.rawValue, lockedBody == nil ? nil : row.noteProofHash,
            ])
        for account in participants {
            try db.execute(sql: "INSERT INTO participants (note_id, account_id, added) VALUES (?, ?, ?)", arguments: [id, account, timestamp])
        }
        return id
    }

    /// "Groceries (conflict copy from bob)" — the editor's login name when it is a web
    /// account's (``NoteRules/conflictCopyTitle(_:editorName:)``).
    func conflictCopyTitle(_ title: String, editor: AccountID?, _ db: Database) throws -> String {
        let name = try editor.flatMap { try String.fetchOne(db, sql: "SELECT login_name FROM accounts WHERE id = ?", arguments: [$0.rawValue]) }
        return NoteRules.conflictCopyTitle(title, editorName: name)
    }

    /// Saves a locked note's body sealed in the browser as a conflict copy: the browser holds
    /// an edit of an older revision whose lines clash with the stored body (it merged the
    /// plaintext itself and found them overlapping). `noteProof` proves the note key, under
    /// which the copy's body is sealed.
    /// - Parameters:
    ///   - id: the locked note.
    ///   - iv: the body's IV (12 to 64 bytes).
    ///   - tag: its 16-byte GCM tag.
    ///   - ciphertext: the body sealed under the note key.
    ///   - noteProof: the proof of the note key.
    ///   - passphraseProof: the note's passphrase, for a note with no note proof recorded.
    ///   - editor: who saves, to name the copy.
    /// - Returns: the conflict copy.
    /// - Throws: `invalid`, `wrongLockState`, `passphraseRequired`, the proof errors.
    public func saveLockedConflictCopy(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?, by editor: AccountID?
    ) throws -> NoteSummary {
        try LockedNoteShape.checkBody(iv: iv, tag: tag, ciphertext: ciphertext)
        let sealing = try sealing()
        let (copy, accountID) = try pool.write { db -> Result<(NoteSummary, String), NotesError> in
            let row = try NoteRow.fetch(id, db)
            guard row.isLocked else { throw NotesError.wrongLockState("note \(id) is not locked") }
            try requireNotDeleted(row)
            if let wrong = try checkNoteProof(row, noteProof: noteProof, passphraseProof: passphraseProof, db, sealing) { return .failure(wrong) }
            let fresh = try NoteRow.fetch(id, db)
            let copyID = try insertConflictCopy(
                of: fresh, title: try title(of: fresh, sealing), body: nil, lockedBody: AESGCM.Sealed(iv: iv, ciphertext: ciphertext, tag: tag),
                editor: editor, db, sealing)
            return .success((try summary(of: NoteRow.fetch(copyID, db), db, sealing), fresh.accountID))
        }.get()
        index.upsert(.init(noteID: copy.id, accountID: accountID, title: copy.title, body: nil))
        announce(.created, note: copy.id)
        return copy
    }

}
