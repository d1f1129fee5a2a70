import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorKeybag

// Locked notes made in the browser (SPEC §5): the web client derives the passphrase key, wraps
// note keys and seals bodies and attachment chunks with WebCrypto in the format of
// `LockedNoteCrypto`. The store receives only salts, verifiers, wrapped keys and ciphertext —
// never a passphrase or a key — and keeps them under the keybag layer like its own.
extension NotesStore {
    /// The account's current passphrase generation, for the browser to derive its key.
    public func passphraseRecord(account: AccountID) throws -> PassphraseRecord? {
        try pool.read { db in
            guard let id = try AccountRow.fetch(account, db).currentPassphraseID else { return nil }
            let row = try PassphraseRow.fetch(id, db)
            return PassphraseRecord(
                id: row.id, generation: row.generation, salt: row.salt, iterations: row.iterations, verifier: row.verifier,
                setOn: row.created, hasHint: row.sealedHint != nil)
        }
    }

    /// Sets the account's first passphrase from material made in the browser.
    public func setPassphrase(_ material: PassphraseMaterial, hint: String?, account: AccountID) throws {
        try insertGeneration(material, hint: hint, account: account, requireNone: true)
    }

    /// Resets a forgotten passphrase with material made in the browser: a new generation for
    /// notes locked from now on. The caller has checked the account password.
    public func resetPassphrase(to material: PassphraseMaterial, hint: String?, account: AccountID) throws {
        try insertGeneration(material, hint: hint, account: account, requireNone: false)
    }

    /// Changes the passphrase with keys re-wrapped in the browser: `rewrappedKeys` maps every
    /// note locked with passphrase `passphraseID` (which must be current) to its note key
    /// wrapped under the new passphrase. All are written in one transaction, with the new salt,
    /// rounds and verifier, so a crash leaves every note with the old or the new passphrase.
    /// Unwrapping the old keys needed the old passphrase: the change cannot be made without it.
    public func changePassphrase(
        from passphraseID: Int64, to material: PassphraseMaterial, hint: String??, rewrappedKeys: [String: Data],
        account: AccountID
    ) throws {
        try checkIterations(material)
        if let hint { try validateHint(hint) }
        let sealing = try sealing()
        for (id, wrapped) in rewrappedKeys where wrapped.count != LockedNoteCrypto.wrappedKeyByteCount {
            throw NotesError.invalid("the wrapped key of note \(id.prefix(64)) must be 24 bytes")
        }
        try pool.write { db in
            let current = try AccountRow.fetch(account, db).currentPassphraseID
            guard let current else { throw NotesError.noPassphrase }
            guard current == passphraseID else {
                throw NotesError.conflict("passphrase \(passphraseID) is not the current one: fetch the passphrase again")
            }
            let locked = Set(try String.fetchAll(db, sql: "SELECT id FROM notes WHERE passphrase_id = ?", arguments: [passphraseID]))
            guard locked == Set(rewrappedKeys.keys) else {
                throw NotesError.conflict("the notes locked with this passphrase changed meanwhile: fetch them again")
            }
            let update = try db.makeStatement(sql: "UPDATE notes SET crypto_salt = ?, crypto_iterations = ?, crypto_wrapped_key = ? WHERE id = ?")
            for (id, wrapped) in rewrappedKeys {
                try update.execute(arguments: [material.salt, material.iterations, wrapped, id])
            }
            try updateGeneration(passphraseID, to: material, hint: hint, db, sealing)
            try AccountRow.clearWrongEntries(account, db)
        }
        // A session of the old key would open nothing now.
        sessions.withLock { $0.end(passphraseID) }
    }

    /// Records a passphrase entry the browser checked itself: a wrong one counts like a wrong
    /// one typed into the CLI (hint from the third, delays from the fifth), a right one resets
    /// the count. A check while a delay runs is refused with `throttled`.
    public func recordPassphraseEntry(passphraseID: Int64, succeeded: Bool, account: AccountID) throws -> PassphraseEntryOutcome {
        let sealing = try sealing()
        let now = now
        return try pool.write { db in
            let record = try PassphraseRow.fetch(passphraseID, db)
            guard record.accountID == account.rawValue else { throw NotesError.notFound("passphrase \(passphraseID)") }
            var row = try AccountRow.fetch(account, db)
            let hint = try hint(of: try PassphraseRow.fetch(row.currentPassphraseID ?? passphraseID, db), sealing)
            if !succeeded, let wait = GuessingDelay.remaining(afterFailures: row.failedEntries, lastFailure: row.lastFailure, now: now) {
                throw NotesError.throttled(retryAfterSeconds: wait, hint: row.failedEntries >= NotesSettings.hintAfterFailures ? hint : nil)
            }
            if succeeded {
                try AccountRow.clearWrongEntries(account, db)
                row = try AccountRow.fetch(account, db)
            } else {
                row = try AccountRow.countWrongEntry(account, at: now, db)
            }
            return PassphraseEntryOutcome(
                failedAttempts: row.failedEntries, hint: row.failedEntries >= NotesSettings.hintAfterFailures ? hint : nil,
                retryAfterSeconds: GuessingDelay.remaining(afterFailures: row.failedEntries, lastFailure: row.lastFailure, now: now))
        }
    }

