import Crypto
import Foundation
import GRDB
import TresorAppleNotes
import TresorCrypto
import TresorKeybag
import TresorNotesDomain

// Locked notes: the passphrase key (from a session or the passphrase), locking, removing a
// lock, re-wrapping under the current passphrase.
extension NotesStore {
    /// Locks an unlocked note with the account's current passphrase (or its open session).
    ///
    /// In one transaction the body is sealed under a new note key and the plaintext rows are
    /// replaced; attachments are re-sealed into new files and the old files removed once the
    /// transaction commits. A truncating checkpoint then clears the old pages from `-wal`.
    public func lockNote(_ id: String, passphrase: Passphrase? = nil) throws {
        let sealing = try sealing()
        let (row, attachments) = try pool.read { db in (try NoteRow.fetch(id, db), try AttachmentRow.fetchAll(note: id, db)) }
        // In every store's order: locked, in Recently Deleted, shared — then the attachments' kinds.
        try pool.read { db in try requireLockable(row, db) }
        try requireLockableKinds(attachments, sealing)
        let account = try pool.read { db in try AccountRow.fetch(AccountID(rawValue: row.accountID), db) }
        guard let currentID = account.currentPassphraseID else { throw NotesError.noPassphrase }
        let current = try pool.read { db in try PassphraseRow.fetch(currentID, db) }
        let passphraseKey = try passphraseKey(for: current, passphrase: passphrase, sealing)
        let noteKey = LockedNoteCrypto.newNoteKey()

        let oldFiles = try pool.write { db -> [String] in
            let fresh = try NoteRow.fetch(id, db)
            try requireLockable(fresh, db)
            let body = try sealing.noteLayer(fresh).open(fresh.sealedBody ?? Data(), table: "notes", id: id, column: "body")
            try writeLockedRecord(
                id, passphrase: current, wrappedKey: try LockedNoteCrypto.wrap(noteKey, with: passphraseKey),
                noteProofHash: LockedNoteCrypto.proofHash(LockedNoteCrypto.noteProof(noteKey)),
                body: try LockedNoteCrypto.sealBody(body, with: noteKey), db, sealing)
            return try resealAttachments(of: id, from: nil, to: noteKey, db, sealing)
        }
        for file in oldFiles { AttachmentFile.remove(file, in: attachmentsFolder) }
        index.upsert(.init(noteID: id, accountID: row.accountID, title: try title(of: row, sealing), body: nil))
        purgeRemovedPages()
        announce(.locked, note: id)
    }

    /// Removes the lock from a note (its passphrase or an open session needed): its body and
    /// attachments go back under the keybag layer alone.
    public func removeLock(_ id: String, passphrase: Passphrase? = nil) throws {
        let sealing = try sealing()
        let row = try pool.read { db in try NoteRow.fetch(id, db) }
        guard row.isLocked else { throw NotesError.wrongLockState("note \(id) is not locked") }
        let noteKey = try noteKey(of: row, passphrase: passphrase, sealing)
        let body = try lockedBody(of: row, noteKey: noteKey, sealing)
        let oldFiles = try pool.write { db -> [String] in
            guard try NoteRow.fetch(id, db).wrappedKey == row.wrappedKey else {
                throw NotesError.wrongLockState("note \(id) changed meanwhile; try again")
            }
            try db.execute(
                sql: """
                    UPDATE notes SET sealed_body = ?, passphrase_id = NULL, crypto_salt = NULL, crypto_iterations = NULL,
                        crypto_wrapped_key = NULL, crypto_iv = NULL, crypto_tag = NULL, sealed_ciphertext = NULL, body_format = ?,
                        note_proof_hash = NULL
                    WHERE id = ?
                    """, arguments: [try sealing.noteLayer(row).sealText(body, table: "notes", id: id, column: "body"), BodyFormat.text.rawValue, id])
            try removeUnusedImportedPassphrase(row.passphraseID!, db)
            // Until the server answers the removal, an attachment it holds sealed that this device
            // lacks is still to be opened here (docs/SYNC.md, "A lock removed travels").
            try AttachmentSyncTables.keepUnlockKey(noteKey, ofNote: id, db, sealing)
            return try resealAttachments(of: id, from: noteKey, to: nil, db, sealing)
        }
        for file in oldFiles { AttachmentFile.remove(file, in: attachmentsFolder) }
        index.upsert(.init(noteID: id, accountID: row.accountID, title: try title(of: row, sealing), body: body))
        purgeRemovedPages()
        announce(.unlocked, note: id)
    }

