import Foundation
import GRDB
import TresorCrypto
import TresorKeybag
import TresorNotesDomain

// Proofs of the passphrase and of note keys (docs/SECURITY.md, "Locked-note integrity on the
// web"). A web client never sends a passphrase or a key; to change a locked note, re-wrap,
// reset the wrong-entry count or read a wrapped key it presents a proof — an HKDF subkey of the
// key it holds (`LockedNoteCrypto.passphraseProof` / `noteProof`) — which the store compares
// with the SHA-256 it keeps. Every check runs inside the write transaction of the change it
// guards: the delay is checked, the proof compared and a wrong one counted in one serialized
// step, so concurrent wrong proofs cannot outrun the count.
extension NotesStore {
    /// An entry of the passphrase in the browser: the proof of the key it derived.
    ///
    /// When the store holds the passphrase's proof hash, the proof is checked: right clears
    /// the wrong-entry count, wrong counts one (hint from the third, delays from the fifth).
    /// When it holds none yet (a passphrase set before proofs existed, or imported from Apple
    /// Notes), the browser checked the passphrase itself against the verifier or a wrapped key:
    /// `establish` records this proof (once — afterwards only the daemon, which checks
    /// passphrases itself, replaces it); a failed local check (`establish` false) counts as a
    /// wrong entry. That window is documented in docs/SECURITY.md.
    /// - Parameters:
    ///   - proof: the passphrase and the proof of its key.
    ///   - establish: the browser's own check succeeded (only used while no proof is recorded).
    ///   - account: the account whose passphrase it is; another's is `notFound`.
    /// - Returns: the count after the entry.
    /// - Throws: ``NotesError/wrongPassphrase(failedAttempts:hint:retryAfterSeconds:)`` (counted),
    ///   ``NotesError/throttled(retryAfterSeconds:hint:)`` while a delay runs (not checked).
    public func enterPassphrase(_ proof: PassphraseProof, establish: Bool, account: AccountID) throws -> PassphraseEntryOutcome {
        guard proof.proof.count == LockedNoteCrypto.proofByteCount else { throw NotesError.invalid("a proof is 32 bytes") }
        let sealing = try sealing()
        return try pool.write { db -> Result<PassphraseEntryOutcome, NotesError> in
            let record = try passphraseRow(proof.passphraseID, of: account, db)
            try refuseWhileDelayed(account, record, db, sealing)
            var established = false
            if let hash = record.proofHash {
                guard LockedNoteCrypto.matches(proof.proof, hash: hash) else { return .failure(try countWrong(account, record, db, sealing)) }
            } else {
                guard establish else { return .failure(try countWrong(account, record, db, sealing)) }
                try recordProofHash(LockedNoteCrypto.proofHash(proof.proof), of: record.id, db)
                established = true
            }
            try AccountRow.clearWrongEntries(account, db)
            return .success(PassphraseEntryOutcome(established: established, failedAttempts: 0, hint: nil, retryAfterSeconds: nil))
        }.get()
    }

    /// The wrapped note key of locked note `id`, for a client proving the note's passphrase.
    /// - Throws: ``NotesError/conflict(_:)`` when the note is not locked with that passphrase (any
    ///   more), the errors of ``enterPassphrase(_:establish:account:)`` for a wrong proof.
    public func wrappedKey(ofNote id: String, proof: PassphraseProof, account: AccountID) throws -> Data {
        let sealing = try sealing()
        return try pool.write { db -> Result<Data, NotesError> in
            let row = try NoteRow.fetch(id, db)
            guard let passphraseID = row.passphraseID, let wrapped = row.wrappedKey else {
                throw NotesError.wrongLockState("note \(id) is not locked")
            }
            guard passphraseID == proof.passphraseID else {
                throw NotesError.conflict("note \(id) is locked with passphrase \(passphraseID), not \(proof.passphraseID)")
            }
            if let wrong = try checkPassphraseProof(proof, account: account, db, sealing) { return .failure(wrong) }
            return .success(wrapped)
        }.get()
    }

    // MARK: Checks inside a write transaction

