import Foundation
import PostgresNIO
import TresorNotesDomain

// Locked notes of a sync account's devices (docs/SYNC.md, "Notes"): stored and read as sealed
// records, as the browser's are; the server holds no key that opens them.
extension PostgresWebStore: LockedNoteSyncStore {
    func syncedLockedRecord(ofNote id: String) async throws -> SyncedLockedRecord {
        try await db.read { [self] connection in
            let row = try await note(id, connection)
            guard let passphraseID = row.passphraseID, let wrapped = row.wrappedKey, let iv = row.iv, let tag = row.tag,
                let sealed = row.sealedCiphertext
            else { throw NotesError.wrongLockState("note \(id) is not locked") }
            let passphrase = try await passphrase(passphraseID, connection)
            return try SyncedLockedRecord(
                passphraseSource: passphrase.source, passphraseSalt: passphrase.salt, passphraseIterations: passphrase.iterations,
                passphraseVerifier: passphrase.verifier,
                passphraseProofHash: passphrase.proofHash, wrappedKey: wrapped, iv: iv, tag: tag,
                ciphertext: try sealing.open(sealed, "notes", id, "ciphertext"), bodyFormat: LockedBodyFormat(stored: row.bodyFormat),
                noteProofHash: row.noteProofHash, passphraseHint: try hint(of: passphrase))
        }
    }

    func storeSyncedLockedNote(
        _ id: String?, title: String, folder: String?, isPinned: Bool, record: SyncedLockedRecord, base: NoteBase?, restoring: Bool,
        account: AccountID, edit: SyncedEdit, quota: StorageQuota?
    ) async throws -> (id: String, conflictCopyID: String?) {
        try NoteRules.validate(title, limit: NoteLimits.titleBytes, what: "title", allowEmpty: false)
        let newID = UUID().uuidString.lowercased()
        return try await db.transaction { [self, logger] connection in
            let existing = try await id.asyncMap { try await noteForWrite($0, connection) }
            if existing == nil { try await lockAccount(account, connection) }
            if let existing, existing.accountID != account.rawValue { throw NotesError.notFound("note \(existing.id.prefix(64))") }
            if let existing, restoring, existing.isDeleted { try await restoreNote(existing.id, connection) }
            try await check(quota, account: account, connection)
            let passphraseID = try await passphraseID(for: record, account: account, connection)
            let folderID = try await folder.asyncMap { try await self.folderID(named: $0, account: account, creating: true, connection)! }
            if let existing, let base, base.revision != existing.revision, try !holdsText(of: base, existing) {
                // No key here to merge with: the device's version is kept whole beside the note.
                let copyID = try await insertLockedCopy(
                    of: existing, title: title, record: record, passphraseID: passphraseID, account, edit: edit, connection)
                try await announce(.created, note: copyID, connection)
                return (existing.id, copyID)
            }
            guard let existing else {
                try await insertSyncedLockedNote(
                    newID, title: title, folderID: folderID, isPinned: isPinned, record: record, passphraseID: passphraseID, account: account,
                    made: edit, connection)
                return (newID, nil)
            }
            let noteID = existing.id
            // Locked again on the device before its lock's removal went: no plaintext stays.
            try await dropUnlockedCopies(ofNote: noteID, connection)
            let sealedTitle = try sealing.sealText(title, "notes", noteID, "title")
            let sealedCiphertext = try sealing.seal(record.ciphertext, "notes", noteID, "ciphertext")
            try await connection.run(
                """
                UPDATE notes SET modified = GREATEST(modified, \(time(of: edit))), sealed_title = \(sealedTitle), sealed_body = NULL,
                    pinned = \(isPinned),
                    folder_id = \(folderID), passphrase_id = \(passphraseID), crypto_salt = \(record.passphraseSalt),
                    crypto_iterations = \(record.passphraseIterations), crypto_wrapped_key = \(record.wrappedKey), crypto_iv = \(record.iv),
                    crypto_tag = \(record.tag), sealed_ciphertext = \(sealedCiphertext), body_format = \(Self.stored(record.bodyFormat)),
                    note_proof_hash = \(record.noteProofHash)
                WHERE id = \(noteID)
                """, logger)
            try await announce(.changed, note: noteID, connection)
            return (noteID, nil)
        }
    }

    /// Whether unlocked note `note` still has the title and body of `base` (a version that was not
    /// locked): what changed since is its attachments, pin or folder, and a lock the device put on
    /// the text it had may go on the note.
    private func holdsText(of base: NoteBase, _ note: StoredNote) throws -> Bool {
        guard !note.isLocked, let title = base.title, let body = base.body else { return false }
        return try openTitle(note) == title && openBody(note) == body
    }

