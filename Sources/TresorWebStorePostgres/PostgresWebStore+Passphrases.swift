import Foundation
import PostgresNIO
import TresorNotesDomain

// Passphrases made in the browser (docs/WEB.md, "Locked notes in the browser"): the server keeps
// each generation's salt, rounds, verifier, the SHA-256 of its proof and its sealed hint — never
// a passphrase or a key. Proofs are checked, and wrong ones counted, under the account's row lock
// in the transaction of the change they guard (docs/SECURITY.md, "Locked-note integrity on the
// web"), so concurrent wrong proofs on several instances cannot outrun the count or its waits
// (``GuessingDelay``).
extension PostgresWebStore {
    func passphraseStatus(account: AccountID) async throws -> PassphraseStatus {
        let now = clock()
        return try await db.read { [self] connection in
            let state = try await accountState(account, connection)
            let current = try await state.currentPassphraseID.asyncMap { try await passphrase($0, connection) }
            return PassphraseStatus(
                isSet: current != nil, generation: current?.generation, setOn: current.map { Date(timeIntervalSince1970: $0.created) },
                hasHint: current?.sealedHint != nil, failedAttempts: state.failedEntries,
                retryAfterSeconds: GuessingDelay.remaining(afterFailures: state.failedEntries, lastFailure: state.lastFailure, now: now),
                keychainUnlock: false, sessionOpen: false)
        }
    }

    func passphraseHint(account: AccountID) async throws -> String? {
        try await db.read { [self] connection in
            guard let id = try await accountState(account, connection).currentPassphraseID else { throw NotesError.noPassphrase }
            return try hint(of: try await passphrase(id, connection))
        }
    }

    func passphraseRecord(account: AccountID) async throws -> PassphraseRecord? {
        try await db.read { [self] connection in
            guard let id = try await accountState(account, connection).currentPassphraseID else { return nil }
            let row = try await passphrase(id, connection)
            return PassphraseRecord(
                id: row.id, generation: row.generation, salt: row.salt, iterations: row.iterations,
                verifier: row.proofHash == nil ? row.verifier : nil, hasProof: row.proofHash != nil,
                setOn: Date(timeIntervalSince1970: row.created), hasHint: row.sealedHint != nil)
        }
    }

    func setPassphrase(_ material: PassphraseMaterial, hint: String?, account: AccountID) async throws {
        try checkIterations(material)
        try NoteRules.validateHint(hint)
        try await db.transaction { [self] connection in
            guard try await lockAccount(account, connection).currentPassphraseID == nil else { throw NotesError.passphraseAlreadySet }
            try await insertGeneration(material, hint: hint, account: account, connection)
        }
    }

    func resetPassphrase(to material: PassphraseMaterial, hint: String?, account: AccountID) async throws {
        try checkIterations(material)
        try NoteRules.validateHint(hint)
        try await db.transaction { [self] connection in
            try await lockAccount(account, connection)
            try await insertGeneration(material, hint: hint, account: account, connection)
        }
    }

    func changePassphrase(
        proof: PassphraseProof, to material: PassphraseMaterial, hint: String??, rewrappedKeys: [String: Data], account: AccountID
    ) async throws {
        try checkIterations(material)
        if let hint { try NoteRules.validateHint(hint) }
        for (id, wrapped) in rewrappedKeys where wrapped.count != LockedNoteShape.wrappedKeyByteCount {
            throw NotesError.invalid("the wrapped key of note \(id.prefix(64)) must be 24 bytes")
        }
        let passphraseID = proof.passphraseID
        try await counting { [self, logger] connection -> Result<Void, NotesError> in
            guard let current = try await lockAccount(account, connection).currentPassphraseID else { throw NotesError.noPassphrase }
            guard current == passphraseID else {
                throw NotesError.conflict("passphrase \(passphraseID) is not the current one: fetch the passphrase again")
            }
            if let wrong = try await checkPassphraseProof(proof, account: account, connection) { return .failure(wrong) }
            let locked = Set(
                try await connection.column(
                    "SELECT id FROM notes WHERE passphrase_id = \(passphraseID) FOR UPDATE", logger, as: String.self))
            guard locked == Set(rewrappedKeys.keys) else {
                throw NotesError.conflict("the notes locked with this passphrase changed meanwhile: fetch them again")
            }
            // A new wrapping is what another device must fetch to open the note: the revision counts up.
            for (id, wrapped) in rewrappedKeys {
                try await connection.run(
                    """
                    UPDATE notes SET crypto_salt = \(material.salt), crypto_iterations = \(material.iterations), crypto_wrapped_key = \(wrapped),
                        revision = revision + 1
                    WHERE id = \(id)
                    """, logger)
                try await announce(.changed, note: id, connection)
            }
            let sealedHint = try hint.map { try $0.map { try sealing.sealText($0, "passphrases", "\(passphraseID)", "hint") } }
            try await connection.run(
                """
                UPDATE passphrases SET salt = \(material.salt), iterations = \(material.iterations), verifier = \(material.verifier),
                    proof_hash = \(material.proofHash), created = \(now),
                    sealed_hint = CASE WHEN \(sealedHint != nil) THEN \(sealedHint ?? nil) ELSE sealed_hint END
                WHERE id = \(passphraseID)
                """, logger)
            try await clearWrongEntries(account, connection)
            try await announcePassphraseChange(account, connection)
            return .success(())
        }
    }

