import Foundation
import PostgresNIO
import TresorNotesDomain

// Locked notes made in the browser (docs/WEB.md, "Locked notes in the browser"): the browser
// wraps the note key and seals the body and every attachment chunk; the server keeps that
// ciphertext — sealed once more under the server key — with the note's passphrase id, salt,
// rounds, wrapped key and the SHA-256 of the note proof. Every change is guarded by a proof,
// checked and counted in its own transaction.
extension PostgresWebStore: LockedNoteStore {
    func wrappedKey(ofNote id: String, proof: PassphraseProof, account: AccountID) async throws -> Data {
        try await counting { [self] connection in
            let row = try await noteForWrite(id, connection)
            guard let passphraseID = row.passphraseID, let wrapped = row.wrappedKey else {
                throw NotesError.wrongLockState("note \(id) is not locked")
            }
            guard passphraseID == proof.passphraseID else {
                throw NotesError.conflict("note \(id) is locked with passphrase \(passphraseID), not \(proof.passphraseID)")
            }
            if let wrong = try await checkPassphraseProof(proof, account: account, connection) { return .failure(wrong) }
            return .success(wrapped)
        }
    }

    func lockedRecord(ofNote id: String) async throws -> LockedNoteRecord {
        try await db.read { [self] connection in
            let row = try await note(id, connection)
            guard let passphraseID = row.passphraseID, let salt = row.salt, let iterations = row.iterations, let wrapped = row.wrappedKey,
                let iv = row.iv, let tag = row.tag, let sealed = row.sealedCiphertext
            else { throw NotesError.wrongLockState("note \(id) is not locked") }
            let hasProof = try await passphrase(passphraseID, connection).proofHash != nil
            return LockedNoteRecord(
                passphraseID: passphraseID, salt: salt, iterations: iterations, wrappedKey: hasProof ? nil : wrapped, hasProof: hasProof,
                iv: iv, tag: tag, ciphertext: try sealing.open(sealed, "notes", id, "ciphertext"),
                bodyFormat: LockedBodyFormat(stored: row.bodyFormat))
        }
    }

    func lockNote(_ id: String, sealedBy client: ClientLockedNote, proof: Data, quota: StorageQuota?) async throws {
        guard client.wrappedKey.count == LockedNoteShape.wrappedKeyByteCount else { throw NotesError.invalid("the wrapped key must be 24 bytes") }
        guard client.noteProofHash.count == LockedNoteShape.proofByteCount else { throw NotesError.invalid("the note proof hash must be 32 bytes") }
        try LockedNoteShape.checkBody(iv: client.iv, tag: client.tag, ciphertext: client.ciphertext)
        let sealedCiphertext = try sealing.seal(client.ciphertext, "notes", id, "ciphertext")
        try await counting { [self, logger] connection -> Result<Void, NotesError> in
            let row = try await noteForWrite(id, connection)
            guard !row.isLocked else { throw NotesError.wrongLockState("note \(id) is already locked") }
            guard !row.isDeleted else { throw NotesError.invalid("note \(id) is in Recently Deleted: restore it first") }
            guard try await connection.count("SELECT 1 FROM participants WHERE note_id = \(id) LIMIT 1", logger) == 0 else {
                throw NotesError.wrongLockState("note \(id) is shared: stop sharing it before locking it")
            }
            let attachments = try await connection.rows(
                "SELECT id, kind, sealed_name, byte_count FROM attachments WHERE note_id = \(id) ORDER BY created, id", logger,
                as: (String, String, Data, Int).self)
            for (attachmentID, kind, sealedName, _) in attachments {
                guard let kind = AttachmentKind(rawValue: kind) else { throw NotesError.damaged("attachment \(attachmentID)") }
                if !kind.isLockable {
                    throw NotesError.attachmentNotLockable(name: try sealing.openText(sealedName, "attachments", attachmentID, "name"), kind: kind)
                }
            }
            guard Set(attachments.map(\.0)) == Set(client.attachmentChunks.keys) else {
                throw NotesError.conflict("the note's attachments changed meanwhile: lock it again")
            }
            for (attachmentID, _, _, byteCount) in attachments {
                try LockedNoteShape.checkChunkSizes(client.attachmentChunks[attachmentID]!, plaintextByteCount: byteCount, attachmentID: attachmentID)
            }
            let owner = AccountID(rawValue: row.accountID)
            guard let current = try await lockAccount(owner, connection).currentPassphraseID else { throw NotesError.noPassphrase }
            guard current == client.passphraseID else {
                throw NotesError.conflict("passphrase \(client.passphraseID) is not the current one: fetch the passphrase again")
            }
            if let wrong = try await checkPassphraseProof(PassphraseProof(passphraseID: current, proof: proof), account: owner, connection) {
                return .failure(wrong)
            }
            try await check(quota, account: owner, connection)
            let record = try await passphrase(current, connection)
            // The plaintext body goes in the same step as the ciphertext comes. The modified time
            // stays: a lock is no edit.
            try await connection.run(
                """
                UPDATE notes SET sealed_body = NULL, passphrase_id = \(current), crypto_salt = \(record.salt),
                    crypto_iterations = \(record.iterations), crypto_wrapped_key = \(client.wrappedKey),
                    note_proof_hash = \(client.noteProofHash), crypto_iv = \(client.iv), crypto_tag = \(client.tag),
                    sealed_ciphertext = \(sealedCiphertext), body_format = 'text'
                WHERE id = \(id)
                """, logger)
            for (attachmentID, _, _, _) in attachments {
                let chunks = client.attachmentChunks[attachmentID]!
                try await connection.run("DELETE FROM attachment_chunks WHERE attachment_id = \(attachmentID)", logger)
                for (index, chunk) in chunks.enumerated() { try await writeChunk(chunk, index: index, of: attachmentID, connection) }
                try await connection.run(
                    "UPDATE attachments SET is_locked = TRUE, chunk_count = \(chunks.count) WHERE id = \(attachmentID)", logger)
            }
            try await announce(.locked, note: id, connection)
            return .success(())
        }
    }