    /// A locked note's Apple-shaped fields with the keybag layer removed: what the browser opens.
    public func lockedRecord(ofNote id: String) throws -> LockedNoteRecord {
        let sealing = try sealing()
        let row = try pool.read { db in try NoteRow.fetch(id, db) }
        guard let passphraseID = row.passphraseID, let salt = row.salt, let iterations = row.iterations,
              let wrapped = row.wrappedKey, let iv = row.iv, let tag = row.tag, let sealed = row.sealedCiphertext
        else { throw NotesError.wrongLockState("note \(id) is not locked") }
        return LockedNoteRecord(
            passphraseID: passphraseID, salt: salt, iterations: iterations, wrappedKey: wrapped, iv: iv, tag: tag,
            ciphertext: try sealing.open(sealed, table: "notes", id: id, column: "ciphertext"), bodyFormat: row.bodyFormat.rawValue)
    }

    /// Locks an unlocked note with ciphertext made in the browser under the current passphrase.
    /// As ``lockNote(_:passphrase:)``: in one transaction the sealed records replace the
    /// plaintext; attachments move to new files holding the browser's chunks; the old files
    /// are zeroed and removed after the commit, and a truncating checkpoint clears `-wal`.
    public func lockNote(_ id: String, sealedBy client: ClientLockedNote) throws {
        guard client.wrappedKey.count == LockedNoteCrypto.wrappedKeyByteCount else { throw NotesError.invalid("the wrapped key must be 24 bytes") }
        guard client.iv.count >= 12, client.iv.count <= 64 else { throw NotesError.invalid("the IV must be 12 to 64 bytes") }
        guard client.tag.count == 16 else { throw NotesError.invalid("the tag must be 16 bytes") }
        guard client.ciphertext.count <= NoteLimits.bodyBytes else { throw NotesError.invalid("the body is longer than \(NoteLimits.bodyBytes) bytes") }
        let sealing = try sealing()
        let (row, attachments) = try pool.read { db in (try NoteRow.fetch(id, db), try AttachmentRow.fetchAll(note: id, db)) }
        guard !row.isLocked else { throw NotesError.wrongLockState("note \(id) is already locked") }
        try requireLockableKinds(attachments, sealing)
        guard Set(attachments.map(\.id)) == Set(client.attachmentChunks.keys) else {
            throw NotesError.conflict("the note's attachments changed meanwhile: lock it again")
        }
        // Write the new attachment files first (outside the transaction); on failure remove them.
        var newFiles: [String: String] = [:]
        do {
            for attachment in attachments {
                let chunks = client.attachmentChunks[attachment.id]!
                try Self.checkChunkSizes(chunks, plaintextByteCount: attachment.byteCount, attachmentID: attachment.id)
                newFiles[attachment.id] = try AttachmentFile.write(
                    sealedChunks: chunks, attachmentID: attachment.id, in: attachmentsFolder, sealing: sealing)
            }
            let oldFiles = try pool.write { db -> [String] in
                let fresh = try NoteRow.fetch(id, db)
                try requireLockable(fresh, db)
                let account = try AccountRow.fetch(AccountID(rawValue: fresh.accountID), db)
                guard let currentID = account.currentPassphraseID else { throw NotesError.noPassphrase }
                guard currentID == client.passphraseID else {
                    throw NotesError.conflict("passphrase \(client.passphraseID) is not the current one: fetch the passphrase again")
                }
                let current = try PassphraseRow.fetch(currentID, db)
                guard Set(try AttachmentRow.fetchAll(note: id, db).map(\.id)) == Set(newFiles.keys) else {
                    throw NotesError.conflict("the note's attachments changed meanwhile: lock it again")
                }
                try writeLockedRecord(
                    id, passphrase: current, wrappedKey: client.wrappedKey,
                    body: AESGCM.Sealed(iv: client.iv, ciphertext: client.ciphertext, tag: client.tag), modified: now, db, sealing)
                var old: [String] = []
                for attachment in try AttachmentRow.fetchAll(note: id, db) {
                    try db.execute(sql: "UPDATE attachments SET file = ?, is_locked = 1 WHERE id = ?", arguments: [newFiles[attachment.id]!, attachment.id])
                    old.append(attachment.file)
                }
                return old
            }
            for file in oldFiles { AttachmentFile.remove(file, in: attachmentsFolder) }
        } catch {
            for file in newFiles.values { AttachmentFile.remove(file, in: attachmentsFolder) }
            throw error
        }
        index.upsert(.init(noteID: id, accountID: row.accountID, title: try title(of: row, sealing), body: nil))
        purgeRemovedPages()
    }