    /// Re-wraps a note locked with an earlier (or imported) passphrase under the current one
    /// (after a reset: docs/API.md, "The passphrase"). Needs both: `passphrase` (or a session) for
    /// the note's own, `currentPassphrase` (or a session) for the current one. Only the note key is
    /// re-wrapped.
    public func rewrap(_ id: String, passphrase: Passphrase? = nil, currentPassphrase: Passphrase? = nil) throws {
        let sealing = try sealing()
        let row = try pool.read { db in try NoteRow.fetch(id, db) }
        guard row.isLocked else { throw NotesError.wrongLockState("note \(id) is not locked") }
        try requireNotDeleted(row)
        let account = try pool.read { db in try AccountRow.fetch(AccountID(rawValue: row.accountID), db) }
        guard let currentID = account.currentPassphraseID else { throw NotesError.noPassphrase }
        guard row.passphraseID != currentID else { throw NotesError.wrongLockState("note \(id) is already locked with the current passphrase") }
        let noteKey = try noteKey(of: row, passphrase: passphrase, sealing)
        let current = try pool.read { db in try PassphraseRow.fetch(currentID, db) }
        let currentKey = try passphraseKey(for: current, passphrase: currentPassphrase, sealing)
        try pool.write { db in
            guard try NoteRow.fetch(id, db).wrappedKey == row.wrappedKey else {
                throw NotesError.wrongLockState("note \(id) changed meanwhile; try again")
            }
            try moveNote(id, from: row.passphraseID!, to: current, wrappedKey: try LockedNoteCrypto.wrap(noteKey, with: currentKey), db)
        }
        announce(.changed, note: id)
    }

    // MARK: Locked records (the CLI's path and the browser's)

    /// Refuses, inside the locking transaction, a note locked already, in Recently Deleted
    /// (`invalid`: nothing changes it until it is restored) or shared (a shared note is sealed
    /// under a key the server holds, so it must be unshared before it can be locked).
    func requireLockable(_ row: NoteRow, _ db: Database) throws {
        guard !row.isLocked else { throw NotesError.wrongLockState("note \(row.id) is already locked") }
        try requireNotDeleted(row)
        guard try !isShared(row.id, db), try !SharingSyncTables.isShared(row.id, db) else {
            throw NotesError.wrongLockState("note \(row.id) is shared: stop sharing it before locking it")
        }
    }

    /// Refuses attachments of a kind Apple Notes cannot lock, naming the first (docs/API.md,
    /// "Locked notes and secure sessions").
    func requireLockableKinds(_ attachments: [AttachmentRow], _ sealing: ContentSealing) throws {
        for attachment in attachments where !attachment.kind.isLockable {
            throw NotesError.attachmentNotLockable(name: try attachmentName(attachment, sealing), kind: attachment.kind)
        }
    }

    /// Replaces an unlocked note's body by its locked record under `passphrase`: Apple's
    /// fields, the ciphertext under the keybag layer, and the note proof's hash. The note's
    /// modified time stays: a lock is no edit (as pinning and moving are not). The caller's
    /// transaction moves the attachments.
    func writeLockedRecord(
        _ id: String, passphrase: PassphraseRow, wrappedKey: Data, noteProofHash: Data, body: AESGCM.Sealed,
        _ db: Database, _ sealing: ContentSealing
    ) throws {
        try db.execute(
            sql: """
                UPDATE notes SET sealed_body = NULL, passphrase_id = ?, crypto_salt = ?, crypto_iterations = ?,
                    crypto_wrapped_key = ?, note_proof_hash = ?, crypto_iv = ?, crypto_tag = ?, sealed_ciphertext = ?, body_format = ?
                WHERE id = ?
                """,
            arguments: [
                passphrase.id, passphrase.salt, passphrase.iterations, wrappedKey, noteProofHash, body.iv, body.tag,
                try sealing.seal(body.ciphertext, table: "notes", id: id, column: "ciphertext"),
                BodyFormat.text.rawValue, id,
            ])
    }

