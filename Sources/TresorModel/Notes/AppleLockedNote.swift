import FoundationEssentials

/// A locked note as Apple stores it (docs/FORMAT.md, "Two layers"), not decrypted:
/// PBKDF2-HMAC-SHA256 of the passphrase over `salt` with `iterations` gives a 16-byte key, which
/// unwraps `wrappedKey` (RFC 3394) into the note key, which opens `ciphertext` with AES-128-GCM
/// under `iv` and `tag` (no associated data) into a gzipped protobuf
/// (``AppleNoteBody/text(fromGzippedProtobuf:limits:)``).
///
/// The reader checks the shapes: a non-empty salt, 1 ≤ iterations ≤ the limit, a 24-byte
/// wrapped key, an IV of at least 12 bytes, a 16-byte tag, a non-empty ciphertext.
public struct AppleLockedNote: Codable, Sendable, Equatable {
    /// `ZCRYPTOSALT` (16 bytes in Apple's data).
    public var salt: Data
    /// `ZCRYPTOITERATIONCOUNT` (20,000 in Apple's data).
    public var iterations: Int
    /// `ZCRYPTOWRAPPEDKEY`: the 16-byte note key wrapped with RFC 3394 (24 bytes).
    public var wrappedKey: Data
    /// `ZCRYPTOINITIALIZATIONVECTOR` of the note data (else of the note row); 16 bytes in Apple's data.
    public var iv: Data
    /// `ZCRYPTOTAG` of the note data (else of the note row): the 16-byte GCM tag.
    public var tag: Data
    /// `ZDATA`: the AES-128-GCM ciphertext of the gzipped body.
    public var ciphertext: Data
    /// `ZPASSWORDHINT`, if the user set one.
    public var hint: String?

    /// A locked note from its crypto fields.
    public init(salt: Data, iterations: Int, wrappedKey: Data, iv: Data, tag: Data, ciphertext: Data, hint: String?) {
        self.salt = salt
        self.iterations = iterations
        self.wrappedKey = wrappedKey
        self.iv = iv
        self.tag = tag
        self.ciphertext = ciphertext
        self.hint = hint
    }
}
