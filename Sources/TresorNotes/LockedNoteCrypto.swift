import Crypto
import Foundation
import TresorCrypto
import TresorNotesDomain

/// The cryptography of locked notes, exactly as Apple Notes does it (docs/FORMAT.md, "Two
/// layers"), so notes imported from Apple open with their passphrase and the web client can do
/// the same with WebCrypto:
///
/// 1. passphrase key = PBKDF2-HMAC-SHA256(UTF-8 passphrase, 16-byte salt, rounds) → 16 bytes;
/// 2. note key = 16 random bytes, stored RFC 3394-wrapped (24 bytes) under the passphrase key —
///    a failed unwrap means a wrong passphrase;
/// 3. body = AES-128-GCM under the note key, no associated data (as Apple);
/// 4. attachment chunk = AES-128-GCM under the note key, with the attachment id, the chunk
///    index and a final-chunk flag as associated data, so truncation and reordering are detected.
///
/// Tresor adds proofs (not in Apple's format, docs/SECURITY.md "Locked-note integrity on the
/// web"): HKDF-SHA256 subkeys of the passphrase key and of each note key, which a web client
/// presents to show it holds them. The server keeps only their SHA-256.
public enum LockedNoteCrypto {
    public static let saltByteCount = LockedNoteShape.saltByteCount
    public static let keyByteCount = 16
    public static let wrappedKeyByteCount = LockedNoteShape.wrappedKeyByteCount
    /// Imported data may carry any count ≥ 1; above this, a record is refused as hostile
    /// (it would pin a CPU for minutes).
    public static let maximumIterations = LockedNoteShape.maximumIterations

    /// The passphrase key for `salt` and `iterations`.
    public static func passphraseKey(_ passphrase: Passphrase, salt: Data, iterations: Int) throws -> SymmetricKey {
        guard (1...maximumIterations).contains(iterations) else {
            throw NotesError.invalid("a passphrase iteration count must be 1 to \(maximumIterations)")
        }
        guard !salt.isEmpty, salt.count <= 64 else { throw NotesError.invalid("a passphrase salt must be 1 to 64 bytes") }
        return try PBKDF2.deriveKey(
            from: passphrase.text,
            parameters: PBKDF2Parameters(salt: salt, rounds: iterations, outputByteCount: keyByteCount))
    }

    /// A fresh note key.
    public static func newNoteKey() -> SymmetricKey { SecureRandom.key(bitCount: keyByteCount * 8) }

    public static func wrap(_ noteKey: SymmetricKey, with passphraseKey: SymmetricKey) throws -> Data {
        try KeyWrap.wrap(noteKey, using: passphraseKey)
    }

    /// Nil when the key does not unwrap: the passphrase is wrong (or the record was altered).
    public static func unwrap(_ wrapped: Data, with passphraseKey: SymmetricKey) -> SymmetricKey? {
        guard wrapped.count == wrappedKeyByteCount else { return nil }
        return try? KeyWrap.unwrap(wrapped, using: passphraseKey)
    }

    /// HKDF `info` of the passphrase proof: a label of its own, so the proof serves no other use.
    public static let passphraseProofLabel = "tresor.notes.passphrase-proof.v1"
    /// HKDF `info` of a note proof.
    public static let noteProofLabel = "tresor.notes.note-proof.v1"
    public static let proofByteCount = LockedNoteShape.proofByteCount

    /// What a client presents to show it holds the passphrase: HKDF-SHA256(passphrase key, no
    /// salt, ``passphraseProofLabel``), 32 bytes. It opens nothing and does not give the key back.
    public static func passphraseProof(_ passphraseKey: SymmetricKey) -> Data {
        proof(of: passphraseKey, label: passphraseProofLabel)
    }

    /// What a client presents to show it holds a note key: HKDF-SHA256(note key, no salt,
    /// ``noteProofLabel``), 32 bytes.
    public static func noteProof(_ noteKey: SymmetricKey) -> Data {
        proof(of: noteKey, label: noteProofLabel)
    }

    /// What the server stores of a proof: its SHA-256 (a stolen database gives no proof).
    public static func proofHash(_ proof: some DataProtocol) -> Data { LockedNoteShape.proofHash(proof) }

    /// Whether `proof` is the one `hash` was made of, compared in constant time.
    public static func matches(_ proof: Data, hash: Data) -> Bool {
        LockedNoteShape.matches(proof, hash: hash)
    }

    private static func proof(of key: SymmetricKey, label: String) -> Data {
        KeyDerivation.hkdfSHA256(inputKeyMaterial: key, salt: Data(), info: label, outputByteCount: proofByteCount)
            .withUnsafeBytes { Data($0) }
    }

    public static func sealBody(_ body: some DataProtocol, with noteKey: SymmetricKey) throws -> AESGCM.Sealed {
        try AESGCM.seal(body, using: noteKey, authenticating: Data())
    }

    public static func openBody(_ sealed: AESGCM.Sealed, with noteKey: SymmetricKey) throws -> Data {
        try AESGCM.open(sealed, using: noteKey, authenticating: Data())
    }

    /// The associated data of one attachment chunk: a label, the attachment id, the chunk
    /// index (big-endian UInt64) and 1 for the final chunk, 0 otherwise.
    public static func chunkAssociatedData(attachmentID: String, index: UInt64, isFinal: Bool) -> Data {
        var data = Data("tresor.notes.attachment.v1\0".utf8)
        data.append(Data(attachmentID.utf8))
        data.append(0)
        withUnsafeBytes(of: index.bigEndian) { data.append(contentsOf: $0) }
        data.append(isFinal ? 1 : 0)
        return data
    }

    /// Seals one attachment chunk: IV (12) ‖ ciphertext ‖ tag (16) — GCM's combined form, so the
    /// buffer swift-crypto sealed into is returned without another copy.
    public static func sealChunk(
        _ chunk: some DataProtocol, with noteKey: SymmetricKey, attachmentID: String, index: UInt64, isFinal: Bool
    ) throws -> Data {
        try AESGCM.sealCombined(
            chunk, using: noteKey,
            authenticating: chunkAssociatedData(attachmentID: attachmentID, index: index, isFinal: isFinal))
    }

    public static func openChunk(
        _ data: Data, with noteKey: SymmetricKey, attachmentID: String, index: UInt64, isFinal: Bool
    ) throws -> Data {
        let ivCount = AESGCM.defaultIVByteCount, tagCount = AESGCM.tagByteCount
        guard data.count >= ivCount + tagCount else { throw CryptoError.authenticationFailed }
        let start = data.startIndex
        let sealed = AESGCM.Sealed(
            iv: data[start..<start + ivCount],
            ciphertext: data[(start + ivCount)..<(data.endIndex - tagCount)],
            tag: data[(data.endIndex - tagCount)...])
        return try AESGCM.open(
            sealed, using: noteKey,
            authenticating: chunkAssociatedData(attachmentID: attachmentID, index: index, isFinal: isFinal))
    }
}

extension PassphraseMaterial {
    /// The material of a passphrase key the daemon derived itself (the CLI's path).
    init(salt: Data, iterations: Int, key: SymmetricKey) throws {
        try self.init(
            salt: salt, iterations: iterations, verifier: try LockedNoteCrypto.wrap(LockedNoteCrypto.newNoteKey(), with: key),
            proofHash: LockedNoteCrypto.proofHash(LockedNoteCrypto.passphraseProof(key)))
    }
}