    /// Moves a locked note from passphrase `old` to `current`, its note key wrapped under it
    /// (a re-wrap); an imported passphrase no note uses any more is forgotten.
    func moveNote(_ id: String, from old: Int64, to current: PassphraseRow, wrappedKey: Data, _ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE notes SET passphrase_id = ?, crypto_salt = ?, crypto_iterations = ?, crypto_wrapped_key = ? WHERE id = ?
                """, arguments: [current.id, current.salt, current.iterations, wrappedKey, id])
        try removeUnusedImportedPassphrase(old, db)
    }

    // MARK: Keys

    /// The note key of a locked note, through its passphrase's session or `passphrase`.
    func noteKey(of row: NoteRow, passphrase: Passphrase?, _ sealing: ContentSealing) throws -> SymmetricKey {
        guard let passphraseID = row.passphraseID, let wrapped = row.wrappedKey else {
            throw NotesError.wrongLockState("note \(row.id) is not locked")
        }
        let record = try pool.read { db in try PassphraseRow.fetch(passphraseID, db) }
        // Imported passphrases have no verifier: the note's own wrapped key checks the passphrase.
        let key = try passphraseKey(for: record, passphrase: passphrase, sealing, note: row)
        guard let noteKey = LockedNoteCrypto.unwrap(wrapped, with: key) else {
            throw NotesError.damaged("the wrapped key of note \(row.id)")
        }
        if row.noteProofHash == nil {
            // Locked before proofs (or imported): the daemon holds the note key now, so it
            // records the note proof a web client will have to present to change the note.
            try pool.write { db in
                try db.execute(
                    sql: "UPDATE notes SET note_proof_hash = ? WHERE id = ? AND crypto_wrapped_key = ? AND note_proof_hash IS NULL",
                    arguments: [LockedNoteCrypto.proofHash(LockedNoteCrypto.noteProof(noteKey)), row.id, wrapped])
            }
        }
        return noteKey
    }

    /// The key of passphrase record `record`: from its open session (which counts as
    /// activity), else derived from `passphrase` and checked — a wrong one is counted, shows
    /// the hint from the third and is delayed from the fifth. Success opens the session.
    func passphraseKey(
        for record: PassphraseRow, passphrase: Passphrase?, _ sealing: ContentSealing, note: NoteRow? = nil
    ) throws -> SymmetricKey {
        let timeout = settings.sessionIdleTimeout, now = now
        // A keybag lock ends every session (docs/API.md, "Locked notes and secure sessions"),
        // whether or not the daemon said so yet.
        if keybag.lockState != .unlocked { lockNow() }
        if let key = sessions.withLock({ $0.key(for: record.id, now: now, timeout: timeout) }) { return key }
        guard let passphrase else {
            throw NotesError.passphraseRequired(try pool.read { db in try lockInfo(record, db, sealing) })
        }
        return try checkedKey(for: record, passphrase: passphrase, sealing, note: note, opensSession: true)
    }

    /// Derives and checks `passphrase` against `record`, counting failures; never uses a
    /// session (passphrase change must be typed: docs/API.md, "The passphrase").
    ///
    /// The attempt is counted as a failure in the database *before* the key derivation runs,
    /// and the count cleared again when it was right: concurrent wrong entries each find the
    /// others' reservations, so no more are checked than the delays allow (docs/SECURITY.md §3.12.1).
    /// A right entry also records the passphrase's proof hash if it has none, or a different
    /// one (the daemon checked the passphrase itself, so its proof is authoritative).
    func checkedKey(
        for record: PassphraseRow, passphrase: Passphrase, _ sealing: ContentSealing, note: NoteRow? = nil, opensSession: Bool
    ) throws -> SymmetricKey {
        let accountID = AccountID(rawValue: record.accountID)
        let hint = try hint(of: record, sealing)
        let now = now
        let reserved = try pool.write { db -> AccountRow in
            let account = try AccountRow.fetch(accountID, db)
            if let wait = GuessingDelay.remaining(afterFailures: account.failedEntries, lastFailure: account.lastFailure, now: now) {
                throw NotesError.throttled(retryAfterSeconds: wait, hint: account.failedEntries >= NoteRules.hintAfterFailures ? hint : nil)
            }
            return try AccountRow.countWrongEntry(accountID, at: now, db)
        }
        let salt = note?.salt ?? record.salt, iterations = note?.iterations ?? record.iterations
        let key: SymmetricKey
        do {
            key = try LockedNoteCrypto.passphraseKey(passphrase, salt: salt, iterations: iterations)
        } catch {
            // Not a wrong passphrase (a damaged record): give the reservation back.
            try? pool.write { db in try AccountRow.releaseReservedEntry(accountID, db) }
            throw error
        }
        let check = record.verifier ?? note?.wrappedKey ?? Data()
        guard LockedNoteCrypto.unwrap(check, with: key) != nil else {
            let failures = reserved.failedEntries
            throw NotesError.wrongPassphrase(
                failedAttempts: failures, hint: failures >= NoteRules.hintAfterFailures ? hint : nil,
                retryAfterSeconds: GuessingDelay.remaining(afterFailures: failures, lastFailure: now, now: now))
        }
        try pool.write { db in try AccountRow.clearWrongEntries(accountID, db) }
        if salt == record.salt && iterations == record.iterations { try recordProofIfNeeded(of: record, key: key) }
        if opensSession && keybag.lockState == .unlocked { sessions.withLock { $0.open(record.id, key: key, now: now) } }
        return key
    }

    /// Records the proof hash of passphrase `record` from its key, checked by the daemon, when
    /// the stored one is missing or differs (one written in the upgrade window by a client
    /// that did not hold the passphrase is replaced).
    func recordProofIfNeeded(of record: PassphraseRow, key: SymmetricKey) throws {
        let hash = LockedNoteCrypto.proofHash(LockedNoteCrypto.passphraseProof(key))
        guard record.proofHash != hash else { return }
        try pool.write { db in try recordProofHash(hash, of: record.id, db) }
    }

    /// The body of a locked note, opened with its note key.
    func lockedBody(of row: NoteRow, noteKey: SymmetricKey, _ sealing: ContentSealing) throws -> String {
        guard let iv = row.iv, let tag = row.tag, let sealedCiphertext = row.sealedCiphertext else {
            throw NotesError.damaged("the body of note \(row.id)")
        }
        let ciphertext = try sealing.open(sealedCiphertext, table: "notes", id: row.id, column: "ciphertext")
        guard let plaintext = try? LockedNoteCrypto.openBody(AESGCM.Sealed(iv: iv, ciphertext: ciphertext, tag: tag), with: noteKey) else {
            throw NotesError.damaged("the body of note \(row.id)")
        }
        switch row.bodyFormat {
        case .text:
            guard let text = String(data: plaintext, encoding: .utf8) else { throw NotesError.damaged("the body of note \(row.id)") }
            return text
        case .appleNotes:
            do {
                return try AppleNoteBody.markdown(fromGzippedProtobuf: plaintext)
            } catch {
                throw NotesError.damaged("the Apple Notes body of note \(row.id)")
            }
        }
    }

    /// Re-seals every attachment of a note under `newKey` (nil: the keybag layer alone) into
    /// new files and points the rows at them. Returns the old files, to remove after commit.
    func resealAttachments(
        of noteID: String, from oldKey: SymmetricKey?, to newKey: SymmetricKey?, _ db: Database, _ sealing: ContentSealing
    ) throws -> [String] {
        var oldFiles: [String] = []
        for attachment in try AttachmentRow.fetchAll(note: noteID, db) {
            // Chunk by chunk: a large attachment is never held whole. A failure drops the writer,
            // which removes its file.
            let writer = try AttachmentFile.Writer(attachmentID: attachment.id, in: attachmentsFolder, sealing: sealing, noteKey: newKey)
            try AttachmentFile.forEachChunk(
                attachment.file, attachmentID: attachment.id, byteCount: attachment.byteCount, in: attachmentsFolder,
                sealing: sealing, noteKey: oldKey, writer.append)
            let file = try writer.finish()
            do {
                try db.execute(
                    sql: "UPDATE attachments SET file = ?, is_locked = ? WHERE id = ?",
                    arguments: [file, newKey != nil, attachment.id])
                try AttachmentSyncTables.markInOtherForm(attachment.id, db)
            } catch {
                AttachmentFile.remove(file, in: attachmentsFolder)
                throw error
            }
            oldFiles.append(attachment.file)
        }
        return oldFiles
    }

    /// An imported passphrase no note uses any more is forgotten.
    func removeUnusedImportedPassphrase(_ id: Int64, _ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM passphrases WHERE id = ? AND source = ? AND NOT EXISTS (SELECT 1 FROM notes WHERE passphrase_id = ?)
                """, arguments: [id, LockInfo.Source.appleNotes.rawValue, id])
    }
}
