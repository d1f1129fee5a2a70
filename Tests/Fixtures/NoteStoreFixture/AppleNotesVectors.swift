import Foundation
import TresorAppleNotes
import TresorCrypto

/// Known Apple Notes locked-note vectors (docs/FORMAT.md, "Two layers").
public enum AppleNotesVectors {
    /// hashcat's example hash for Apple Secure Notes (mode 16200): passphrase "hashcat",
    /// 20,000 rounds. The wrapped key unwraps to sixteen 0xff bytes. It has no body.
    public enum Hashcat {
        public static let passphrase = "hashcat"
        public static let iterations = 20_000
        public static let salt = Data(hex: "80771171105233481004850004085037")
        public static let wrappedKey = Data(hex: "d04b17af7f6b184346aad3efefe8bec0987ee73418291a41")
        public static let noteKey = Data(repeating: 0xFF, count: 16)
    }

    /// A whole locked note: passphrase "password", 20,000 rounds; its text is
    /// "Encrypted title\n\nEncrypted body".
    public enum FullNote {
        public static let passphrase = "password"
        public static let iterations = 20_000
        public static let salt = Data(hex: "1165106b6b288bda1e6ecb18e65c7876")
        public static let wrappedKey = Data(hex: "98c0e56b43b507e60c5465ec5e1bb0c74b756f7d4f4a9bff")
        public static let noteKey = Data(hex: "023aae7c450a283b23e3d7c1416ad644")
        public static let iv = Data(hex: "151f64de7be34d15dacdaea9b33471f9")
        public static let tag = Data(hex: "806bf2bbd3bf83cf1240b03e7c4d6ab1")
        public static let ciphertext = Data(
            hex: """
                131b03571fc9ec47ef58e58e21fce5c10aa73a62b9e58a743bcdcc3aff1ea8ab9964f4535b8597735f3da5f6ae63b937
                0625a20d633e9cf2986d4d118989124f0ddfee956e47cb5cbc3617c520b075620b37ae4056f3a1af83351fda634dfb44
                6055c75f7143a5600149db333893c0ecb0ef3944e2a64542e9a4375bf152689858fed8b21aded0eab0afb11190
                """)
        public static let text = "Encrypted title\n\nEncrypted body"
    }
}

/// The note key of a locked note, unwrapped with the key `passphrase` derives (PBKDF2-HMAC-SHA256, 16 bytes).
public func unwrapNoteKey(_ note: AppleLockedNote, passphrase: String) throws -> Data {
    let kek = try PBKDF2.deriveKey(
        from: Data(passphrase.utf8), parameters: PBKDF2Parameters(salt: note.salt, rounds: note.iterations, outputByteCount: 16))
    return try KeyWrap.unwrap(note.wrappedKey, using: kek).withUnsafeBytes { Data($0) }
}

/// Opens a locked note the way Apple does: PBKDF2 → RFC 3394 unwrap → AES-128-GCM (no
/// associated data) → gunzip + protobuf. Throws on a wrong passphrase or altered data.
public func openLockedNote(_ note: AppleLockedNote, passphrase: String) throws -> String {
    let kek = try PBKDF2.deriveKey(
        from: Data(passphrase.utf8), parameters: PBKDF2Parameters(salt: note.salt, rounds: note.iterations, outputByteCount: 16))
    let noteKey = try KeyWrap.unwrap(note.wrappedKey, using: kek)
    let plaintext = try AESGCM.open(
        AESGCM.Sealed(iv: note.iv, ciphertext: note.ciphertext, tag: note.tag), using: noteKey, authenticating: Data())
    return try AppleNoteBody.text(fromGzippedProtobuf: plaintext)
}

extension AppleLockedNote {
    /// The full-note vector as a locked note.
    public static let fullNoteVector = AppleLockedNote(
        salt: AppleNotesVectors.FullNote.salt, iterations: AppleNotesVectors.FullNote.iterations,
        wrappedKey: AppleNotesVectors.FullNote.wrappedKey, iv: AppleNotesVectors.FullNote.iv,
        tag: AppleNotesVectors.FullNote.tag, ciphertext: AppleNotesVectors.FullNote.ciphertext, hint: nil)
}
