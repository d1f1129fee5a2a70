import Foundation
import TresorModel
import TresorNotesDomain
import TresorWebStore

/// A locked note's crypto fields, for the browser to open (`bodyFormat` `text` or `appleNotes`).
struct WebLockedRecord: Encodable, Sendable {
    var passphraseID: Int64
    var salt: Data
    var iterations: Int
    /// Only while the note's passphrase has no recorded proof (see `POST …/wrapped-key`).
    var wrappedKey: Data?
    /// Whether the server checks proofs of this note's passphrase (else the browser checks
    /// the passphrase against `wrappedKey` and records its proof).
    var hasProof: Bool
    var iv: Data
    var tag: Data
    var ciphertext: Data
    var bodyFormat: String

    init(_ record: LockedNoteRecord) {
        passphraseID = record.passphraseID
        salt = record.salt
        iterations = record.iterations
        wrappedKey = record.wrappedKey
        hasProof = record.hasProof
        iv = record.iv
        tag = record.tag
        ciphertext = record.ciphertext
        bodyFormat = record.bodyFormat == "apple-notes" || record.bodyFormat == "appleNotes" ? "appleNotes" : "text"
    }
}
