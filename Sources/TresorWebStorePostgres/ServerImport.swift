import Foundation
import Logging
import PostgresNIO
import TresorCrypto
import TresorNotesDomain
import TresorWebStore

// Moving a home's web accounts onto a server (`tresor server migrate`, docs/WEB.md, "Moving a
// home's web accounts to a server"). Every record is written in one transaction of its own, under
// the id it had in the home, and only when it is not there yet: a migration run again after an
// interruption writes what is missing and duplicates nothing. A record already there with other
// data is reported and left as it is — but a note edited since it moved goes beside the
// server's version, as its conflict copy. Content is sealed with ``ServerSealing`` exactly as
// ``PostgresWebStore`` seals it, so the server reads it back through the ordinary `WebStore`.
// Outcomes name ids only — never a title, body, password or hint.

/// What one imported record came to.
public enum ImportOutcome: Sendable, Equatable {
    /// Written now.
    case moved
    /// Already on the server with the same data (an earlier run wrote it).
    case alreadyPresent
    /// A note the server holds another version of (the home's was edited since an earlier run
    /// moved it, or the server's since): the home's is written beside it as its conflict copy,
    /// under this id — the same for the same version, so a run again writes it once.
    case movedAsCopy(String)
    /// Not written, and why (ids only): the server holds something else under its id or name,
    /// or what it belongs to was not moved.
    case skipped(String)
}

/// A web account as the server keeps it: its id, login name and password's PBKDF2 hash as they
/// are (its people keep their passwords).
public struct ImportedAccount: Sendable {
    /// Its id in the home, kept on the server.
    public var id: String
    /// The case-folded login name.
    public var loginName: String
    /// The password's salted PBKDF2 hash, as the home keeps it.
    public var passwordHash: PasswordHash
    /// When it was registered.
    public var created: Date

    /// - Parameters:
    ///   - id: its id in the home.
    ///   - loginName: the login name.
    ///   - passwordHash: the password's hash, salt and rounds.
    ///   - created: when it was registered.
    public init(id: String, loginName: String, passwordHash: PasswordHash, created: Date) {
        self.id = id
        self.loginName = loginName
        self.passwordHash = passwordHash
        self.created = created
    }
}

/// A passphrase generation of an account: what checks a passphrase, never the passphrase.
public struct ImportedPassphrase: Sendable {
    /// The account's id.
    public var account: String
    /// Its generation (1, 2, …): what identifies it within the account on both sides.
    public var generation: Int
    /// The PBKDF2 salt and rounds of the passphrase key.
    public var salt: Data
    public var iterations: Int
    /// A random key wrapped under the passphrase key.
    public var verifier: Data
    /// SHA-256 of the passphrase proof, once recorded.
    public var proofHash: Data?
    /// The hint (sealed on the server; never printed).
    public var hint: String?
    /// When it was set.
    public var created: Date

    /// - Parameters:
    ///   - account: the account's id.
    ///   - generation: its generation.
    ///   - salt: the passphrase key's salt.
    ///   - iterations: the passphrase key's PBKDF2 rounds.
    ///   - verifier: the wrapped random key that checks a passphrase.
    ///   - proofHash: SHA-256 of the passphrase proof, if recorded.
    ///   - hint: the hint, if any.
    ///   - created: when it was set.
    public init(account: String, generation: Int, salt: Data, iterations: Int, verifier: Data, proofHash: Data?, hint: String?, created: Date) {
        self.account = account
        self.generation = generation
        self.salt = salt
        self.iterations = iterations
        self.verifier = verifier
        self.proofHash = proofHash
        self.hint = hint
        self.created = created
    }
}

/// A folder.
public struct ImportedFolder: Sendable {
    /// Its id in the home, kept on the server.
    public var id: String
    /// The account's id.
    public var account: String
    /// Its name (sealed on the server).
    public var name: String
    /// When it was made.
    public var created: Date

    /// - Parameters:
    ///   - id: its id in the home.
    ///   - account: the account's id.
    ///   - name: its name.
    ///   - created: when it was made.
    public init(id: String, account: String, name: String, created: Date) {
        self.id = id
        self.account = account
        self.name = name
        self.created = created
    }
}