    func replaceLockedBody(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        baseRevision: Int64?, quota: StorageQuota?
    ) async throws -> NoteSummary {
        try LockedNoteShape.checkBody(iv: iv, tag: tag, ciphertext: ciphertext)
        let sealedCiphertext = try sealing.seal(ciphertext, "notes", id, "ciphertext")
        return try await counting { [self, logger] connection in
            let row = try await noteForWrite(id, connection)
            guard row.isLocked else { throw NotesError.wrongLockState("note \(id) is not locked") }
            guard !row.isDeleted else { throw NotesError.invalid("note \(id) is in Recently Deleted: restore it first") }
            // The server cannot merge ciphertext: an edit of an older revision goes back to the browser.
            if let baseRevision, baseRevision != row.revision { throw NotesError.staleRevision(current: row.revision) }
            if let wrong = try await checkNoteProof(row, noteProof: noteProof, passphraseProof: passphraseProof, connection) {
                return .failure(wrong)
            }
            try await check(quota, account: AccountID(rawValue: row.accountID), connection)
            try await connection.run(
                """
                UPDATE notes SET crypto_iv = \(iv), crypto_tag = \(tag), sealed_ciphertext = \(sealedCiphertext), body_format = 'text',
                    modified = \(now)
                WHERE id = \(id)
                """, logger)
            try await announce(.changed, note: id, connection)
            return .success(try await summary(note(id, connection), connection))
        }
    }

    func saveLockedConflictCopy(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        by editor: AccountID, quota: StorageQuota?
    ) async throws -> NoteSummary {
        try LockedNoteShape.checkBody(iv: iv, tag: tag, ciphertext: ciphertext)
        return try await counting { [self] connection in
            let row = try await noteForWrite(id, connection)
            guard row.isLocked else { throw NotesError.wrongLockState("note \(id) is not locked") }
            guard !row.isDeleted else { throw NotesError.invalid("note \(id) is in Recently Deleted: restore it first") }
            if let wrong = try await checkNoteProof(row, noteProof: noteProof, passphraseProof: passphraseProof, connection) {
                return .failure(wrong)
            }
            try await check(quota, account: AccountID(rawValue: row.accountID), connection)
            // Read again: the check may have recorded the note proof, which the copy shares.
            let fresh = try await note(id, connection)
            let copyID = try await insertConflictCopy(
                of: fresh, title: try openTitle(fresh), body: "", locked: (iv, tag, ciphertext), editor: editor, connection)
            try await announce(.created, note: copyID, connection)
            return .success(try await summary(note(copyID, connection), connection))
        }
    }

    func rewrap(
        _ id: String, proof: PassphraseProof, wrappedKey: Data, noteProof: Data, earlierProof: PassphraseProof?, quota: StorageQuota?
    ) async throws {
        guard wrappedKey.count == LockedNoteShape.wrappedKeyByteCount else { throw NotesError.invalid("the wrapped key must be 24 bytes") }
        try await counting { [self, logger] connection -> Result<Void, NotesError> in
            let row = try await noteForWrite(id, connection)
            guard let old = row.passphraseID else { throw NotesError.wrongLockState("note \(id) is not locked") }
            guard !row.isDeleted else { throw NotesError.invalid("note \(id) is in Recently Deleted: restore it first") }
            let owner = AccountID(rawValue: row.accountID)
            guard try await lockAccount(owner, connection).currentPassphraseID == proof.passphraseID else {
                throw NotesError.conflict("passphrase \(proof.passphraseID) is not the current one: fetch the passphrase again")
            }
            guard old != proof.passphraseID else { throw NotesError.wrongLockState("note \(id) is already locked with the current passphrase") }
            if let wrong = try await checkPassphraseProof(proof, account: owner, connection) { return .failure(wrong) }
            if let wrong = try await checkNoteProof(row, noteProof: noteProof, passphraseProof: earlierProof, connection) { return .failure(wrong) }
            try await check(quota, account: owner, connection)
            let current = try await passphrase(proof.passphraseID, connection)
            try await connection.run(
                """
                UPDATE notes SET passphrase_id = \(current.id), crypto_salt = \(current.salt), crypto_iterations = \(current.iterations),
                    crypto_wrapped_key = \(wrappedKey)
                WHERE id = \(id)
                """, logger)
            try await announce(.changed, note: id, connection)
            return .success(())
        }
    }
}
