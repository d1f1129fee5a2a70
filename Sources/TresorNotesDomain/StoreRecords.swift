import Foundation

// The values the web server exchanges with its store: accounts, sharing, and locked-note
// crypto made in the browser (docs/WEB.md). Binary fields are the Apple-shaped ones of
// docs/FORMAT.md with the storage's own sealing removed.

/// An account as the web sees it. The local account ("On My Computer") signs in as `local`.
public struct WebAccount: Codable, Equatable, Sendable {
    public var id: AccountID
    /// The login name (`local` for the local account).
    public var name: String
    public var isLocal: Bool

    public init(id: AccountID, name: String, isLocal: Bool) {
        self.id = id
        self.name = name
        self.isLocal = isLocal
    }
}

/// A passphrase generation made in the browser: the server never sees the passphrase, only
/// the salt, the iteration count, a verifier (a random key wrapped under the passphrase key)
/// and the SHA-256 of the passphrase proof (`LockedNoteCrypto.passphraseProof`).
public struct PassphraseMaterial: Sendable {
    public var salt: Data
    public var iterations: Int
    public var verifier: Data
    public var proofHash: Data

    /// Checks the shapes: a 16-byte salt, a 24-byte verifier, a 32-byte proof hash, iterations
    /// within bounds (the store also checks its own minimum).
    /// - Throws: ``NotesError/invalid(_:)`` naming the field.
    public init(salt: Data, iterations: Int, verifier: Data, proofHash: Data) throws {
        guard salt.count == LockedNoteShape.saltByteCount else { throw NotesError.invalid("the salt must be 16 bytes") }
        guard verifier.count == LockedNoteShape.wrappedKeyByteCount else { throw NotesError.invalid("the verifier must be 24 bytes") }
        guard proofHash.count == LockedNoteShape.proofByteCount else { throw NotesError.invalid("the proof hash must be 32 bytes") }
        guard (1...LockedNoteShape.maximumIterations).contains(iterations) else {
            throw NotesError.invalid("the iteration count must be 1 to \(LockedNoteShape.maximumIterations)")
        }
        self.salt = salt
        self.iterations = iterations
        self.verifier = verifier
        self.proofHash = proofHash
    }

}

/// A client's proof that it holds the key of passphrase `passphraseID`
/// (`LockedNoteCrypto.passphraseProof`). The store checks it against the hash it keeps,
/// counting a wrong one as a wrong passphrase entry.
public struct PassphraseProof: Sendable, Equatable {
    public var passphraseID: Int64
    public var proof: Data

    public init(passphraseID: Int64, proof: Data) {
        self.passphraseID = passphraseID
        self.proof = proof
    }
}

/// The current passphrase generation of an account, as the browser needs it to derive the key.
public struct PassphraseRecord: Codable, Equatable, Sendable {
    public var id: Int64
    public var generation: Int?
    public var salt: Data
    public var iterations: Int
    /// Only while no proof is recorded for this passphrase (data from before proofs): the
    /// client checks the passphrase with it, then records its proof. Afterwards the server
    /// checks proofs itself and keeps the verifier, which would allow offline guessing.
    public var verifier: Data?
    /// Whether the server holds this passphrase's proof hash (it checks entries itself).
    public var hasProof: Bool
    public var setOn: Date
    public var hasHint: Bool

    public init(id: Int64, generation: Int?, salt: Data, iterations: Int, verifier: Data?, hasProof: Bool, setOn: Date, hasHint: Bool) {
        self.id = id
        self.generation = generation
        self.salt = salt
        self.iterations = iterations
        self.verifier = verifier
        self.hasProof = hasProof
        self.setOn = setOn
        self.hasHint = hasHint
    }
}

/// What the store says after the browser reports a passphrase entry.
public struct PassphraseEntryOutcome: Codable, Equatable, Sendable {
    /// Whether this entry recorded the passphrase's proof (the first entry after an upgrade).
    public var established: Bool = false
    public var failedAttempts: Int
    /// From the third consecutive wrong entry on.
    public var hint: String?
    /// From the fifth: how long the next attempt must wait.
    public var retryAfterSeconds: Int?

    public init(established: Bool = false, failedAttempts: Int, hint: String? = nil, retryAfterSeconds: Int? = nil) {
        self.established = established
        self.failedAttempts = failedAttempts
        self.hint = hint
        self.retryAfterSeconds = retryAfterSeconds
    }
}

