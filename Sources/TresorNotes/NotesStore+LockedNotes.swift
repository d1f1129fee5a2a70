import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorKeybag
import TresorNotesDomain

// Locked notes made in the browser (docs/FORMAT.md, "Locked notes made in the browser"): the web
// client derives the passphrase key, wraps note keys and seals bodies and attachment chunks with
// WebCrypto in the format of `LockedNoteCrypto`. The store receives only salts, verifiers, wrapped
// keys and ciphertext — never a passphrase or a key — and keeps them under the keybag layer like
// its own.
extension NotesStore {
    /// The account's current passphrase generation, for the browser to derive its key. The
    /// verifier only while no proof hash is recorded (it would allow offline guessing).
    public func passphraseRecord(account: AccountID) throws -> PassphraseRecord? {
        try pool.read { db in
            guard let id = try AccountRow.fetch(account, db).currentPassphraseID else { return nil }
            let row = try PassphraseRow.fetch(id, db)
            return PassphraseRecord(
                id: row.id, generation: row.generation, salt: row.salt, iterations: row.iterations,
                verifier: row.proofHash == nil ? row.verifier : nil, hasProof: row.proofHash != nil,
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
    /// note locked with passphrase `proof.passphraseID` (which must be current) to its note key
    /// wrapped under the new passphrase. All are written in one transaction, with the new salt,
    /// rounds, verifier and proof hash, so a crash leaves every note with the old or the new
    /// passphrase. `proof` must prove the current passphrase: without it a session could
    /// re-wrap every note with random keys (docs/SECURITY.md). Each note's revision counts up and
    /// it is announced as changed.
    /// - Throws: `conflict` (not current, or not exactly its notes), the proof errors of
    ///   ``enterPassphrase(_:establish:account:)`` — a wrong proof is counted and changes nothing.
    public func changePassphrase(
        proof: PassphraseProof, to material: PassphraseMaterial, hint: String??, rewrappedKeys: [String: Data],
        account: AccountID
    ) throws {
        try checkIterations(material)
        if let hint { try validateHint(hint) }
        let sealing = try sealing()
        for (id, wrapped) in rewrappedKeys where wrapped.count != LockedNoteCrypto.wrappedKeyByteCount {
            throw NotesError.invalid("the wrapped key of note \(id.prefix(64)) must be 24 bytes")
        }
        let passphraseID = proof.passphraseID
        try pool.write { db -> Result<Void, NotesError> in
            let current = try AccountRow.fetch(account, db).currentPassphraseID
            guard let current else { throw NotesError.noPassphrase }
            guard current == passphraseID else {
                throw NotesError.conflict("passphrase \(passphraseID) is not the current one: fetch the passphrase again")
            }
            if let wrong = try checkPassphraseProof(proof, account: account, db, sealing) { return .failure(wrong) }
            let locked = Set(try String.fetchAll(db, sql: "SELECT id FROM notes WHERE passphrase_id = ?", arguments: [passphraseID]))
            guard locked == Set(rewrappedKeys.keys) else {
                throw NotesError.conflict("the notes locked with this passphrase changed meanwhile: fetch them again")
            }
            // A new wrapping is what another device must fetch to open the note: the revision counts up.
            let update = try db.makeStatement(
                sql: """
                    UPDATE notes SET crypto_salt = ?, crypto_iterations = ?, crypto_wrapped_key = ?, revision = revision + 1 WHERE id = ?
                    """)
            for (id, wrapped) in rewrappedKeys {
                try update.execute(arguments: [material.salt, material.iterations, wrapped, id])
            }
            try updateGeneration(passphraseID, to: material, hint: hint, db, sealing)
            try AccountRow.clearWrongEntries(account, db)
            return .success(())
        }.get()
        // A session of the old key would open nothing now.
        sessions.withLock { $0.end(passphraseID) }
        for id in rewrappedKeys.keys { announce(.changed, note: id) }
    }

    /// A locked note's Apple-shaped fields with the keybag layer removed: what the browser opens.
    /// The wrapped key only while its passphrase has no proof hash (then the browser needs it to
    /// check the passphrase); afterwards ``wrappedKey(ofNote:proof:account:)`` hands it out.
    public func lockedRecord(ofNote id: String) throws -> LockedNoteRecord {
        let sealing = try sealing()
        let (row, passphrase) = try pool.read { db -> (NoteRow, PassphraseRow?) in
            let row = try NoteRow.fetch(id, db)
            return (row, try row.passphraseID.map { try PassphraseRow.fetch($0, db) })
        }
        guard let passphraseID = row.passphraseID, let passphrase, let salt = row.salt, let iterations = row.iterations,
            let wrapped = row.wrappedKey, let iv = row.iv, let tag = row.tag, let sealed = row.sealedCiphertext
        else { throw NotesError.wrongLockState("note \(id) is not locked") }
        let hasProof = passphrase.proofHash != nil
        return LockedNoteRecord(
            passphraseID: passphraseID, salt: salt, iterations: iterations, wrappedKey: hasProof ? nil : wrapped, hasProof: hasProof,
            iv: iv, tag: tag,
            ciphertext: try sealing.open(sealed, table: "notes", id: id, column: "ciphertext"),
            bodyFormat: row.bodyFormat == .appleNotes ? .appleNotes : .text)
    }

    /// Locks an unlocked note with ciphertext made in the browser under the current passphrase.
    /// As ``lockNote(_:passphrase:)``: in one transaction the sealed records replace the
    /// plaintext; attachments move to new files holding the browser's chunks; the old files
    /// are zeroed and removed after the commit, and a truncating checkpoint clears `-wal`.
    /// `proof` proves the current passphrase (checked and counted in the transaction): a note
    /// locked under a key nobody holds would be lost.
    /// - Throws: `invalid` for bad shapes, `conflict` when the passphrase or the attachments
    ///   changed meanwhile, the proof errors of ``enterPassphrase(_:establish:account:)``.
    public func lockNote(_ id: String, sealedBy client: ClientLockedNote, proof: Data) throws {
        guard client.wrappedKey.count == LockedNoteCrypto.wrappedKeyByteCount else { throw NotesError.invalid("the wrapped key must be 24 bytes") }
        guard client.noteProofHash.count == LockedNoteCrypto.proofByteCount else { throw NotesError.invalid("the note proof hash must be 32 bytes") }
        guard client.iv.count >= 12, client.iv.count <= 64 else { throw NotesError.invalid("the IV must be 12 to 64 bytes") }
        guard client.tag.count == 16 else { throw NotesError.invalid("the tag must be 16 bytes") }
        guard client.ciphertext.count <= NoteLimits.bodyBytes else {
            throw NotesError.invalid("the body is longer than \(NoteLimits.bodyBytes) bytes")
        }
        let sealing = try sealing()
        let (row, attachments) = try pool.read { db in (try NoteRow.fetch(id, db), try AttachmentRow.fetchAll(note: id, db)) }
        // In every store's order: locked, in Recently Deleted, shared — then the attachments' kinds.
        try pool.read { db in try requireLockable(row, db) }
        try requireLockableKinds(attachments, sealing)
        guard Set(attachments.map(\.id)) == Set(client.attachmentChunks.keys) else {
            throw NotesError.conflict("the note's attachments changed meanwhile: lock it again")
        }
        // Write the new attachment files first (outside the transaction); on failure remove them.
        var newFiles: [String: String] = [:]
        do {
            for attachment in attachments {
                let chunks = client.attachmentChunks[attachment.id]!
                try LockedNoteShape.checkChunkSizes(chunks, plaintextByteCount: attachment.byteCount, attachmentID: attachment.id)
                newFiles[attachment.id] = try AttachmentFile.write(
                    sealedChunks: chunks, attachmentID: attachment.id, in: attachmentsFolder, sealing: sealing)
            }
            let oldFiles = try pool.write { db -> Result<[String], NotesError> in
                let fresh = try NoteRow.fetch(id, db)
                try requireLockable(fresh, db)
                let accountID = AccountID(rawValue: fresh.accountID)
                let account = try AccountRow.fetch(accountID, db)
                guard let currentID = account.currentPassphraseID else { throw NotesError.noPassphrase }
                guard currentID == client.passphraseID else {
                    throw NotesError.conflict("passphrase \(client.passphraseID) is not the current one: fetch the passphrase again")
                }
                let passphraseProof = PassphraseProof(passphraseID: currentID, proof: proof)
                if let wrong = try checkPassphraseProof(passphraseProof, account: accountID, db, sealing) { return .failure(wrong) }
                let current = try PassphraseRow.fetch(currentID, db)
                guard Set(try AttachmentRow.fetchAll(note: id, db).map(\.id)) == Set(newFiles.keys) else {
                    throw NotesError.conflict("the note's attachments changed meanwhile: lock it again")
                }
                try writeLockedRecord(
                    id, passphrase: current, wrappedKey: client.wrappedKey, noteProofHash: client.noteProofHash,
                    body: AESGCM.Sealed(iv: client.iv, ciphertext: client.ciphertext, tag: client.tag), db, sealing)
                var old: [String] = []
                for attachment in try AttachmentRow.fetchAll(note: id, db) {
                    try db.execute(
                        sql: "UPDATE attachments SET file = ?, is_locked = 1 WHERE id = ?", arguments: [newFiles[attachment.id]!, attachment.id])
                    try AttachmentSyncTables.markInOtherForm(attachment.id, db)
                    old.append(attachment.file)
                }
                return .success(old)
            }.get()
            for file in oldFiles { AttachmentFile.remove(file, in: attachmentsFolder) }
        } catch {
            for file in newFiles.values { AttachmentFile.remove(file, in: attachmentsFolder) }
            throw error
        }
        index.upsert(.init(noteID: id, accountID: row.accountID, title: try title(of: row, sealing), body: nil))
        purgeRemovedPages()
        announce(.locked, note: id)
    }

    /// Saves an open locked note edited in the browser: the body sealed again under the same
    /// note key, with a new IV. `noteProof` proves the note key; a note with no note proof hash
    /// yet (locked before proofs, or imported) records it when `passphraseProof` proves the
    /// note's passphrase. Without either a session could overwrite the body with random bytes.
    /// `baseRevision`, when given, must be the stored revision: the server cannot merge
    /// ciphertext, so a save made from an older one is refused and the browser merges.
    /// - Returns: the note as it is now.
    /// - Throws: `staleRevision` (the note changed since `baseRevision`), `passphraseRequired`
    ///   (no proof to check against), the proof errors of ``enterPassphrase(_:establish:account:)``
    ///   — a wrong proof is counted and saves nothing.
    @discardableResult
    public func replaceLockedBody(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        baseRevision: Int64? = nil
    ) throws -> NoteSummary {
        try LockedNoteShape.checkBody(iv: iv, tag: tag, ciphertext: ciphertext)
        let sealing = try sealing()
        let saved = try pool.write { db -> Result<NoteSummary, NotesError> in
            let row = try NoteRow.fetch(id, db)
            guard row.isLocked else { throw NotesError.wrongLockState("note \(id) is not locked") }
            try requireNotDeleted(row)
            if let baseRevision, baseRevision != row.revision { throw NotesError.staleRevision(current: row.revision) }
            if let wrong = try checkNoteProof(row, noteProof: noteProof, passphraseProof: passphraseProof, db, sealing) { return .failure(wrong) }
            try db.execute(
                sql: """
                    UPDATE notes SET crypto_iv = ?, crypto_tag = ?, sealed_ciphertext = ?, body_format = ?, modified = ? WHERE id = ?
                    """,
                arguments: [
                    iv, tag, try sealing.seal(ciphertext, table: "notes", id: id, column: "ciphertext"),
                    BodyFormat.text.rawValue, now.timeIntervalSince1970, id,
                ])
            return .success(try summary(of: NoteRow.fetch(id, db), db, sealing))
        }.get()
        purgeRemovedPages()
        announce(.changed, note: id)
        return saved
    }

    /// Re-wraps a note of an earlier (or imported) passphrase under the current one, with the
    /// note key wrapped in the browser. Only the wrapped key and its passphrase change. The
    /// client proves the current passphrase (`proof`: the new wrapping is under it) and the
    /// note key (`noteProof`, or — for a note with no note proof hash yet — `earlierProof` of
    /// the note's own passphrase); a session without them could replace the key with random bytes.
    /// The note's revision counts up and it is announced as changed.
    /// - Throws: `conflict`, `wrongLockState`, `passphraseRequired`, and the proof errors of
    ///   ``enterPassphrase(_:establish:account:)`` — a wrong proof is counted and changes nothing.
    public func rewrap(_ id: String, proof: PassphraseProof, wrappedKey: Data, noteProof: Data, earlierProof: PassphraseProof?) throws {
        guard wrappedKey.count == LockedNoteCrypto.wrappedKeyByteCount else { throw NotesError.invalid("the wrapped key must be 24 bytes") }
        let sealing = try sealing()
        try pool.write { db -> Result<Void, NotesError> in
            let row = try NoteRow.fetch(id, db)
            guard let old = row.passphraseID else { throw NotesError.wrongLockState("note \(id) is not locked") }
            try requireNotDeleted(row)
            let accountID = AccountID(rawValue: row.accountID)
            let account = try AccountRow.fetch(accountID, db)
            guard account.currentPassphraseID == proof.passphraseID else {
                throw NotesError.conflict("passphrase \(proof.passphraseID) is not the current one: fetch the passphrase again")
            }
            guard old != proof.passphraseID else { throw NotesError.wrongLockState("note \(id) is already locked with the current passphrase") }
            if let wrong = try checkPassphraseProof(proof, account: accountID, db, sealing) { return .failure(wrong) }
            if let wrong = try checkNoteProof(row, noteProof: noteProof, passphraseProof: earlierProof, db, sealing) { return .failure(wrong) }
            try moveNote(id, from: old, to: try PassphraseRow.fetch(proof.passphraseID, db), wrappedKey: wrappedKey, db)
            return .success(())
        }.get()
        announce(.changed, note: id)
    }

    /// A locked note's attachment as its chunks sealed under the note key (keybag layer
    /// removed), in order: what the browser opens.
    public func sealedChunks(ofAttachment attachmentID: String, note id: String) throws -> [Data] {
        let chunks = try openSealedChunks(ofAttachment: attachmentID, note: id)
        var all: [Data] = []
        while let chunk = try chunks.next() { all.append(chunk) }
        return all
    }

    /// A locked note's attachment opened to be read as its chunks sealed under the note key
    /// (keybag layer removed), one when asked: what the browser downloads and opens, a chunk at a
    /// time. Their size together — the attachment's plus each chunk's IV and tag
    /// (``LockedNoteShape``) — is known before the first is read.
    /// - Parameters:
    ///   - attachmentID: the attachment.
    ///   - id: its note.
    /// - Returns: the reader of the sealed chunks, one after another.
    /// - Throws: ``NotesError/notFound(_:)``, ``NotesError/wrongLockState(_:)`` for an attachment
    ///   that is not locked, ``NotesError/damaged(_:)``.
    public func openSealedChunks(ofAttachment attachmentID: String, note id: String) throws -> AttachmentChunks {
        let sealing = try sealing()
        let attachment = try pool.read { db -> AttachmentRow in
            guard let attachment = try AttachmentRow.fetchAll(note: id, db).first(where: { $0.id == attachmentID }) else {
                throw NotesError.notFound("attachment \(attachmentID.prefix(64))")
            }
            return attachment
        }
        guard attachment.isLocked else { throw NotesError.wrongLockState("attachment \(attachmentID) is not locked") }
        let reader = try AttachmentFile.Reader(
            attachment.file, attachmentID: attachment.id, byteCount: attachment.byteCount, in: attachmentsFolder, sealing: sealing,
            layers: .keybag)
        let sealedByteCount =
            attachment.byteCount
            + LockedNoteShape.chunkCount(plaintextByteCount: attachment.byteCount) * LockedNoteShape.chunkOverheadByteCount
        return AttachmentChunks(reader, byteCount: sealedByteCount, attachmentID: attachment.id)
    }

    // MARK: Helpers

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
