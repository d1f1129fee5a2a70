import Foundation
import NoteStoreFixture
import Testing
import TresorAppleNotes
import TresorCrypto

/// Apple's locked-note cryptography (docs/FORMAT.md, "Two layers"), checked against known vectors
/// with TresorCrypto's primitives and this module's body decoder.
@Suite struct AppleNotesCryptoVectorTests {
    typealias Hashcat = AppleNotesVectors.Hashcat
    typealias FullNote = AppleNotesVectors.FullNote

    @Test func hashcatVectorUnwrapsToSixteenFFBytes() throws {
        let kek = try PBKDF2.deriveKey(
            from: Data(Hashcat.passphrase.utf8),
            parameters: PBKDF2Parameters(salt: Hashcat.salt, rounds: Hashcat.iterations, outputByteCount: 16))
        let noteKey = try KeyWrap.unwrap(Hashcat.wrappedKey, using: kek)
        #expect(noteKey.withUnsafeBytes { Data($0) } == Hashcat.noteKey)
    }

    @Test func hashcatVectorRefusesAWrongPassphrase() throws {
        for wrong in ["Hashcat", "hashcat ", "", "password"] {
            let kek = try PBKDF2.deriveKey(
                from: Data(wrong.utf8),
                parameters: PBKDF2Parameters(salt: Hashcat.salt, rounds: Hashcat.iterations, outputByteCount: 16))
            #expect(throws: CryptoError.unwrapFailed) { try KeyWrap.unwrap(Hashcat.wrappedKey, using: kek) }
        }
        // The right passphrase with one round fewer is a wrong key too.
        let kek = try PBKDF2.deriveKey(
            from: Data(Hashcat.passphrase.utf8),
            parameters: PBKDF2Parameters(salt: Hashcat.salt, rounds: Hashcat.iterations - 1, outputByteCount: 16))
        #expect(throws: CryptoError.unwrapFailed) { try KeyWrap.unwrap(Hashcat.wrappedKey, using: kek) }
    }

    @Test func fullNoteVectorDecryptsToItsText() throws {
        let kek = try PBKDF2.deriveKey(
            from: Data(FullNote.passphrase.utf8),
            parameters: PBKDF2Parameters(salt: FullNote.salt, rounds: FullNote.iterations, outputByteCount: 16))
        let noteKey = try KeyWrap.unwrap(FullNote.wrappedKey, using: kek)
        #expect(noteKey.withUnsafeBytes { Data($0) } == FullNote.noteKey)
        // A 16-byte IV, as Apple writes, and no associated data.
        let body = try AESGCM.open(
            AESGCM.Sealed(iv: FullNote.iv, ciphertext: FullNote.ciphertext, tag: FullNote.tag),
            using: noteKey, authenticating: Data())
        #expect(body.prefix(2) == Data([0x1F, 0x8B]))
        #expect(try AppleNoteBody.text(fromGzippedProtobuf: body) == FullNote.text)
        #expect(try openLockedNote(.fullNoteVector, passphrase: FullNote.passphrase) == FullNote.text)
    }

    @Test func fullNoteVectorRefusesAlteredTagCiphertextOrIV() throws {
        var tampered: [AppleLockedNote] = []
        for index in [0, 7, 15] {
            var note = AppleLockedNote.fullNoteVector
            note.tag[index] ^= 0x01
            tampered.append(note)
        }
        for index in [0, FullNote.ciphertext.count / 2, FullNote.ciphertext.count - 1] {
            var note = AppleLockedNote.fullNoteVector
            note.ciphertext[index] ^= 0x80
            tampered.append(note)
        }
        var truncated = AppleLockedNote.fullNoteVector
        truncated.ciphertext.removeLast()
        var otherIV = AppleLockedNote.fullNoteVector
        otherIV.iv[15] ^= 0x01
        tampered += [truncated, otherIV]
        for note in tampered {
            #expect(throws: CryptoError.authenticationFailed) { try openLockedNote(note, passphrase: FullNote.passphrase) }
        }
        #expect(throws: CryptoError.unwrapFailed) { try openLockedNote(.fullNoteVector, passphrase: "Password") }
    }
}
