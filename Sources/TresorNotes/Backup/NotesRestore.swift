import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorNotesDomain
import TresorStorage
import TresorSystem

/// Stages a backup's notes for a restore into one home's notes: decides, record by record,
/// what is new, already there or in conflict, and prepares the rows — sealed under this home's
/// content key, the backup's ids kept — as ``StagedStatement``s, and attachment files in a
/// staging folder, for a journal to commit later (docs/FORMAT.md, "Restoring").
///
/// Records come in the order a backup writes them: accounts, passphrases, folders, then each
/// note followed by its attachments. A locked note is restored exactly as it was sealed under
/// its note key: it opens with the passphrase it had, and no passphrase is needed to restore it.
public final class NotesRestore {
    let store: NotesStore
    let onConflict: ConflictPolicy
    let sealing: ContentSealing
    /// Where attachment files are written until the commit moves them into the home.
    let stagingFolder: URL
    /// Whether the backup's import tags were made with this home's key (they are kept then).
    let keepsImportTags: Bool

    /// The accounts the backup holds that exist here as the backup has them (or will, once
    /// committed): the only ones its records go into (docs/FORMAT.md, "Restoring").
    private var accounts: Set<String> = []
    /// Every account record of the backup seen so far, restored or not.
    private var backupAccounts: Set<String> = []
    /// Login names of the web accounts staged so far.
    private var stagedLogins: Set<String> = []
    /// Attachment ids of the backup seen so far.
    private var seenAttachments: Set<String> = []
    /// The local account's current passphrase here, if any.
    private var accountsWithoutPassphrase: Set<String> = []
    /// The backup's passphrase ids → this home's.
    private var passphrases: [Int64: Int64] = [:]
    private var nextPassphraseID: Int64 = 1
    /// Per account, the next generation number for restored passphrases (nil: keep the backup's).
    private var nextGeneration: [String: Int] = [:]
    /// The backup's folder ids → this home's.
    private var folders: [String: String] = [:]
    /// What happened to each note of the backup seen so far.
    private var notes: [String: (outcome: BackupOutcome, isLocked: Bool)] = [:]
    /// The attachment being staged.
    private var attachment: StagedAttachment?