/// A note with its dates, pin, revision, place in Recently Deleted and participants.
public struct ImportedNote: Sendable {
    /// An unlocked note's body, or a locked note's fields exactly as they are sealed under its
    /// note key (never opened).
    public enum Content: Sendable {
        case text(String)
        case locked(Locked)
    }

    /// A locked note's fields (docs/FORMAT.md, "Notes").
    public struct Locked: Sendable {
        // Each field as docs/FORMAT.md, "Notes" describes it; the ciphertext is the body sealed
        // under the note key, sealed once more under the server key when written.
        /// The server's id of the passphrase it is locked with (``ServerImport/importPassphrase(_:isCurrent:)``).
        public var passphraseID: Int64
        public var salt: Data
        public var iterations: Int
        public var wrappedKey: Data
        public var iv: Data
        public var tag: Data
        public var ciphertext: Data
        public var bodyFormat: String
        public var noteProofHash: Data?

        /// - Parameters:
        ///   - passphraseID: the server's id of its passphrase.
        ///   - salt: the passphrase key's salt.
        ///   - iterations: the passphrase key's PBKDF2 rounds.
        ///   - wrappedKey: the note key wrapped under the passphrase key.
        ///   - iv: the body's AES-GCM nonce.
        ///   - tag: the body's AES-GCM tag.
        ///   - ciphertext: the body sealed under the note key.
        ///   - bodyFormat: `text` or `apple-notes`.
        ///   - noteProofHash: SHA-256 of the note proof, if recorded.
        public init(
            passphraseID: Int64, salt: Data, iterations: Int, wrappedKey: Data, iv: Data, tag: Data, ciphertext: Data, bodyFormat: String,
            noteProofHash: Data?
        ) {
            self.passphraseID = passphraseID
            self.salt = salt
            self.iterations = iterations
            self.wrappedKey = wrappedKey
            self.iv = iv
            self.tag = tag
            self.ciphertext = ciphertext
            self.bodyFormat = bodyFormat
            self.noteProofHash = noteProofHash
        }
    }

    /// Its id in the home, kept on the server.
    public var id: String
    /// The owner's id.
    public var account: String
    /// Its folder's id (the owner's), if any.
    public var folder: String?
    public var created: Date
    public var modified: Date
    public var pinned: Bool
    /// Its revision (docs/FORMAT.md, "Revisions and merges"), kept.
    public var revision: Int64
    /// When it went to Recently Deleted, if it is there.
    public var deleted: Date?
    /// Its title (sealed on the server; never printed).
    public var title: String
    public var content: Content
    /// The accounts it is shared with, and since when.
    public var participants: [(account: String, added: Date)]

    /// - Parameters:
    ///   - id: its id in the home.
    ///   - account: the owner's id.
    ///   - folder: its folder's id, if any.
    ///   - created: when it was made.
    ///   - modified: when it was last changed.
    ///   - pinned: whether it is pinned.
    ///   - revision: its revision.
    ///   - deleted: when it went to Recently Deleted, if it is there.
    ///   - title: its title.
    ///   - content: its body, or its locked fields.
    ///   - participants: the accounts it is shared with, and since when.
    public init(
        id: String, account: String, folder: String?, created: Date, modified: Date, pinned: Bool, revision: Int64, deleted: Date?,
        title: String, content: Content, participants: [(account: String, added: Date)]
    ) {
        self.id = id
        self.account = account
        self.folder = folder
        self.created = created
        self.modified = modified
        self.pinned = pinned
        self.revision = revision
        self.deleted = deleted
        self.title = title
        self.content = content
        self.participants = participants
    }
}

/// An attachment; its bytes are written chunk by chunk (``ServerImport/writeAttachmentChunk(_:index:of:)``).
public struct ImportedAttachment: Sendable {
    /// Its id in the home, kept on the server (its chunks are bound to it).
    public var id: String
    /// Its note's id.
    public var note: String
    public var kind: AttachmentKind
    /// Its name (sealed on the server; never printed).
    public var name: String
    /// Its plaintext size.
    public var byteCount: Int
    public var created: Date
    /// A locked note's: its chunks are sealed under the note key, one per 1 MiB of plaintext.
    public var isLocked: Bool
    /// Left out of backups in the home: the server keeps the flag.
    public var excludedFromBackup: Bool