    /// Checks `proof` against the passphrase's proof hash. Returns nil when it is right (the
    /// count cleared) or the wrong-entry error after counting it — the caller returns that
    /// error from its transaction so the count commits, then throws it.
    /// - Throws: `throttled` while a delay runs; `passphraseRequired` when no proof is recorded
    ///   yet (the client enters the passphrase first: ``enterPassphrase(_:establish:account:)``).
    func checkPassphraseProof(_ proof: PassphraseProof, account: AccountID, _ db: Database, _ sealing: ContentSealing) throws -> NotesError? {
        let record = try passphraseRow(proof.passphraseID, of: account, db)
        try refuseWhileDelayed(account, record, db, sealing)
        guard let hash = record.proofHash else { throw NotesError.passphraseRequired(try lockInfo(record, db, sealing)) }
        guard LockedNoteCrypto.matches(proof.proof, hash: hash) else { return try countWrong(account, record, db, sealing) }
        try AccountRow.clearWrongEntries(account, db)
        return nil
    }

    /// Checks a proof of note `row`'s key. A note with no proof hash yet (locked before proofs,
    /// or imported) records `noteProof` when `passphraseProof` proves the note's passphrase —
    /// whoever holds it can unwrap the note key. Returns nil or the counted wrong-entry error.
    func checkNoteProof(
        _ row: NoteRow, noteProof: Data, passphraseProof: PassphraseProof?, _ db: Database, _ sealing: ContentSealing
    ) throws -> NotesError? {
        guard let passphraseID = row.passphraseID else { throw NotesError.wrongLockState("note \(row.id) is not locked") }
        guard noteProof.count == LockedNoteCrypto.proofByteCount else { throw NotesError.invalid("a note proof is 32 bytes") }
        let account = AccountID(rawValue: row.accountID)
        let record = try PassphraseRow.fetch(passphraseID, db)
        if let hash = row.noteProofHash {
            try refuseWhileDelayed(account, record, db, sealing)
            guard LockedNoteCrypto.matches(noteProof, hash: hash) else { return try countWrong(account, record, db, sealing) }
            return nil
        }
        guard let passphraseProof, passphraseProof.passphraseID == passphraseID else {
            throw NotesError.passphraseRequired(try lockInfo(record, db, sealing))
        }
        if let wrong = try checkPassphraseProof(passphraseProof, account: account, db, sealing) { return wrong }
        try db.execute(sql: "UPDATE notes SET note_proof_hash = ? WHERE id = ?", arguments: [LockedNoteCrypto.proofHash(noteProof), row.id])
        return nil
    }

    /// Passphrase record `id` if it is `account`'s; another account's answers like a missing one.
    func passphraseRow(_ id: Int64, of account: AccountID, _ db: Database) throws -> PassphraseRow {
        guard let row = try? PassphraseRow.fetch(id, db), row.accountID == account.rawValue else {
            throw NotesError.notFound("passphrase \(id)")
        }
        return row
    }

    /// Throws `throttled` while the account's delay runs: the attempt is not checked at all.
    func refuseWhileDelayed(_ account: AccountID, _ record: PassphraseRow, _ db: Database, _ sealing: ContentSealing) throws {
        let row = try AccountRow.fetch(account, db)
        if let wait = GuessingDelay.remaining(afterFailures: row.failedEntries, lastFailure: row.lastFailure, now: now) {
            throw NotesError.throttled(
                retryAfterSeconds: wait, hint: row.failedEntries >= NoteRules.hintAfterFailures ? try hint(of: record, sealing) : nil)
        }
    }

    /// Counts a wrong entry and returns the error that says so (hint from the third, the wait
    /// from the fifth).
    func countWrong(_ account: AccountID, _ record: PassphraseRow, _ db: Database, _ sealing: ContentSealing) throws -> NotesError {
        let now = now
        let row = try AccountRow.countWrongEntry(account, at: now, db)
        return .wrongPassphrase(
            failedAttempts: row.failedEntries,
            hint: row.failedEntries >= NoteRules.hintAfterFailures ? try hint(of: record, sealing) : nil,
            retryAfterSeconds: GuessingDelay.remaining(afterFailures: row.failedEntries, lastFailure: row.lastFailure, now: now))
    }

    func recordProofHash(_ hash: Data, of passphraseID: Int64, _ db: Database) throws {
        try db.execute(sql: "UPDATE passphrases SET proof_hash = ? WHERE id = ?", arguments: [hash, passphraseID])
    }
}