    func enterPassphrase(_ proof: PassphraseProof, establish: Bool, account: AccountID) async throws -> PassphraseEntryOutcome {
        guard proof.proof.count == LockedNoteShape.proofByteCount else { throw NotesError.invalid("a proof is 32 bytes") }
        return try await counting { [self, logger] connection in
            try await lockAccount(account, connection)
            let record = try await passphrase(proof.passphraseID, of: account, connection)
            try await refuseWhileDelayed(account, record, connection)
            var established = false
            if let hash = record.proofHash {
                guard LockedNoteShape.matches(proof.proof, hash: hash) else { return .failure(try await countWrong(account, record, connection)) }
            } else {
                // A passphrase from before proofs: the browser checked it against the verifier.
                guard establish else { return .failure(try await countWrong(account, record, connection)) }
                try await connection.run(
                    "UPDATE passphrases SET proof_hash = \(LockedNoteShape.proofHash(proof.proof)) WHERE id = \(record.id)", logger)
                try await announcePassphraseChange(account, connection)
                established = true
            }
            try await clearWrongEntries(account, connection)
            return .success(PassphraseEntryOutcome(established: established, failedAttempts: 0))
        }
    }

    // MARK: Rows and checks

    /// A row of `passphrases`.
    struct StoredPassphrase: Sendable {
        var id: Int64
        var accountID: String
        var source: LockInfo.Source
        /// Nil for an Apple Notes passphrase, as its verifier.
        var generation: Int?
        var salt: Data
        var iterations: Int
        var verifier: Data?
        var proofHash: Data?
        var sealedHint: Data?
        var created: Double
    }

    /// Passphrase record `id`.
    func passphrase(_ id: Int64, _ connection: PostgresConnection) async throws -> StoredPassphrase {
        guard
            let row = try await connection.row(
                """
                SELECT id, account_id, source, generation, salt, iterations, verifier, proof_hash, sealed_hint, created
                FROM passphrases WHERE id = \(id)
                """, logger, as: (Int64, String, String, Int?, Data, Int, Data?, Data?, Data?, Double).self),
            let source = LockInfo.Source(rawValue: row.2)
        else { throw NotesError.damaged("passphrase record \(id)") }
        return StoredPassphrase(
            id: row.0, accountID: row.1, source: source, generation: row.3, salt: row.4, iterations: row.5, verifier: row.6, proofHash: row.7,
            sealedHint: row.8, created: row.9)
    }

    /// Passphrase record `id` if it is `account`'s; another account's answers as a missing one.
    func passphrase(_ id: Int64, of account: AccountID, _ connection: PostgresConnection) async throws -> StoredPassphrase {
        guard let row = try? await passphrase(id, connection), row.accountID == account.rawValue else {
            throw NotesError.notFound("passphrase \(id)")
        }
        return row
    }

    func hint(of passphrase: StoredPassphrase) throws -> String? {
        try passphrase.sealedHint.map { try sealing.openText($0, "passphrases", "\(passphrase.id)", "hint") }
    }

    /// How a note locked with passphrase `id` is shown: its generation, whether it is current,
    /// an earlier one's hint. (A browser keeps its own secure sessions: never open here.)
    func lockInfo(_ id: Int64, _ connection: PostgresConnection) async throws -> LockInfo {
        let record = try await passphrase(id, connection)
        let current = try await accountState(AccountID(rawValue: record.accountID), connection).currentPassphraseID
        let isCurrent = current == id
        return LockInfo(
            source: record.source, passphraseID: id, generation: record.generation, isCurrent: isCurrent,
            hint: isCurrent ? nil : try hint(of: record), setOn: Date(timeIntervalSince1970: record.created), isOpen: false)
    }

    func checkIterations(_ material: PassphraseMaterial) throws {
        guard material.iterations >= minimumIterations else {
            throw NotesError.invalid("a passphrase needs at least \(minimumIterations) PBKDF2 iterations")
        }
    }

    /// Writes a new generation (the account's next number) and makes it current, clearing the
    /// wrong-entry count (the caller holds the account's row lock).
    func insertGeneration(_ material: PassphraseMaterial, hint: String?, account: AccountID, _ connection: PostgresConnection) async throws {
        let generation =
            (try await connection.value(
                "SELECT MAX(generation) FROM passphrases WHERE account_id = \(account.rawValue)", logger, as: Int?.self) ?? nil) ?? 0
        guard
            let id = try await connection.value(
                """
                INSERT INTO passphrases (account_id, generation, salt, iterations, verifier, proof_hash, created)
                VALUES (\(account.rawValue), \(generation + 1), \(material.salt), \(material.iterations), \(material.verifier),
                        \(material.proofHash), \(now))
                RETURNING id
                """, logger, as: Int64.self)
        else { throw NotesError.unavailable("the passphrase was not recorded: try again") }
        if let hint {
            // Sealed once its row id is known: the id is part of what the seal binds.
            let sealed = try sealing.sealText(hint, "passphrases", "\(id)", "hint")
            try await connection.run("UPDATE passphrases SET sealed_hint = \(sealed) WHERE id = \(id)", logger)
        }
        try await connection.run(
            """
            UPDATE accounts SET current_passphrase_id = \(id), failed_passphrase_entries = 0, last_passphrase_failure = NULL
            WHERE id = \(account.rawValue)
            """, logger)
        try await announcePassphraseChange(account, connection)
    }