    /// - Parameters:
    ///   - id: its id in the home.
    ///   - note: its note's id.
    ///   - kind: what it is.
    ///   - name: its name.
    ///   - byteCount: its plaintext size.
    ///   - created: when it was added.
    ///   - isLocked: whether its chunks are sealed under a locked note's key.
    ///   - excludedFromBackup: whether backups leave it out.
    public init(
        id: String, note: String, kind: AttachmentKind, name: String, byteCount: Int, created: Date, isLocked: Bool, excludedFromBackup: Bool = false
    ) {
        self.excludedFromBackup = excludedFromBackup
        self.id = id
        self.note = note
        self.kind = kind
        self.name = name
        self.byteCount = byteCount
        self.created = created
        self.isLocked = isLocked
    }
}

/// Writes a home's web accounts and notes into a server's database (docs/WEB.md, "Moving a
/// home's web accounts to a server"): each record one idempotent transaction, keyed by its id in
/// the home. Nothing of PostgresNIO leaves this module.
public final class ServerImport: Sendable {
    private let store: PostgresWebStore
    private let runner: Task<Void, Never>
    /// The database, as its URL names it without the password.
    public let databaseName: String
    /// The schema versions opening applied (empty when the database was up to date).
    public let appliedMigrations: [Int]

    private init(store: PostgresWebStore, runner: Task<Void, Never>, databaseName: String, applied: [Int]) {
        self.store = store
        self.runner = runner
        self.databaseName = databaseName
        self.appliedMigrations = applied
    }

    /// Connects, brings the schema up to date and checks the server key, as `tresord` does.
    /// - Parameters:
    ///   - url: the database.
    ///   - key: the server key its instances use.
    ///   - timeout: how long one step may wait for the database.
    ///   - logger: the pool's (kept at `notice` or above: never a statement's values).
    /// - Returns: the importer, until ``close()``.
    /// - Throws: ``ServerSetupError`` as ``PostgresWebStorage/open(url:key:lifetimes:timeout:logger:listening:passwordRounds:clock:)``.
    public static func open(url: DatabaseURL, key: ServerKey, timeout: Duration = .seconds(30), logger: Logger) async throws -> ServerImport {
        let (database, applied, runner) = try await PostgresWebStorage.connect(url: url, key: key, timeout: timeout, logger: logger)
        let store = PostgresWebStore(db: database, sealing: ServerSealing(serverKey: key), passwordRounds: 1, clock: { Date() })
        return ServerImport(store: store, runner: runner, databaseName: url.description, applied: applied)
    }

    /// Closes the pool's connections.
    public func close() async {
        runner.cancel()
        await runner.value
    }

    /// Writes a web account (login name and password hash as they are) unless it is there.
    /// - Parameter account: the account.
    /// - Returns: `moved`, `alreadyPresent` when the server has it with the same name and hash,
    ///   or `skipped` when it has that id or login name with other data (left as it is).
    /// - Throws: ``NotesError/unavailable(_:)`` and other database failures.
    public func importAccount(_ account: ImportedAccount) async throws -> ImportOutcome {
        try await store.db.transaction { [logger = store.logger] connection in
            if let (login, salt, rounds, hash) = try await connection.row(
                "SELECT login_name, password_salt, password_rounds, password_hash FROM accounts WHERE id = \(account.id) FOR UPDATE", logger,
                as: (String, Data, Int, Data).self)
            {
                let same = login == account.loginName && PasswordHash(salt: salt, rounds: rounds, hash: hash) == account.passwordHash
                return same ? .alreadyPresent : .skipped("account \(account.id) is on the server with another login name or password: left as it is")
            }
            if let other = try await connection.value("SELECT id FROM accounts WHERE login_name = \(account.loginName)", logger, as: String.self) {
                return .skipped("the login name of account \(account.id) is taken on the server by account \(other)")
            }
            let hash = account.passwordHash
            try await connection.run(
                """
                INSERT INTO accounts (id, login_name, password_salt, password_rounds, password_hash, created)
                VALUES (\(account.id), \(account.loginName), \(hash.salt), \(hash.rounds), \(hash.hash), \(account.created.timeIntervalSince1970))
                """, logger)
            return .moved
        }
    }

