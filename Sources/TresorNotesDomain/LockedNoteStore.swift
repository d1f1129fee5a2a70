import Foundation

/// Passphrases and locked notes made in the browser — ``WebStore``'s area for the account's
/// passphrase generations, its entries, and notes locked, edited and re-wrapped with ciphertext
/// the browser made (``LockedNoteShape``).
public protocol LockedNoteStore: Sendable {
    /// The account's passphrase state (``PassphraseStatus/sessionOpen`` is always false here:
    /// browsers keep their own secure sessions).
    /// - Parameter account: the account.
    /// - Returns: whether one is set, wrong entries, the wait.
    /// - Throws: ``NotesError/notFound(_:)``.
    func passphraseStatus(account: AccountID) async throws -> PassphraseStatus

    /// The account's current passphrase's hint.
    /// - Parameter account: the account.
    /// - Returns: the hint, or nil.
    /// - Throws: ``NotesError/noPassphrase``.
    func passphraseHint(account: AccountID) async throws -> String?

    /// The account's current passphrase generation, for the browser to derive its key.
    /// - Parameter account: the account.
    /// - Returns: the record, or nil when none is set.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func passphraseRecord(account: AccountID) async throws -> PassphraseRecord?

    /// Sets the account's first passphrase.
    /// - Parameters:
    ///   - material: salt, rounds, verifier, proof hash.
    ///   - hint: its hint.
    ///   - account: the account.
    /// - Throws: ``NotesError/passphraseAlreadySet``, ``NotesError/invalid(_:)``.
    func setPassphrase(_ material: PassphraseMaterial, hint: String?, account: AccountID) async throws

    /// A new generation after a forgotten passphrase (the caller checked the account password).
    /// - Parameters:
    ///   - material: salt, rounds, verifier, proof hash.
    ///   - hint: its hint.
    ///   - account: the account.
    /// - Throws: ``NotesError/invalid(_:)``.
    func resetPassphrase(to material: PassphraseMaterial, hint: String?, account: AccountID) async throws

    /// Changes the passphrase: every note locked with the current one re-wrapped, in one step;
    /// each such note's revision counts up and it is announced as changed.
    /// - Parameters:
    ///   - proof: proves the current passphrase.
    ///   - material: the new salt, rounds, verifier, proof hash.
    ///   - hint: absent: keep; `.some(nil)`: remove.
    ///   - rewrappedKeys: note id → its key wrapped under the new passphrase (every such note).
    ///   - account: the account.
    /// - Throws: ``NotesError/conflict(_:)``, the proof errors.
    func changePassphrase(
        proof: PassphraseProof, to material: PassphraseMaterial, hint: String??, rewrappedKeys: [String: Data], account: AccountID
    ) async throws

    /// An entry of the passphrase: the proof of the key the browser derived, checked and counted.
    /// - Parameters:
    ///   - proof: the passphrase and the proof of its key.
    ///   - establish: the browser checked it itself (only while no proof is recorded).
    ///   - account: the account.
    /// - Returns: the count after the entry.
    /// - Throws: ``NotesError/wrongPassphrase(failedAttempts:hint:retryAfterSeconds:)``, ``NotesError/throttled(retryAfterSeconds:hint:)``.
    func enterPassphrase(_ proof: PassphraseProof, establish: Bool, account: AccountID) async throws -> PassphraseEntryOutcome

    /// A locked note's wrapped key, for a proof of its passphrase.
    /// - Parameters:
    ///   - id: the note.
    ///   - proof: proves the note's passphrase.
    ///   - account: the owner.
    /// - Returns: the wrapped key.
    /// - Throws: ``NotesError/conflict(_:)``, the proof errors.
    func wrappedKey(ofNote id: String, proof: PassphraseProof, account: AccountID) async throws -> Data

    /// A locked note's crypto fields without the store's sealing.
    /// - Parameter id: the note.
    /// - Returns: the record.
    /// - Throws: ``NotesError/wrongLockState(_:)``.
    func lockedRecord(ofNote id: String) async throws -> LockedNoteRecord

    /// Locks an unlocked note with ciphertext made in the browser; the plaintext goes in the
    /// same step. Its refusals come in one order: locked already, in Recently Deleted, shared, an
    /// attachment of a kind that cannot be locked.
    /// - Parameters:
    ///   - id: the note.
    ///   - client: the wrapped key, note proof hash, sealed body and every attachment's chunks.
    ///   - proof: proves the current passphrase.
    ///   - quota: the owner's quota.
    /// - Throws: ``NotesError/conflict(_:)``, ``NotesError/wrongLockState(_:)``, ``NotesError/invalid(_:)`` for a note
    ///   in Recently Deleted (restore it first), the proof errors.
    func lockNote(_ id: String, sealedBy client: ClientLockedNote, proof: Data, quota: StorageQuota?) async throws

    /// Saves an edited locked note's body (same note key, proved by `noteProof`).
    /// - Parameters:
    ///   - id: the note.
    ///   - iv: the body's IV.
    ///   - tag: its tag.
    ///   - ciphertext: the body sealed under the note key.
    ///   - noteProof: proves the note key.
    ///   - passphraseProof: for a note with no note proof recorded.
    ///   - baseRevision: the revision the edit was made from (older: ``NotesError/staleRevision(current:)``).
    ///   - quota: the owner's quota.
    /// - Returns: the note now.
    /// - Throws: ``NotesError/staleRevision(current:)``, the proof errors.
    func replaceLockedBody(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        baseRevision: Int64?, quota: StorageQuota?
    ) async throws -> NoteSummary

    /// Keeps a locked note's edited body as its conflict copy (the browser found both versions
    /// changing the same lines).
    /// - Parameters:
    ///   - id: the note.
    ///   - iv: the body's IV.
    ///   - tag: its tag.
    ///   - ciphertext: the body sealed under the note key.
    ///   - noteProof: proves the note key.
    ///   - passphraseProof: for a note with no note proof recorded.
    ///   - editor: who saves (names the copy).
    ///   - quota: the owner's quota.
    /// - Returns: the conflict copy.
    /// - Throws: the proof errors.
    func saveLockedConflictCopy(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        by editor: AccountID, quota: StorageQuota?
    ) async throws -> NoteSummary

    /// Re-wraps a note of an earlier passphrase under the current one; its revision counts up and
    /// it is announced as changed.
    /// - Parameters:
    ///   - id: the note.
    ///   - proof: proves the current passphrase.
    ///   - wrappedKey: the note key wrapped under it.
    ///   - noteProof: proves the note key.
    ///   - earlierProof: for a note with no note proof recorded: proves its own passphrase.
    ///   - quota: the owner's quota.
    /// - Throws: ``NotesError/conflict(_:)``, ``NotesError/wrongLockState(_:)``, ``NotesError/invalid(_:)`` for a note
    ///   in Recently Deleted, the proof errors.
    func rewrap(
        _ id: String, proof: PassphraseProof, wrappedKey: Data, noteProof: Data, earlierProof: PassphraseProof?, quota: StorageQuota?
    ) async throws
}