    func removeSyncedLock(
        _ id: String, title: String, body: String, folder: String?, isPinned: Bool, baseRevision: Int64?, restoring: Bool,
        account: AccountID, edit: SyncedEdit, quota: StorageQuota?
    ) async throws -> (id: String, conflictCopyID: String?) {
        try NoteRules.validate(title, limit: NoteLimits.titleBytes, what: "title", allowEmpty: false)
        try NoteRules.validate(body, limit: NoteLimits.bodyBytes, what: "body")
        return try await db.transaction { [self, logger] connection in
            let existing = try await noteForWrite(id, connection)
            guard existing.accountID == account.rawValue else { throw NotesError.notFound("note \(id.prefix(64))") }
            guard existing.isLocked else { throw NotesError.wrongLockState("note \(id) is not locked") }
            if restoring, existing.isDeleted { try await restoreNote(id, connection) }
            try await check(quota, account: account, connection)
            if let baseRevision, baseRevision != existing.revision {
                // No key here to merge with: the note keeps its lock and newer version, the
                // device's unlocked one is kept beside it.
                let copyID = try await insertConflictCopy(
                    of: existing, title: title, body: body, locked: nil, editor: account, edit: edit, connection)
                try await dropUnlockedCopies(ofNote: id, connection)
                try await announce(.created, note: copyID, connection)
                return (id, copyID)
            }
            // Its attachments are sealed under the note key, which only devices and browsers hold:
            // the device sent their plaintext first, which takes their place now or nothing changes.
            try await takeUnlockedCopies(ofNote: id, connection)
            let folderID = try await folder.asyncMap { try await self.folderID(named: $0, account: account, creating: true, connection)! }
            try await connection.run(
                """
                UPDATE notes SET modified = GREATEST(modified, \(time(of: edit))), sealed_title = \(try sealing.sealText(title, "notes", id, "title")),
                    sealed_body = \(try sealing.sealText(body, "notes", id, "body")), pinned = \(isPinned), folder_id = \(folderID),
                    passphrase_id = NULL, crypto_salt = NULL, crypto_iterations = NULL, crypto_wrapped_key = NULL, crypto_iv = NULL,
                    crypto_tag = NULL, sealed_ciphertext = NULL, body_format = 'text', note_proof_hash = NULL
                WHERE id = \(id)
                """, logger)
            try await announce(.unlocked, note: id, connection)
            return (id, nil)
        }
    }

    func saveSyncedNote(
        _ id: String, _ changes: NoteChanges, restoring: Bool, by editor: AccountID, edit: SyncedEdit, quota: StorageQuota?
    ) async throws -> NoteSaveOutcome {
        try await db.transaction { [self] connection in
            if restoring, try await noteForWrite(id, connection).isDeleted { try await restoreNote(id, connection) }
            return try await saveNote(id, changes, by: editor, edit: edit, quota: quota, connection)
        }
    }

    /// Inserts a device's new locked note `id` of `account` and announces it, in the caller's
    /// transaction (which holds the account's row lock).
    func insertSyncedLockedNote(
        _ id: String, title: String, folderID: String?, isPinned: Bool, record: SyncedLockedRecord, passphraseID: Int64, account: AccountID,
        made edit: SyncedEdit? = nil, _ connection: PostgresConnection
    ) async throws {
        let sealedTitle = try sealing.sealText(title, "notes", id, "title")
        let sealedCiphertext = try sealing.seal(record.ciphertext, "notes", id, "ciphertext")
        let dates = dates(of: edit)
        try await connection.run(
            """
            INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, sealed_title, passphrase_id, crypto_salt,
                               crypto_iterations, crypto_wrapped_key, crypto_iv, crypto_tag, sealed_ciphertext, body_format,
                               note_proof_hash)
            VALUES (\(id), \(account.rawValue), \(folderID), \(dates.created), \(dates.modified), \(isPinned), \(sealedTitle),
                    \(passphraseID), \(record.passphraseSalt), \(record.passphraseIterations), \(record.wrappedKey), \(record.iv),
                    \(record.tag), \(sealedCiphertext), \(Self.stored(record.bodyFormat)), \(record.noteProofHash))
            """, logger)
        try await announce(.created, note: id, connection)
    }

    /// The account's passphrase generation of the record's salt and source, else a new one
    /// recorded — a Tresor one made current when the account has none; a passphrase imported
    /// from Apple Notes never (caller holds the account's row lock). The record's hint fills the
    /// generation when it has none and is not the current one: the current one's hint travels
    /// on its own (``storeSyncedPassphrase(_:base:account:)``), and may have been removed on
    /// purpose.
    func passphraseID(for record: SyncedLockedRecord, account: AccountID, _ connection: PostgresConnection) async throws -> Int64 {
        let id: Int64
        if record.passphraseSource == .appleNotes {
            id = try await applePassphraseID(for: record, account: account, connection)
        } else {
            guard let verifier = record.passphraseVerifier else { throw NotesError.invalid("a Tresor passphrase needs its verifier") }
            id = try await passphraseID(
                for: SyncedPassphrase(
                    salt: record.passphraseSalt, iterations: record.passphraseIterations, verifier: verifier,
                    proofHash: record.passphraseProofHash, hint: nil), account: account, connection)
        }
        if let hint = record.passphraseHint {
            let sealedHint = try sealing.sealText(hint, "passphrases", "\(id)", "hint")
            try await connection.run(
                """
                UPDATE passphrases SET sealed_hint = \(sealedHint)
                WHERE id = \(id) AND sealed_hint IS NULL
                    AND id IS DISTINCT FROM (SELECT current_passphrase_id FROM accounts WHERE id = \(account.rawValue))
                """, logger)
        }
        return id
    }