    /// Writes a passphrase generation unless the account has it, and makes it the account's
    /// current one when `isCurrent` and the account has none yet.
    /// - Parameters:
    ///   - passphrase: the generation.
    ///   - isCurrent: whether it is the account's current passphrase in the home.
    /// - Returns: the outcome, and the server's id of the generation (notes locked with it refer
    ///   to it) unless skipped.
    /// - Throws: database failures.
    public func importPassphrase(_ passphrase: ImportedPassphrase, isCurrent: Bool) async throws -> (ImportOutcome, id: Int64?) {
        try await store.db.transaction { [store, logger = store.logger] connection in
            let account = AccountID(rawValue: passphrase.account)
            try await store.lockAccount(account, connection)
            var outcome = ImportOutcome.alreadyPresent
            let id: Int64
            if let (existing, salt, verifier) = try await connection.row(
                "SELECT id, salt, verifier FROM passphrases WHERE account_id = \(passphrase.account) AND generation = \(passphrase.generation)",
                logger, as: (Int64, Data, Data).self)
            {
                guard salt == passphrase.salt, verifier == passphrase.verifier else {
                    return (.skipped("account \(passphrase.account) has another passphrase generation \(passphrase.generation) on the server"), nil)
                }
                id = existing
            } else {
                guard
                    let inserted = try await connection.value(
                        """
                        INSERT INTO passphrases (account_id, generation, salt, iterations, verifier, proof_hash, created)
                        VALUES (\(passphrase.account), \(passphrase.generation), \(passphrase.salt), \(passphrase.iterations),
                                \(passphrase.verifier), \(passphrase.proofHash), \(passphrase.created.timeIntervalSince1970))
                        RETURNING id
                        """, logger, as: Int64.self)
                else { throw NotesError.unavailable("the passphrase was not recorded: try again") }
                if let hint = passphrase.hint {
                    // Sealed once its row id is known, as `insertGeneration` does: the id is bound.
                    let sealed = try store.sealing.sealText(hint, "passphrases", "\(inserted)", "hint")
                    try await connection.run("UPDATE passphrases SET sealed_hint = \(sealed) WHERE id = \(inserted)", logger)
                }
                id = inserted
                outcome = .moved
            }
            if isCurrent {
                try await connection.run(
                    "UPDATE accounts SET current_passphrase_id = \(id) WHERE id = \(passphrase.account) AND current_passphrase_id IS NULL", logger)
            }
            return (outcome, id)
        }
    }

    /// Writes a folder (its name sealed) unless it is there.
    /// - Parameter folder: the folder.
    /// - Returns: `moved`, `alreadyPresent`, or `skipped` when its id is another account's.
    /// - Throws: database failures.
    public func importFolder(_ folder: ImportedFolder) async throws -> ImportOutcome {
        let sealedName = try store.sealing.sealText(folder.name, "folders", folder.id, "name")
        return try await store.db.transaction { [logger = store.logger] connection in
            if try await connection.count(
                """
                INSERT INTO folders (id, account_id, sealed_name, created)
                VALUES (\(folder.id), \(folder.account), \(sealedName), \(folder.created.timeIntervalSince1970))
                ON CONFLICT (id) DO NOTHING RETURNING 1
                """, logger) == 1
            {
                return .moved
            }
            let owner = try await connection.value("SELECT account_id FROM folders WHERE id = \(folder.id)", logger, as: String.self)
            return owner == folder.account ? .alreadyPresent : .skipped("folder \(folder.id) is another account's on the server")
        }
    }