    /// - Parameters:
    ///   - store: the notes restored into (its content must be available: unlocked once).
    ///   - onConflict: what to do with a note whose id this home holds with other content.
    ///   - stagingFolder: where to write attachment files until the commit.
    ///   - importTagKeyID: the backup's ``NotesStore/importTagKeyID``, if it has one.
    /// - Throws: ``NotesError/contentUnavailable`` before the first unlock; storage errors.
    public init(store: NotesStore, onConflict: ConflictPolicy, stagingFolder: URL, importTagKeyID: Data?) throws {
        self.store = store
        self.onConflict = onConflict
        sealing = try store.sealing()
        self.stagingFolder = stagingFolder
        keepsImportTags = try importTagKeyID.map { ConstantTime.equals($0, try store.importTagKeyID) } ?? false
        try store.pool.read { db in
            for row in try Row.fetchAll(db, sql: "SELECT id, current_passphrase_id FROM accounts") {
                let id: String = row["id"]
                if (row["current_passphrase_id"] as Int64?) == nil { accountsWithoutPassphrase.insert(id) }
            }
            nextPassphraseID = (try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM passphrases") ?? 0) + 1
        }
    }

    // MARK: Accounts, passphrases, folders

    /// Stages an account: a new web or team account is added; the local account and an account
    /// of the same id are kept (an account of the same id but another login or password is a
    /// conflict; replaced with `--on-conflict replace`); a login name another account holds is
    /// always a conflict. Only an account restored, replaced or found the same here takes the
    /// backup's passphrases, folders and notes.
    /// - Parameters:
    ///   - account: the backup's account.
    ///   - mayAdd: whether it may be added or replace the home's (else it is `skipped` unless
    ///     the home holds it the same — the user did not allow a new web login).
    ///   - mayJoin: whether the backup's records may go into the home's account of its id when the
    ///     home holds it the same (else it is `skipped`: the user did not allow the backup into
    ///     that account). The local account is the home's user's own: always.
    /// - Returns: the outcome and the statements to commit.
    /// - Throws: ``NotesError/invalid(_:)`` for an account this store would not hold;
    ///   ``TresorModel/RestoreSkip/duplicate`` for a second record of one account; storage errors.
    public func stage(_ account: BackedUpAccount, mayAdd: Bool = true, mayJoin: Bool = true) throws -> (BackupOutcome, [StagedStatement]) {
        guard backupAccounts.insert(account.id).inserted else { throw RestoreSkip.duplicate }
        if let login = account.loginName {
            guard try NoteRules.loginName(login) == login, login != NoteRules.localLoginName else {
                throw NotesError.invalid("the account's login name is not valid")
            }
        }
        let existing = try store.pool.read { db in try Row.fetchOne(db, sql: "SELECT * FROM accounts WHERE id = ?", arguments: [account.id]) }
        let loginHolder = try account.loginName.flatMap { login in
            try store.pool.read { db in try String.fetchOne(db, sql: "SELECT id FROM accounts WHERE login_name = ?", arguments: [login]) }
        }
        if let loginHolder, loginHolder != account.id { return (.conflict, []) }
        if let login = account.loginName, stagedLogins.contains(login) { return (.conflict, []) }
        if let existing {
            let same =
                existing["name"] == account.name && existing["login_name"] == account.loginName
                && existing["password_salt"] == account.passwordSalt && existing["password_iterations"] == account.passwordIterations
                && existing["password_hash"] == account.passwordHash
            if account.id == AccountID.local.rawValue || same && mayJoin {
                accounts.insert(account.id)
                return (.alreadyPresent, [])
            }
            guard !same else { return (.skipped, []) }
            guard onConflict == .replace else { return (.conflict, []) }
            guard mayAdd else { return (.skipped, []) }
            accounts.insert(account.id)
            if let login = account.loginName { stagedLogins.insert(login) }
            return (
                .replaced,
                [
                    StagedStatement(
                        """
                        UPDATE accounts SET name = ?, login_name = ?, password_salt = ?, password_iterations = ?, password_hash = ? WHERE id = ?
                        """,
                        [
                            account.name.databaseValue, account.loginName.databaseValue, account.passwordSalt.databaseValue,
                            account.passwordIterations.databaseValue, account.passwordHash.databaseValue, account.id.databaseValue,
                        ])
                ]
            )
        }
        guard mayAdd else { return (.skipped, []) }
        accounts.insert(account.id)
        accountsWithoutPassphrase.insert(account.id)
        if let login = account.loginName { stagedLogins.insert(login) }
        return (
            .restored,
            [
                StagedStatement(
                    """
                    INSERT OR IGNORE INTO accounts (id, name, login_name, password_salt, password_iterations, password_hash, created)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        account.id.databaseValue, account.name.databaseValue, account.loginName.databaseValue, account.passwordSalt.databaseValue,
                        account.passwordIterations.databaseValue, account.passwordHash.databaseValue,
                        account.created.timeIntervalSince1970.databaseValue,
                    ])
            ]
        )
    }

    /// Whether the home holds an account of id `id`.
    /// - Parameter id: the account's id.
    /// - Returns: whether it exists here.
    /// - Throws: storage errors.
    public func holdsAccount(_ id: String) throws -> Bool {
        try store.pool.read { db in try Bool.fetchOne(db, sql: "SELECT 1 FROM accounts WHERE id = ?", arguments: [id]) ?? false }
    }

    /// Stages a passphrase record of an account restored or kept: one this home holds already
    /// (same source, salt, iterations and verifier) is used as it is; another is added as an
    /// earlier generation, or as the current one for an account that has none.
    /// - Parameters:
    ///   - passphrase: the backup's passphrase record.
    ///   - isCurrent: whether it is its account's current passphrase in the backup.
    /// - Returns: the outcome and the statements to commit.
    /// - Throws: ``NotesError/invalid(_:)`` for a record this store would not hold.
    public func stage(_ passphrase: BackedUpPassphrase, isCurrent: Bool) throws -> (BackupOutcome, [StagedStatement]) {
        guard accounts.contains(passphrase.account) else { return (.skipped, []) }
        guard passphrases[passphrase.id] == nil else { throw RestoreSkip.duplicate }
        guard LockInfo.Source(rawValue: passphrase.source) != nil, (1...LockedNoteCrypto.maximumIterations).contains(passphrase.iterations),
            (1...64).contains(passphrase.salt.count)
        else { throw NotesError.invalid("a passphrase record is malformed") }
        if let hint = passphrase.hint { try NoteRules.validate(hint, limit: 4 * NoteLimits.hintBytes, what: "hint") }
        let existing = try store.pool.read { db in
            try Int64.fetchOne(
                db,
                sql: """
                    SELECT id FROM passphrases WHERE account_id = ? AND source = ? AND salt = ? AND iterations = ? AND verifier IS ?
                    """, arguments: [passphrase.account, passphrase.source, passphrase.salt, passphrase.iterations, passphrase.verifier])
        }
        if let existing {
            passphrases[passphrase.id] = existing
            return (.alreadyPresent, [])
        }
        let id = nextPassphraseID
        nextPassphraseID += 1
        passphrases[passphrase.id] = id
        var generation = passphrase.generation
        if passphrase.source == LockInfo.Source.tresor.rawValue, generation != nil {
            if nextGeneration[passphrase.account] == nil {
                let highest = try store.pool.read { db in
                    try Int.fetchOne(
                        db, sql: "SELECT MAX(generation) FROM passphrases WHERE account_id = ? AND source = ?",
                        arguments: [passphrase.account, LockInfo.Source.tresor.rawValue])
                }
                // Generations keep their numbers unless the account has its own already.
                nextGeneration[passphrase.account] = highest.map { $0 + 1 } ?? 0
            }
            if let next = nextGeneration[passphrase.account], next > 0 {
                generation = next
                nextGeneration[passphrase.account] = next + 1
            }
        }
        let hint = try passphrase.hint.map { try sealing.sealText($0, table: "passphrases", id: "\(id)", column: "hint") }
        var statements = [
            // The id is this home's next one: nobody may have taken it since.
            StagedStatement(
                .expect, "SELECT NOT EXISTS (SELECT 1 FROM passphrases WHERE id = ? AND salt != ?)",
                [id.databaseValue, passphrase.salt.databaseValue]),
            StagedStatement(
                """
                INSERT OR IGNORE INTO passphrases (id, account_id, source, generation, salt, iterations, verifier, proof_hash, sealed_hint, created)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    id.databaseValue, passphrase.account.databaseValue, passphrase.source.databaseValue, generation.databaseValue,
                    passphrase.salt.databaseValue, passphrase.iterations.databaseValue, passphrase.verifier.databaseValue,
                    passphrase.proofHash.databaseValue, hint.databaseValue, passphrase.created.timeIntervalSince1970.databaseValue,
                ]),
        ]
        if isCurrent, accountsWithoutPassphrase.contains(passphrase.account) {
            accountsWithoutPassphrase.remove(passphrase.account)
            statements.append(
                StagedStatement(
                    "UPDATE accounts SET current_passphrase_id = ? WHERE id = ? AND current_passphrase_id IS NULL",
                    [id.databaseValue, passphrase.account.databaseValue]))
        }
        return (.restored, statements)
    }

    /// Stages a folder: a folder of the same name in the account is the same folder.
    /// - Parameter folder: the backup's folder.
    /// - Returns: the outcome and the statements to commit.
    /// - Throws: ``NotesError/invalid(_:)`` for an invalid name; storage errors.
    public func stage(_ folder: BackedUpFolder) throws -> (BackupOutcome, [StagedStatement]) {
        guard accounts.contains(folder.account) else { return (.skipped, []) }
        guard folders[folder.id] == nil else { throw RestoreSkip.duplicate }
        try NoteRules.validateFolderName(folder.name)
        let (byName, idTaken) = try store.pool.read { db -> (String?, Bool) in
            (
                try store.folderID(named: folder.name, account: AccountID(rawValue: folder.account), creating: false, db, sealing),
                try Bool.fetchOne(db, sql: "SELECT 1 FROM folders WHERE id = ?", arguments: [folder.id]) ?? false
            )
        }
        if let byName {
            folders[folder.id] = byName
            return (.alreadyPresent, [])
        }
        let id = idTaken || Set(folders.values).contains(folder.id) ? UUID().uuidString.lowercased() : folder.id
        folders[folder.id] = id
        return (
            .restored,
            [
                StagedStatement(
                    "INSERT OR IGNORE INTO folders (id, account_id, sealed_name, created) VALUES (?, ?, ?, ?)",
                    [
                        id.databaseValue, folder.account.databaseValue,
                        try sealing.sealText(folder.name, table: "folders", id: id, column: "name").databaseValue,
                        folder.created.timeIntervalSince1970.databaseValue,
                    ])
            ]
        )
    }

    // MARK: Notes

    /// Stages notes that came one after another (no attachment between them), half of them on
    /// another core — each note is decided and sealed on its own. A note is new, already there
    /// (the same id and content), or in conflict with the home's note of the same id (replaced
    /// by `--on-conflict replace`, the home's version kept in Recently Deleted with its attachments).
    /// - Parameter notes: the backup's notes, in order.
    /// - Returns: for each note, in order: the outcome and the statements to commit — or what it threw:
    ///   ``NotesError/invalid(_:)`` for a note this store would not hold,
    ///   ``TresorModel/RestoreSkip`` for a second note of one id or one of an account the backup
    ///   does not hold, storage errors.
    public func stage(_ notes: [BackedUpNote]) -> [Result<(BackupOutcome, [StagedStatement]), any Error>] {
        let decider = decider, store = store
        var inBatch: Set<String> = []
        let duplicate = notes.map { self.notes[$0.id] != nil || !inBatch.insert($0.id).inserted }
        let unique = zip(notes, duplicate).filter { !$0.1 }.map(\.0)
        // Each half in one read transaction: its lookups take SQLite's locks once.
        var decidedUnique = TwoThreads.mapHalves(unique) { half in
            try store.pool.read { db in half.map { note in Result { try decider.decide(note, db) } } }
        }[...]
        let decided = duplicate.map { isDuplicate -> Result<(BackupOutcome, [StagedStatement]), any Error> in
            isDuplicate ? .failure(RestoreSkip.duplicate) : decidedUnique.removeFirst()
        }
        for (note, result) in zip(notes, decided) {
            if case .success(let (outcome, _)) = result { self.notes[note.id] = (outcome, note.locked != nil) }
        }
        return decided
    }

    /// What decides a note: this restore's state so far (accounts, folders, passphrases).
    private var decider: NoteRestoreDecider {
        NoteRestoreDecider(
            store: store, onConflict: onConflict, sealing: sealing, keepsImportTags: keepsImportTags,
            accounts: accounts, backupAccounts: backupAccounts, folders: folders, passphrases: passphrases)
    }

    // MARK: Attachments

    /// Starts staging an attachment of the note staged last; its pieces follow
    /// (``appendPiece(_:)``), then ``finishAttachment()``.
    /// - Parameter attachment: the backup's attachment.
    /// - Returns: nil when its bytes are to be staged; else the outcome without them (already
    ///   there, or skipped with its note), and the pieces that follow are to be dropped.
    /// - Throws: ``NotesError/invalid(_:)`` for an attachment this store would not hold;
    ///   ``TresorModel/RestoreSkip`` for a second attachment of one id, or an id another note's
    ///   attachment holds here.
    public func beginAttachment(_ attachment: BackedUpAttachment) throws -> BackupOutcome? {
        precondition(self.attachment == nil, "an attachment is being staged")
        guard seenAttachments.insert(attachment.id).inserted else { throw RestoreSkip.duplicate }
        guard let note = notes[attachment.note], note.outcome != .conflict, note.outcome != .skipped else { return .skipped }
        try NoteRules.validateAttachmentName(attachment.name)
        guard attachment.byteCount >= 0, attachment.isLocked == note.isLocked else {
            throw NotesError.invalid("the attachment does not match its note")
        }
        let holder = try store.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT note_id, file FROM attachments WHERE id = ?", arguments: [attachment.id]).map {
                (note: $0[0] as String, file: $0[1] as String)
            }
        }
        if let holder {
            // Its note's own attachment: there already, or the home's copy of the one the
            // replaced note's kept version holds — the backup's takes its place.
            if holder.note == attachment.note && note.outcome == .alreadyPresent { return .alreadyPresent }
            guard holder.note == attachment.note && note.outcome == .replaced else { throw RestoreSkip.idInUse }
        }
        let file: StagedAttachment.File =
            attachment.isLocked
            ? .sealed(try AttachmentFile.SealedChunkWriter(attachmentID: attachment.id, in: stagingFolder, sealing: sealing))
            : .plain(try AttachmentFile.Writer(attachmentID: attachment.id, in: stagingFolder, sealing: sealing, noteKey: nil))
        self.attachment = StagedAttachment(attachment: attachment, file: file, replacedFile: holder?.file)
        return nil
    }

    /// Adds the next piece of the attachment being staged.
    /// - Parameter piece: plaintext (an unlocked note's), or one chunk sealed under the note key.
    /// - Throws: ``NotesError/invalid(_:)`` when the pieces grow past the attachment's size; I/O errors.
    public func appendPiece(_ piece: Data) throws {
        guard var staged = attachment else { preconditionFailure("no attachment is being staged") }
        switch staged.file {
        case .plain(let writer):
            guard writer.byteCount + piece.count <= staged.attachment.byteCount else {
                throw NotesError.invalid("attachment \(staged.attachment.id) holds more bytes than it says")
            }
            try writer.append(piece)
        case .sealed(let writer):
            // The last chunk is known only when the attachment ends: one waits.
            if let previous = staged.pendingChunk { try writer.append(previous, isFinal: false) }
            staged.pendingChunk = piece
            staged.sealedBytes += piece.count
            // Each chunk adds its IV and tag to the bytes it seals.
            guard staged.sealedBytes <= staged.attachment.byteCount + (staged.sealedBytes / AttachmentFile.chunkByteCount + 1) * 64 else {
                throw NotesError.invalid("attachment \(staged.attachment.id) holds more bytes than it says")
            }
        }
        attachment = staged
    }

    /// Ends the attachment being staged: its file is made durable in the staging folder.
    /// - Returns: the outcome, the statements to commit, the staged file's name, and the home's
    ///   file of the same attachment it replaces, to remove once committed.
    /// - Throws: ``NotesError/invalid(_:)`` when the bytes do not add up to the attachment's size.
    public func finishAttachment() throws -> (BackupOutcome, [StagedStatement], file: String, replacedFile: String?) {
        guard let staged = attachment else { preconditionFailure("no attachment is being staged") }
        attachment = nil
        let attachment = staged.attachment
        let file: String
        switch staged.file {
        case .plain(let writer):
            guard writer.byteCount == attachment.byteCount else { throw NotesError.invalid("attachment \(attachment.id) is incomplete") }
            // The staging folder is synced once, before the restore commits (RestoreStaging.commit).
            file = try writer.finish(syncingFolder: false)
        case .sealed(let writer):
            guard let last = staged.pendingChunk else { throw NotesError.invalid("attachment \(attachment.id) has no chunk") }
            try writer.append(last, isFinal: true)
            file = try writer.commit(syncingFolder: false)
        }
        let replaced = staged.replacedFile.map { _ in
            StagedStatement("DELETE FROM attachments WHERE id = ?", [attachment.id.databaseValue])
        }
        let statement = StagedStatement(
            """
            INSERT OR IGNORE INTO attachments (id, note_id, kind, sealed_name, byte_count, created, file, is_locked, exclude_from_backup)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                attachment.id.databaseValue, attachment.note.databaseValue, attachment.kind.rawValue.databaseValue,
                try sealing.sealText(attachment.name, table: "attachments", id: attachment.id, column: "name").databaseValue,
                attachment.byteCount.databaseValue, attachment.created.timeIntervalSince1970.databaseValue, file.databaseValue,
                attachment.isLocked.databaseValue, attachment.excludedFromBackup.databaseValue,
            ])
        return (.restored, (replaced.map { [$0] } ?? []) + [statement], file, staged.replacedFile)
    }

    /// Drops the attachment being staged (its file is removed).
    public func abandonAttachment() {
        if case .plain(let writer) = attachment?.file { writer.abandon() }
        if case .sealed(let writer) = attachment?.file { writer.abandon() }
        attachment = nil
    }

    /// The outcome the note `id` got, if the backup held it.
    /// - Parameter id: a note id of the backup.
    /// - Returns: its outcome.
    public func outcome(ofNote id: String) -> BackupOutcome? { notes[id]?.outcome }

    private struct StagedAttachment {
        enum File {
            case plain(AttachmentFile.Writer)
            case sealed(AttachmentFile.SealedChunkWriter)
        }

        var attachment: BackedUpAttachment
        var file: File
        /// The home's file of this attachment, held by the kept version of the note it replaces.
        var replacedFile: String?
        /// A locked attachment's latest chunk, written once the next shows it is not the last.
        var pendingChunk: Data?
        var sealedBytes = 0
    }
}

extension NotesStore {
    /// After a restore committed rows beside this store: the search index is built again from
    /// the notes at the next search.
    public func notesRestored() {
        index.invalidate()
    }
}
