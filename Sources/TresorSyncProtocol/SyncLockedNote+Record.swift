import TresorNotesDomain
import TresorSyncProtocol

/// The one conversion between a locked note's sealed record as it travels (``SyncLockedNote``)
/// and as the notes domain keeps it (``SyncedLockedRecord``): the relay's notes routes and a
/// device's notes sync (`SyncAccount`, in the daemon) both use it.
extension SyncLockedNote {
    /// The wire form of `record`, as it is.
    public init(_ record: SyncedLockedRecord) {
        self.init(
            passphraseSource: record.passphraseSource == .appleNotes ? LockInfo.Source.appleNotes.rawValue : nil,
            passphraseSalt: record.passphraseSalt, passphraseIterations: record.passphraseIterations,
            passphraseVerifier: record.passphraseVerifier, passphraseProofHash: record.passphraseProofHash, wrappedKey: record.wrappedKey,
            iv: record.iv, tag: record.tag, ciphertext: record.ciphertext, bodyFormat: record.bodyFormat.rawValue,
            noteProofHash: record.noteProofHash, passphraseHint: record.passphraseHint)
    }

    /// The record this carries, its shapes checked.
    /// - Returns: the notes domain's record.
    /// - Throws: ``NotesError/invalid(_:)`` naming the field that is not as a locked note's, or
    ///   a passphrase source this side does not know.
    public func record() throws -> SyncedLockedRecord {
        let source = try passphraseSource.map {
            guard let known = LockInfo.Source(rawValue: $0) else { throw NotesError.invalid("the passphrase source is not tresor or apple-notes") }
            return known
        }
        return try SyncedLockedRecord(
            passphraseSource: source ?? .tresor, passphraseSalt: passphraseSalt, passphraseIterations: passphraseIterations,
            passphraseVerifier: passphraseVerifier,
            passphraseProofHash: passphraseProofHash, wrappedKey: wrappedKey, iv: iv, tag: tag, ciphertext: ciphertext,
            bodyFormat: LockedBodyFormat(stored: bodyFormat), noteProofHash: noteProofHash, passphraseHint: passphraseHint)
    }
}

/// The one conversion between a passphrase generation as it travels (``SyncPassphrase``) and as
/// the notes domain carries it (``SyncedPassphrase``).
extension SyncPassphrase {
    /// The wire form of `passphrase`.
    public init(_ passphrase: SyncedPassphrase) {
        self.init(
            salt: passphrase.salt, iterations: passphrase.iterations, verifier: passphrase.verifier, proofHash: passphrase.proofHash,
            hint: passphrase.hint)
    }

    /// The generation this carries, its shapes checked.
    /// - Returns: the notes domain's generation.
    /// - Throws: ``NotesError/invalid(_:)`` naming the field that is not as a generation's.
    public func synced() throws -> SyncedPassphrase {
        try SyncedPassphrase(salt: salt, iterations: iterations, verifier: verifier, proofHash: proofHash, hint: hint)
    }
}