    /// Writes a note — title and body sealed under the server key, or a locked note's fields as
    /// they are (its ciphertext sealed once more, as every locked note's on the server) — with
    /// its participants, unless it is there. A folder that is not the owner's on the server is
    /// left out (the note goes to no folder).
    /// - Parameter note: the note.
    /// - Returns: `moved`, `alreadyPresent`, or `skipped` when its id is another account's.
    /// - Throws: database failures.
    public func importNote(_ note: ImportedNote) async throws -> ImportOutcome {
        try await store.db.transaction { [self, logger = store.logger] connection in
            guard try await insert(note, as: note.id, title: note.title, pinned: note.pinned, revision: note.revision, connection) else {
                let owner = try await connection.value("SELECT account_id FROM notes WHERE id = \(note.id)", logger, as: String.self)
                guard owner == note.account else { return .skipped("note \(note.id) is another account's on the server") }
                let stored = try await store.note(note.id, connection)
                guard try !holds(note, stored) else { return .alreadyPresent }
                return try await importCopy(of: note, connection)
            }
            return .moved
        }
    }

    /// Whether the server's note `stored` has the title and text (or locked record) of `note`: a
    /// pin, a folder or Recently Deleted changed on either side is not another version.
    private func holds(_ note: ImportedNote, _ stored: StoredNote) throws -> Bool {
        guard try store.openTitle(stored) == note.title else { return false }
        switch note.content {
        case .text(let body):
            guard stored.sealedBody != nil else { return false }
            return try store.openBody(stored) == body
        case .locked(let fields):
            guard let sealed = stored.sealedCiphertext else { return false }
            return try store.sealing.open(sealed, "notes", stored.id, "ciphertext") == fields.ciphertext && stored.wrappedKey == fields.wrappedKey
        }
    }

