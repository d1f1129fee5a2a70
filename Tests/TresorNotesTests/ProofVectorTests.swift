import Crypto
import Foundation
import Testing
import TresorCrypto

@testable import TresorNotes

/// The proofs of docs/SECURITY.md ("Locked-note integrity on the web") as a known answer: the
/// same vector is checked against the browser's WebCrypto code in Tests/Browser/test_notes.py
/// (`test_proof_derivation_matches_the_swift_known_answer`), so the daemon's and the page's
/// derivations cannot drift apart. (The values were also checked with Python's hashlib/hmac.)
@Suite("Proof derivation: known answer")
struct ProofVectorTests {
    static let passphraseText = "Tresor KAT passphrase ✓"
    static let salt = Data(0..<16)
    static let iterations = 1000
    static let noteKey = Data(16..<32)
    static let passphraseProof = "13cc7c53d544fafeb677e79013a2687139483bdefabd164d0f9defde92e1f680"
    static let passphraseProofHash = "510b1173d49408fa80e57af64a6f8fe95bcbb3d7fa8fc1dd91049d52fd37fcf7"
    static let wrappedNoteKey = "5dc53f1ef8ac932186a03144ca6d52be848476b885e06f81"
    static let noteProof = "73261ba7a115d787a6b90ce23e45646c94e0ebce0a0522d2ad1fcc41cf9775a9"

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    @Test func theSwiftDerivationGivesTheVector() throws {
        let key = try LockedNoteCrypto.passphraseKey(try Passphrase(Self.passphraseText), salt: Self.salt, iterations: Self.iterations)
        let proof = LockedNoteCrypto.passphraseProof(key)
        #expect(Self.hex(proof) == Self.passphraseProof)
        #expect(Self.hex(LockedNoteCrypto.proofHash(proof)) == Self.passphraseProofHash)
        let noteKey = SymmetricKey(data: Self.noteKey)
        #expect(Self.hex(try LockedNoteCrypto.wrap(noteKey, with: key)) == Self.wrappedNoteKey)
        #expect(Self.hex(LockedNoteCrypto.noteProof(noteKey)) == Self.noteProof)
        // Distinct labels: the two proofs of one key differ.
        #expect(LockedNoteCrypto.noteProof(key) != proof)
        #expect(LockedNoteCrypto.matches(proof, hash: LockedNoteCrypto.proofHash(proof)))
        #expect(!LockedNoteCrypto.matches(proof.prefix(31), hash: LockedNoteCrypto.proofHash(proof.prefix(31))), "a proof is 32 bytes")
    }
}