    /// Saves an open locked note edited in the browser: the body sealed again under the same
    /// note key, with a new IV.
    public func replaceLockedBody(ofNote id: String, iv: Data, tag: Data, ciphertext: Data) throws {
        guard iv.count >= 12, iv.count <= 64, tag.count == 16 else { throw NotesError.invalid("the IV must be 12 to 64 bytes and the tag 16") }
        guard ciphertext.count <= NoteLimits.bodyBytes else { throw NotesError.invalid("the body is longer than \(NoteLimits.bodyBytes) bytes") }
        let sealing = try sealing()
        try pool.write { db in
            guard try NoteRow.fetch(id, db).isLocked else { throw NotesError.wrongLockState("note \(id) is not locked") }
            try db.execute(sql: """
                UPDATE notes SET crypto_iv = ?, crypto_tag = ?, sealed_ciphertext = ?, body_format = ?, modified = ? WHERE id = ?
                """, arguments: [iv, tag, try sealing.seal(ciphertext, table: "notes", id: id, column: "ciphertext"),
                                 BodyFormat.text.rawValue, now.timeIntervalSince1970, id])
        }
        purgeRemovedPages()
    }

    /// Re-wraps a note of an earlier (or imported) passphrase under the current one, with the
    /// note key wrapped in the browser. Only the wrapped key and its passphrase change.
    public func rewrap(_ id: String, to passphraseID: Int64, wrappedKey: Data) throws {
        guard wrappedKey.count == LockedNoteCrypto.wrappedKeyByteCount else { throw NotesError.invalid("the wrapped key must be 24 bytes") }
        try pool.write { db in
            let row = try NoteRow.fetch(id, db)
            guard let old = row.passphraseID else { throw NotesError.wrongLockState("note \(id) is not locked") }
            let account = try AccountRow.fetch(AccountID(rawValue: row.accountID), db)
            guard account.currentPassphraseID == passphraseID else {
                throw NotesError.conflict("passphrase \(passphraseID) is not the current one: fetch the passphrase again")
            }
            guard old != passphraseID else { throw NotesError.wrongLockState("note \(id) is already locked with the current passphrase") }
            try moveNote(id, from: old, to: try PassphraseRow.fetch(passphraseID, db), wrappedKey: wrappedKey, db)
        }
    }

    /// A locked note's attachment as its chunks sealed under the note key (keybag layer
    /// removed), in order: what the browser opens.
    public func sealedChunks(ofAttachment attachmentID: String, note id: String) throws -> [Data] {
        let sealing = try sealing()
        let attachment = try pool.read { db -> AttachmentRow in
            guard let attachment = try AttachmentRow.fetchAll(note: id, db).first(where: { $0.id == attachmentID }) else {
                throw NotesError.notFound("attachment \(attachmentID.prefix(64))")
            }
            return attachment
        }
        guard attachment.isLocked else { throw NotesError.wrongLockState("attachment \(attachmentID) is not locked") }
        return try AttachmentFile.readChunks(
            attachment.file, attachmentID: attachment.id, byteCount: attachment.byteCount, in: attachmentsFolder, sealing: sealing)
    }

    // MARK: Helpers

    /// Chunk *i* of a locked attachment holds min(1 MiB, rest) plaintext bytes plus a 12-byte
    /// IV and a 16-byte tag: anything else is refused before it is stored.
    static func checkChunkSizes(_ chunks: [Data], plaintextByteCount: Int, attachmentID: String) throws {
        let chunkBytes = AttachmentFile.chunkByteCount
        let expectedCount = max(1, (plaintextByteCount + chunkBytes - 1) / chunkBytes)
        guard chunks.count == expectedCount else {
            throw NotesError.invalid("attachment \(attachmentID) needs \(expectedCount) sealed chunks, not \(chunks.count)")
        }
        for (index, chunk) in chunks.enumerated() {
            let plaintext = min(chunkBytes, plaintextByteCount - index * chunkBytes)
            guard chunk.count == plaintext + AESGCM.defaultIVByteCount + AESGCM.tagByteCount else {
                throw NotesError.invalid("sealed chunk \(index) of attachment \(attachmentID) has the wrong size")
            }
        }
    }

    private func checkIterations(_ material: PassphraseMaterial) throws {
        guard material.iterations >= minimumIterations else {
            throw NotesError.invalid("a passphrase needs at least \(minimumIterations) PBKDF2 iterations")
        }
    }

    private func insertGeneration(_ material: PassphraseMaterial, hint: String?, account: AccountID, requireNone: Bool) throws {
        try checkIterations(material)
        if let hint { try validateHint(hint) }
        _ = try insertGeneration(material, hint: hint, account: account, try sealing(), requireNone: requireNone)
    }
}