    /// Writes `note`, which the server holds another version of, beside it as its conflict copy:
    /// the same owner, folder and participants, titled "… (conflict copy)", not pinned. Its id
    /// comes from the note's id and version, so a run again finds it.
    private func importCopy(of note: ImportedNote, _ connection: PostgresConnection) async throws -> ImportOutcome {
        let digest = Digest.sha256(Data("\(note.id)/\(note.revision)/\(note.modified.timeIntervalSince1970)".utf8))
        let id = UUID(uuid: digest.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString.lowercased()
        let title = NoteRules.conflictCopyTitle(note.title, editorName: nil)
        guard try await insert(note, as: id, title: title, pinned: false, revision: 1, connection) else { return .alreadyPresent }
        return .movedAsCopy(id)
    }

    /// Inserts `note` under `id`, titled `title` — its content sealed under the server key for
    /// that id, or a locked note's fields as they are (its ciphertext sealed once more, as every
    /// locked note's on the server) — with its participants, unless a note of that id is there.
    /// - Returns: whether it was inserted.
    private func insert(
        _ note: ImportedNote, as id: String, title: String, pinned: Bool, revision: Int64, _ connection: PostgresConnection
    ) async throws -> Bool {
        let sealing = store.sealing, logger = store.logger
        let sealedTitle = try sealing.sealText(title, "notes", id, "title")
        var sealedBody: Data?
        var locked: ImportedNote.Locked?
        var sealedCiphertext: Data?
        switch note.content {
        case .text(let body): sealedBody = try sealing.sealText(body, "notes", id, "body")
        case .locked(let fields):
            locked = fields
            sealedCiphertext = try sealing.seal(fields.ciphertext, "notes", id, "ciphertext")
        }
        let inserted = try await connection.count(
            """
            INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, revision, deleted, sealed_title, sealed_body,
                               passphrase_id, crypto_salt, crypto_iterations, crypto_wrapped_key, crypto_iv, crypto_tag,
                               sealed_ciphertext, body_format, note_proof_hash)
            VALUES (\(id), \(note.account),
                    (SELECT id FROM folders WHERE id = \(note.folder) AND account_id = \(note.account)),
                    \(note.created.timeIntervalSince1970), \(note.modified.timeIntervalSince1970), \(pinned), \(revision),
                    \(note.deleted?.timeIntervalSince1970), \(sealedTitle), \(sealedBody),
                    \(locked?.passphraseID), \(locked?.salt), \(locked?.iterations), \(locked?.wrappedKey), \(locked?.iv), \(locked?.tag),
                    \(sealedCiphertext), \(locked?.bodyFormat ?? "text"), \(locked?.noteProofHash))
            ON CONFLICT (id) DO NOTHING RETURNING 1
            """, logger)
        guard inserted == 1 else { return false }
        for participant in note.participants {
            try await connection.run(
                """
                INSERT INTO participants (note_id, account_id, added)
                VALUES (\(id), \(participant.account), \(participant.added.timeIntervalSince1970)) ON CONFLICT DO NOTHING
                """, logger)
        }
        return true
    }

    /// Starts writing an attachment unless it is there: records it as an upload in progress (so
    /// the server sweeps its chunks if the migration never finishes it) and drops chunks an
    /// interrupted run left, so its bytes are written whole from the first.
    /// - Parameter attachment: the attachment.
    /// - Returns: `moved` when its chunks are to be written now, `alreadyPresent`, or `skipped`
    ///   when its note is not on the server or its id is another note's.
    /// - Throws: database failures.
    public func beginAttachment(_ attachment: ImportedAttachment) async throws -> ImportOutcome {
        try await store.db.transaction { [logger = store.logger, now = store.now] connection in
            if let note = try await connection.value("SELECT note_id FROM attachments WHERE id = \(attachment.id)", logger, as: String.self) {
                return note == attachment.note ? .alreadyPresent : .skipped("attachment \(attachment.id) is another note's on the server")
            }
            guard try await connection.count("SELECT 1 FROM notes WHERE id = \(attachment.note)", logger) == 1 else {
                return .skipped("the note of attachment \(attachment.id) is not on the server")
            }
            try await connection.run("DELETE FROM attachment_chunks WHERE attachment_id = \(attachment.id)", logger)
            try await connection.run(
                """
                INSERT INTO attachment_uploads (id, note_id, started) VALUES (\(attachment.id), \(attachment.note), \(now))
                ON CONFLICT (id) DO UPDATE SET started = EXCLUDED.started
                """, logger)
            return .moved
        }
    }

    /// Writes chunk `index` of an attachment begun with ``beginAttachment(_:)``, sealed under the
    /// server key: 1 MiB of plaintext, or one chunk as sealed under a locked note's key.
    /// - Parameters:
    ///   - bytes: the chunk.
    ///   - index: its position, from 0.
    ///   - id: the attachment's id.
    /// - Throws: database failures.
    public func writeAttachmentChunk(_ bytes: Data, index: Int, of id: String) async throws {
        let sealed = try store.sealing.seal(bytes, "attachment_chunks", "\(id)/\(index)", "bytes")
        try await store.db.read { [logger = store.logger] connection in
            try await connection.run(
                """
                INSERT INTO attachment_chunks (attachment_id, chunk_index, sealed_bytes) VALUES (\(id), \(index), \(sealed))
                ON CONFLICT (attachment_id, chunk_index) DO NOTHING
                """, logger)
        }
    }

    /// Makes the chunks written an attachment of its note, in one step.
    /// - Parameters:
    ///   - attachment: the attachment.
    ///   - chunkCount: how many chunks were written.
    /// - Returns: `moved`, or `alreadyPresent` when another run finished it meanwhile.
    /// - Throws: database failures.
    public func finishAttachment(_ attachment: ImportedAttachment, chunkCount: Int) async throws -> ImportOutcome {
        let sealedName = try store.sealing.sealText(attachment.name, "attachments", attachment.id, "name")
        return try await store.db.transaction { [logger = store.logger] connection in
            try await connection.run("DELETE FROM attachment_uploads WHERE id = \(attachment.id)", logger)
            let inserted = try await connection.count(
                """
                INSERT INTO attachments (id, note_id, kind, sealed_name, byte_count, chunk_count, is_locked, created, excluded_from_backup)
                VALUES (\(attachment.id), \(attachment.note), \(attachment.kind.rawValue), \(sealedName), \(attachment.byteCount), \(chunkCount),
                        \(attachment.isLocked), \(attachment.created.timeIntervalSince1970), \(attachment.excludedFromBackup))
                ON CONFLICT (id) DO NOTHING RETURNING 1
                """, logger)
            return inserted == 1 ? .moved : .alreadyPresent
        }
    }

    /// Drops an attachment begun and not finished (its home file turned out damaged): its chunks
    /// and its upload row.
    /// - Parameter id: the attachment's id.
    /// - Throws: database failures.
    public func abandonAttachment(_ id: String) async throws {
        try await store.abandonUpload(id)
    }
}