    /// Tells the account's devices, at commit, that its notes passphrase changed (docs/SYNC.md,
    /// "Live updates"): a new generation, its hint, its proof, which one is current.
    func announcePassphraseChange(_ account: AccountID, _ connection: PostgresConnection) async throws {
        try await notify(.notesPassphrase(account: account, device: nil), connection)
    }

    func clearWrongEntries(_ account: AccountID, _ connection: PostgresConnection) async throws {
        try await connection.run(
            "UPDATE accounts SET failed_passphrase_entries = 0, last_passphrase_failure = NULL WHERE id = \(account.rawValue)", logger)
    }

    /// Throws `throttled` while the account's wait runs: the attempt is not checked at all.
    func refuseWhileDelayed(_ account: AccountID, _ record: StoredPassphrase, _ connection: PostgresConnection) async throws {
        let state = try await accountState(account, connection)
        if let wait = GuessingDelay.remaining(afterFailures: state.failedEntries, lastFailure: state.lastFailure, now: clock()) {
            throw NotesError.throttled(retryAfterSeconds: wait, hint: state.failedEntries >= NoteRules.hintAfterFailures ? try hint(of: record) : nil)
        }
    }

    /// Counts a wrong entry and returns the error that says so (the hint from the third, the
    /// wait from the fifth).
    func countWrong(_ account: AccountID, _ record: StoredPassphrase, _ connection: PostgresConnection) async throws -> NotesError {
        let now = clock()
        let failures =
            try await connection.value(
                """
                UPDATE accounts SET failed_passphrase_entries = failed_passphrase_entries + 1, last_passphrase_failure = \(now.timeIntervalSince1970)
                WHERE id = \(account.rawValue) RETURNING failed_passphrase_entries
                """, logger, as: Int.self) ?? 0
        return .wrongPassphrase(
            failedAttempts: failures, hint: failures >= NoteRules.hintAfterFailures ? try hint(of: record) : nil,
            retryAfterSeconds: GuessingDelay.remaining(afterFailures: failures, lastFailure: now, now: now))
    }

    /// Checks `proof` against its passphrase's proof hash: nil when right (the count cleared),
    /// or the wrong-entry error after counting it — the caller returns it from its transaction so
    /// the count commits.
    /// - Throws: `throttled` while a wait runs; `passphraseRequired` when no proof is recorded yet.
    func checkPassphraseProof(_ proof: PassphraseProof, account: AccountID, _ connection: PostgresConnection) async throws -> NotesError? {
        try await lockAccount(account, connection)
        let record = try await passphrase(proof.passphraseID, of: account, connection)
        try await refuseWhileDelayed(account, record, connection)
        guard let hash = record.proofHash else { throw NotesError.passphraseRequired(try await lockInfo(record.id, connection)) }
        guard LockedNoteShape.matches(proof.proof, hash: hash) else { return try await countWrong(account, record, connection) }
        try await clearWrongEntries(account, connection)
        return nil
    }

    /// Checks a proof of note `row`'s key. A note with no note proof yet records `noteProof` when
    /// `passphraseProof` proves the note's passphrase (whoever holds it can unwrap the note key).
    /// Returns nil or the counted wrong-entry error.
    func checkNoteProof(
        _ row: StoredNote, noteProof: Data, passphraseProof: PassphraseProof?, _ connection: PostgresConnection
    ) async throws -> NotesError? {
        guard let passphraseID = row.passphraseID else { throw NotesError.wrongLockState("note \(row.id) is not locked") }
        guard noteProof.count == LockedNoteShape.proofByteCount else { throw NotesError.invalid("a note proof is 32 bytes") }
        let account = AccountID(rawValue: row.accountID)
        let record = try await passphrase(passphraseID, connection)
        if let hash = row.noteProofHash {
            try await lockAccount(account, connection)
            try await refuseWhileDelayed(account, record, connection)
            guard LockedNoteShape.matches(noteProof, hash: hash) else { return try await countWrong(account, record, connection) }
            return nil
        }
        guard let passphraseProof, passphraseProof.passphraseID == passphraseID else {
            throw NotesError.passphraseRequired(try await lockInfo(passphraseID, connection))
        }
        if let wrong = try await checkPassphraseProof(passphraseProof, account: account, connection) { return wrong }
        try await connection.run("UPDATE notes SET note_proof_hash = \(LockedNoteShape.proofHash(noteProof)) WHERE id = \(row.id)", logger)
        return nil
    }
}