/// A locked note's crypto fields without the keybag layer: what the browser opens.
///
/// It is also the web API's `locked` record (docs/WEB.md, "Shapes"), encoded as it is.
public struct LockedNoteRecord: Codable, Equatable, Sendable {
    public var passphraseID: Int64
    public var salt: Data
    public var iterations: Int
    /// Nil once the note's passphrase has a recorded proof: then only
    /// `WebStore.wrappedKey(ofNote:proof:account:)` hands it out, to a client proving the passphrase.
    public var wrappedKey: Data?
    /// Whether the passphrase of the note has a recorded proof.
    public var hasProof: Bool
    public var iv: Data
    public var tag: Data
    public var ciphertext: Data
    public var bodyFormat: LockedBodyFormat

    public init(
        passphraseID: Int64, salt: Data, iterations: Int, wrappedKey: Data?, hasProof: Bool, iv: Data, tag: Data, ciphertext: Data,
        bodyFormat: LockedBodyFormat
    ) {
        self.passphraseID = passphraseID
        self.salt = salt
        self.iterations = iterations
        self.wrappedKey = wrappedKey
        self.hasProof = hasProof
        self.iv = iv
        self.tag = tag
        self.ciphertext = ciphertext
        self.bodyFormat = bodyFormat
    }
}

/// What a locked note's body is once opened; encoded as the web client reads it.
public enum LockedBodyFormat: String, Codable, Sendable {
    /// UTF-8 text: a note locked in Tresor or in the web client.
    case text
    /// Apple Notes' gzipped protobuf, text at field 2 → 3 → 2: a note imported still locked.
    case appleNotes

    /// The format a store's `body_format` column (and a backup's `bodyFormat`) names, which spells
    /// Apple's `apple-notes`; anything else is text.
    /// - Parameter stored: The column's value.
    public init(stored: String) {
        self = stored == "apple-notes" || stored == "appleNotes" ? .appleNotes : .text
    }
}

/// A note locked in the browser: the note key wrapped under the current passphrase's key, the
/// body sealed under the note key, and every attachment's chunks sealed under it
/// (`LockedNoteCrypto.sealChunk`).
public struct ClientLockedNote: Sendable {
    public var passphraseID: Int64
    public var wrappedKey: Data
    /// SHA-256 of the note proof (`LockedNoteCrypto.noteProof`): later saves of the body
    /// must present the proof.
    public var noteProofHash: Data
    public var iv: Data
    public var tag: Data
    public var ciphertext: Data
    /// Attachment id → its sealed chunks in order. Must name every attachment of the note.
    public var attachmentChunks: [String: [Data]]

    public init(
        passphraseID: Int64, wrappedKey: Data, noteProofHash: Data, iv: Data, tag: Data, ciphertext: Data,
        attachmentChunks: [String: [Data]]
    ) {
        self.passphraseID = passphraseID
        self.wrappedKey = wrappedKey
        self.noteProofHash = noteProofHash
        self.iv = iv
        self.tag = tag
        self.ciphertext = ciphertext
        self.attachmentChunks = attachmentChunks
    }
}

/// The glanceable summary of an account's notes (docs/WEB.md, the widget). Titles are private: the
/// server replaces them by placeholders while the keybag or the secure session is locked.
public struct WidgetSummary: Codable, Equatable, Sendable {
    public struct Note: Codable, Equatable, Sendable {
        /// The note's id: the widget's row opens it.
        public var id: String
        public var title: String
        public var modified: Date
        public var isLocked: Bool

        public init(id: String, title: String, modified: Date, isLocked: Bool) {
            self.id = id
            self.title = title
            self.modified = modified
            self.isLocked = isLocked
        }
    }
    public var noteCount: Int
    public var lockedNoteCount: Int
    /// The most recently modified notes, newest first (at most 5).
    public var recent: [Note]
    /// Pinned notes, most recently modified first (at most 5).
    public var pinned: [Note]

    public init(noteCount: Int, lockedNoteCount: Int, recent: [Note], pinned: [Note]) {
        self.noteCount = noteCount
        self.lockedNoteCount = lockedNoteCount
        self.recent = recent
        self.pinned = pinned
    }
}
