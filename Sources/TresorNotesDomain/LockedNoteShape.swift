import Foundation
import TresorCrypto

/// The sizes of what a browser sends for a locked note (docs/WEB.md, "Locked notes in the
/// browser"), checked before anything is stored, and how proofs are compared. The server
/// never holds a key: it keeps the SHA-256 of each proof and compares in constant time.
public enum LockedNoteShape {
    public static let saltByteCount = 16
    public static let wrappedKeyByteCount = 24
    public static let proofByteCount = 32
    public static let maximumIterations = 50_000_000
    /// Plaintext bytes per attachment chunk (the last one shorter).
    public static let chunkByteCount = 1 << 20
    /// A sealed chunk adds its 12-byte IV and 16-byte tag.
    public static let chunkOverheadByteCount = 12 + 16

    /// The hash a store keeps of a proof.
    /// - Parameter proof: the 32-byte proof.
    /// - Returns: its SHA-256.
    public static func proofHash(_ proof: some DataProtocol) -> Data { Digest.sha256(proof) }

    /// Whether `proof` is the one whose hash is `hash`, compared in constant time.
    /// - Parameters:
    ///   - proof: what the client sent.
    ///   - hash: what the store keeps.
    /// - Returns: true when they match.
    public static func matches(_ proof: Data, hash: Data) -> Bool {
        proof.count == proofByteCount && ConstantTime.equals(proofHash(proof), hash)
    }

    /// A locked body's IV (12 to 64 bytes), tag (16) and ciphertext (≤ the body limit).
    /// - Throws: ``NotesError/invalid(_:)``.
    public static func checkBody(iv: Data, tag: Data, ciphertext: Data) throws {
        guard iv.count >= 12, iv.count <= 64, tag.count == 16 else { throw NotesError.invalid("the IV must be 12 to 64 bytes and the tag 16") }
        guard ciphertext.count <= NoteLimits.bodyBytes else { throw NotesError.invalid("the body is longer than \(NoteLimits.bodyBytes) bytes") }
    }

    /// Chunk *i* of a locked attachment holds min(1 MiB, rest) plaintext bytes plus a 12-byte
    /// IV and a 16-byte tag: anything else is refused before it is stored.
    /// - Parameters:
    ///   - chunks: the sealed chunks, in order.
    ///   - plaintextByteCount: the attachment's size.
    ///   - attachmentID: for the error.
    /// - Throws: ``NotesError/invalid(_:)``.
    public static func checkChunkSizes(_ chunks: [Data], plaintextByteCount: Int, attachmentID: String) throws {
        let expectedCount = chunkCount(plaintextByteCount: plaintextByteCount)
        guard chunks.count == expectedCount else {
            throw NotesError.invalid("attachment \(attachmentID) needs \(expectedCount) sealed chunks, not \(chunks.count)")
        }
        for (index, chunk) in chunks.enumerated() {
            let plaintext = min(chunkByteCount, plaintextByteCount - index * chunkByteCount)
            guard chunk.count == plaintext + chunkOverheadByteCount else {
                throw NotesError.invalid("sealed chunk \(index) of attachment \(attachmentID) has the wrong size")
            }
        }
    }

    /// How many chunks an attachment of `plaintextByteCount` bytes has (one at least).
    public static func chunkCount(plaintextByteCount: Int) -> Int {
        max(1, (plaintextByteCount + chunkByteCount - 1) / chunkByteCount)
    }
}