    /// The account's Tresor passphrase generation of the salt of `record`, as the one above
    /// (its hint is the caller's to write).
    func passphraseID(for record: SyncedPassphrase, account: AccountID, _ connection: PostgresConnection) async throws -> Int64 {
        let tresor = LockInfo.Source.tresor.rawValue
        if let known = try await connection.value(
            """
            SELECT id FROM passphrases WHERE account_id = \(account.rawValue) AND source = \(tresor) AND salt = \(record.salt)
            ORDER BY id LIMIT 1
            """, logger, as: Int64.self)
        {
            return known
        }
        let generation =
            (try await connection.value("SELECT MAX(generation) FROM passphrases WHERE account_id = \(account.rawValue)", logger, as: Int?.self)
                ?? nil) ?? 0
        guard
            let id = try await connection.value(
                """
                INSERT INTO passphrases (account_id, generation, salt, iterations, verifier, proof_hash, created)
                VALUES (\(account.rawValue), \(generation + 1), \(record.salt), \(record.iterations), \(record.verifier),
                        \(record.proofHash), \(now))
                RETURNING id
                """, logger, as: Int64.self)
        else { throw NotesError.unavailable("the passphrase was not recorded: try again") }
        try await connection.run(
            "UPDATE accounts SET current_passphrase_id = \(id) WHERE id = \(account.rawValue) AND current_passphrase_id IS NULL", logger)
        return id
    }

    /// The account's passphrase imported from Apple Notes of the salt of `record`, else a new one
    /// recorded as it came: no verifier, no generation, never current. Its proof hash, when the
    /// device recorded one, is the same proof's: derived from the same passphrase, salt and
    /// rounds on every side.
    private func applePassphraseID(for record: SyncedLockedRecord, account: AccountID, _ connection: PostgresConnection) async throws -> Int64 {
        let apple = LockInfo.Source.appleNotes.rawValue
        if let known = try await connection.value(
            """
            SELECT id FROM passphrases WHERE account_id = \(account.rawValue) AND source = \(apple) AND salt = \(record.passphraseSalt)
            ORDER BY id LIMIT 1
            """, logger, as: Int64.self)
        {
            return known
        }
        guard
            let id = try await connection.value(
                """
                INSERT INTO passphrases (account_id, source, salt, iterations, proof_hash, created)
                VALUES (\(account.rawValue), \(apple), \(record.passphraseSalt), \(record.passphraseIterations), \(record.passphraseProofHash),
                        \(now))
                RETURNING id
                """, logger, as: Int64.self)
        else { throw NotesError.unavailable("the passphrase was not recorded: try again") }
        return id
    }

    /// A device's locked version of `row`, kept as its conflict copy.
    private func insertLockedCopy(
        of row: StoredNote, title: String, record: SyncedLockedRecord, passphraseID: Int64, _ account: AccountID, edit: SyncedEdit,
        _ connection: PostgresConnection
    ) async throws -> String {
        let id = UUID().uuidString.lowercased()
        // Dated when the edit was made, as the note would have been: a device long offline does
        // not put its copies at the top of every list.
        let timestamp = time(of: edit)
        let copyTitle = NoteRules.conflictCopyTitle(title, editorName: try await copyEditor(account, device: edit.device, of: row, connection))
        try await connection.run(
            """
            INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, sealed_title, passphrase_id, crypto_salt,
                               crypto_iterations, crypto_wrapped_key, crypto_iv, crypto_tag, sealed_ciphertext, body_format, note_proof_hash)
            VALUES (\(id), \(row.accountID), \(row.folderID), \(timestamp), \(timestamp), FALSE,
                    \(try sealing.sealText(copyTitle, "notes", id, "title")), \(passphraseID), \(record.passphraseSalt),
                    \(record.passphraseIterations), \(record.wrappedKey), \(record.iv), \(record.tag),
                    \(try sealing.seal(record.ciphertext, "notes", id, "ciphertext")), \(Self.stored(record.bodyFormat)),
                    \(record.noteProofHash))
            """, logger)
        return id
    }

    /// The `body_format` column's spelling of a format.
    static func stored(_ format: LockedBodyFormat) -> String { format == .appleNotes ? "apple-notes" : "text" }
}
