import Foundation
import Logging
import PostgresNIO
import TresorNotesDomain
import TresorWebStore

/// A server's web accounts and notes in its PostgreSQL database (docs/ARCHITECTURE.md, "The web
/// storage boundary"; schema: docs/FORMAT.md, "A Tresor server's database"). Every content value
/// — titles, bodies, folder and attachment names, attachment bytes, locked ciphertext, hints — is
/// sealed with ``ServerSealing`` bound to its table, row and column (docs/SECURITY.md, 3.15).
///
/// Every method is one transaction: its checks, its changes and its live-update announcement
/// (`pg_notify`, delivered by PostgreSQL only when the transaction commits) together, or
/// nothing. Writes to one account's notes take the account's row lock first (`SELECT … FOR NO
/// KEY UPDATE`), then the note's: so quotas, folder names, revisions and wrong-passphrase counts
/// are checked against what no other instance can change until the write commits, and locks are
/// always taken in the same order. (`NO KEY`: the ids never change, and rows that merely refer
/// to a locked account or note — a participant, an attachment — need not wait for it.)
///
/// Each area of ``WebStore`` is answered in its `PostgresWebStore+Area.swift` (folders and search
/// beside notes, passphrases beside locked notes), as `SQLiteWebStore`'s are.
/// (`Sendable` is stated here: the area protocols its extensions conform to imply it, and Swift
/// wants a class's `Sendable` in the class's own file.)
final class PostgresWebStore: WebStore, Sendable {
    let db: ServerDatabase
    let sealing: ServerSealing
    let minimumIterations: Int
    let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - db: the pool.
    ///   - sealing: the content layer of the server key.
    ///   - passwordRounds: PBKDF2 rounds for account passwords, and the fewest accepted for a
    ///     passphrase made in the browser.
    ///   - clock: the time (tests move it on to expire Recently Deleted).
    init(db: ServerDatabase, sealing: ServerSealing, passwordRounds: Int, clock: @escaping @Sendable () -> Date) {
        self.db = db
        self.sealing = sealing
        self.minimumIterations = max(passwordRounds, 1)
        self.clock = clock
    }

    var logger: Logger { db.logger }
    var now: Double { clock().timeIntervalSince1970 }

    /// When a device's change happened, as this server dates it: its own time (now, for a change
    /// of a browser or an older device), never later than now.
    func time(of edit: SyncedEdit?) -> Double { min(edit?.editedAt?.timeIntervalSince1970 ?? now, now) }

    /// A new note's `created` and `modified`: the device's (never later than now, nor modified
    /// before created), or now for a browser's note.
    func dates(of edit: SyncedEdit?) -> (created: Double, modified: Double) {
        let created = min(edit?.created?.timeIntervalSince1970 ?? now, now)
        return (created, max(created, time(of: edit)))
    }

    func checkHealth() async throws {
        try await db.read { [logger] connection in try await connection.run("SELECT 1", logger) }
    }

    /// Runs `body` in a transaction that commits even when it returns a failure: a wrong proof is
    /// counted (and the count kept) while the caller gets the error.
    func counting<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> Result<T, NotesError>) async throws -> T {
        try await db.transaction(body).get()
    }

    // MARK: Rows

    /// Note `id` (every column), or `notFound`.
    func note(_ id: String, _ connection: PostgresConnection, forUpdate: Bool = false) async throws -> StoredNote {
        let query: PostgresQuery = forUpdate ? "SELECT * FROM notes WHERE id = \(id) FOR NO KEY UPDATE" : "SELECT * FROM notes WHERE id = \(id)"
        for try await row in try await connection.query(query, logger: logger) {
            return try StoredNote(row, full: true)
        }
        throw NotesError.notFound("note \(id.prefix(64))")
    }

    /// Note `id` locked for a write: its owner's account row first, then the note's row, so
    /// every write of an account's notes takes its locks in one order. A shared note's write
    /// also counts on its participants' rows (trigger `notes_shared_sync_counter`): its owner's
    /// and participants' rows are locked in id order, so two notes shared across two accounts
    /// cannot deadlock.
    func noteForWrite(_ id: String, _ connection: PostgresConnection) async throws -> StoredNote {
        guard let owner = try await connection.value("SELECT account_id FROM notes WHERE id = \(id)", logger, as: String.self) else {
            throw NotesError.notFound("note \(id.prefix(64))")
        }
        let participants = try await connection.column("SELECT account_id FROM participants WHERE note_id = \(id)", logger, as: String.self)
        for account in ([owner] + participants).sorted() {
            do {
                try await lockAccount(AccountID(rawValue: account), connection)
            } catch NotesError.notFound where account != owner {
                // A participant's account deleted meanwhile: nothing of it to count.
            }
        }
        return try await note(id, connection, forUpdate: true)
    }

    /// Counts note `id`'s revision up for a change the trigger `notes_revision` does not see: a
    /// participant added or removed, a passphrase change's new wrapping of its key — what another
    /// device must fetch again, as it must after any change the trigger counts.
    func countRevision(of id: String, _ connection: PostgresConnection) async throws {
        try await connection.run("UPDATE notes SET revision = revision + 1 WHERE id = \(id)", logger)
    }

    /// Takes account `account`'s row lock for the rest of the transaction.
    /// - Throws: ``NotesError/notFound(_:)`` for an unknown account.
    @discardableResult
    func lockAccount(_ account: AccountID, _ connection: PostgresConnection) async throws -> AccountState {
        guard
            let row = try await connection.row(
                """
                SELECT current_passphrase_id, failed_passphrase_entries, last_passphrase_failure FROM accounts WHERE id = \(account.rawValue)
                FOR NO KEY UPDATE
                """, logger, as: (Int64?, Int, Double?).self)
        else { throw NotesError.notFound("account \(account.rawValue.prefix(64))") }
        return AccountState(currentPassphraseID: row.0, failedEntries: row.1, lastFailure: row.2.map(Date.init(timeIntervalSince1970:)))
    }

    /// Account `account`'s passphrase state, without a lock.
    func accountState(_ account: AccountID, _ connection: PostgresConnection) async throws -> AccountState {
        guard
            let row = try await connection.row(
                "SELECT current_passphrase_id, failed_passphrase_entries, last_passphrase_failure FROM accounts WHERE id = \(account.rawValue)",
                logger, as: (Int64?, Int, Double?).self)
        else { throw NotesError.notFound("account \(account.rawValue.prefix(64))") }
        return AccountState(currentPassphraseID: row.0, failedEntries: row.1, lastFailure: row.2.map(Date.init(timeIntervalSince1970:)))
    }

    /// The bytes `account` stores (docs/WEB.md, "Availability"), counted as the embedded store
    /// counts them: its notes' sealed titles and bodies, locked ciphertext, and its notes'
    /// attachments as uploaded.
    func storedBytes(_ account: AccountID, _ connection: PostgresConnection) async throws -> Int64 {
        let notes =
            try await connection.value(
                """
                SELECT COALESCE(SUM(octet_length(sealed_title) + COALESCE(octet_length(sealed_body), 0)
                                    + COALESCE(octet_length(sealed_ciphertext), 0)), 0)::bigint
                FROM notes WHERE account_id = \(account.rawValue)
                """, logger, as: Int64.self) ?? 0
        let attachments =
            try await connection.value(
                """
                SELECT COALESCE(SUM(a.byte_count), 0)::bigint FROM attachments a JOIN notes n ON n.id = a.note_id
                WHERE n.account_id = \(account.rawValue)
                """, logger, as: Int64.self) ?? 0
        return notes + attachments
    }

    /// Checks `quota` against what `account` stores, inside the write's transaction (the
    /// account's row lock held, so two writes cannot both take the last room).
    func check(_ quota: StorageQuota?, adding: Int? = nil, account: AccountID, _ connection: PostgresConnection) async throws {
        guard var quota else { return }
        if let adding { quota.addingBytes = adding }
        try quota.check(used: try await storedBytes(account, connection))
    }

    func openTitle(_ note: StoredNote) throws -> String {
        try sealing.openText(note.sealedTitle, "notes", note.id, "title")
    }

    func openBody(_ note: StoredNote) throws -> String {
        try sealing.openText(note.sealedBody ?? Data(), "notes", note.id, "body")
    }

    // MARK: Summaries

    /// The summaries of `notes`, in their order: folder names, attachment counts, participants
    /// and locks read once per list, not per note.
    /// - Parameters:
    ///   - notes: the notes.
    ///   - knownCounts: the notes' attachment counts when the caller has read their attachments
    ///     already (an opened note), so they are not counted again.
    ///   - connection: the connection.
    /// - Returns: the summaries.
    func summaries(
        _ notes: [StoredNote], attachmentCounts knownCounts: [String: Int]? = nil, _ connection: PostgresConnection
    ) async throws -> [NoteSummary] {
        guard !notes.isEmpty else { return [] }
        let ids = notes.map(\.id)
        var folderNames: [String: String] = [:]
        let folderIDs = Array(Set(notes.compactMap(\.folderID)))
        if !folderIDs.isEmpty {
            for (id, sealed) in try await connection.rows(
                "SELECT id, sealed_name FROM folders WHERE id = ANY(\(folderIDs))", logger, as: (String, Data).self)
            {
                folderNames[id] = try sealing.openText(sealed, "folders", id, "name")
            }
        }
        var attachmentCounts = knownCounts ?? [:]
        if knownCounts == nil {
            for (id, count) in try await connection.rows(
                "SELECT note_id, COUNT(*) FROM attachments WHERE note_id = ANY(\(ids)) GROUP BY note_id", logger, as: (String, Int).self)
            {
                attachmentCounts[id] = count
            }
        }
        var participants: [String: [String]] = [:]
        for (id, name) in try await connection.rows(
            """
            SELECT p.note_id, a.login_name FROM participants p JOIN accounts a ON a.id = p.account_id
            WHERE p.note_id = ANY(\(ids)) ORDER BY p.note_id, p.added, a.login_name
            """, logger, as: (String, String).self)
        {
            participants[id, default: []].append(name)
        }
        var ownerNames: [String: String] = [:]
        let owners = Array(Set(notes.filter { participants[$0.id] != nil }.map(\.accountID)))
        if !owners.isEmpty {
            for (id, name) in try await connection.rows(
                "SELECT id, login_name FROM accounts WHERE id = ANY(\(owners))", logger, as: (String, String).self)
            {
                ownerNames[id] = name
            }
        }
        var locks: [Int64: LockInfo] = [:]
        for passphraseID in Set(notes.compactMap(\.passphraseID)) {
            locks[passphraseID] = try await lockInfo(passphraseID, connection)
        }
        return try notes.map { note in
            NoteSummary(
                id: note.id, title: try openTitle(note), folder: note.folderID.flatMap { folderNames[$0] },
                created: Date(timeIntervalSince1970: note.created), modified: Date(timeIntervalSince1970: note.modified),
                isPinned: note.pinned, attachmentCount: attachmentCounts[note.id] ?? 0,
                lock: note.passphraseID.flatMap { locks[$0] },
                sharing: participants[note.id].map { ShareInfo(owner: ownerNames[note.accountID] ?? "", participants: $0) },
                revision: note.revision, deleted: note.deleted.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// One note's summary.
    func summary(_ note: StoredNote, _ connection: PostgresConnection) async throws -> NoteSummary {
        try await summaries([note], connection)[0]
    }

    /// The summaries of the notes `query` selects (``StoredNote/summaryColumns``), in its order.
    func summaries(selecting query: PostgresQuery, _ connection: PostgresConnection) async throws -> [NoteSummary] {
        var notes: [StoredNote] = []
        for try await row in try await connection.query(query, logger: logger) {
            notes.append(try StoredNote(row, full: false))
        }
        return try await summaries(notes, connection)
    }

    // MARK: Live updates

    /// Announces a change of note `id` to its owner and participants (and `extra`), in the
    /// transaction: PostgreSQL delivers it to every instance when, and only if, it commits.
    func announce(_ kind: NoteChange.Kind, note id: String, alsoTo extra: [AccountID] = [], _ connection: PostgresConnection) async throws {
        let (accounts, revision) = try await audience(of: id, connection)
        try await notify(.note(NoteChange(kind: kind, noteID: id, revision: revision, accounts: accounts.union(extra))), connection)
    }

    /// Who may see note `id` (owner and participants), and its revision.
    func audience(of id: String, _ connection: PostgresConnection) async throws -> (Set<AccountID>, Int64?) {
        guard
            let (owner, revision) = try await connection.row(
                "SELECT account_id, revision FROM notes WHERE id = \(id)", logger, as: (String, Int64).self)
        else { return ([], nil) }
        let participants = try await connection.column("SELECT account_id FROM participants WHERE note_id = \(id)", logger, as: String.self)
        return (Set(([owner] + participants).map(AccountID.init(rawValue:))), revision)
    }

    /// `NOTIFY` on the events channel, delivered at commit (``PostgresEventBus``), naming the
    /// sync device whose request this is (``WebEventOrigin/device``), if any.
    func notify(_ event: WebEvent, _ connection: PostgresConnection) async throws {
        var announced = EventPayload(event)
        announced.device = announced.device ?? WebEventOrigin.device
        let payload = String(decoding: try JSONEncoder().encode(announced), as: UTF8.self)
        try await connection.run("SELECT pg_notify(\(PostgresEventBus.channel), \(payload))", logger)
    }
}

/// An account's passphrase state as its row holds it.
struct AccountState: Sendable {
    var currentPassphraseID: Int64?
    var failedEntries: Int
    var lastFailure: Date?
}

/// A row of `notes`.
struct StoredNote: Sendable {
    var id: String
    var accountID: String
    var folderID: String?
    var created: Double
    var modified: Double
    var pinned: Bool
    var revision: Int64
    var deleted: Double?
    var sealedTitle: Data
    var passphraseID: Int64?
    // Not read by a summary (a list of thousands must not load bodies):
    var sealedBody: Data?
    var salt: Data?
    var iterations: Int?
    var wrappedKey: Data?
    var iv: Data?
    var tag: Data?
    var sealedCiphertext: Data?
    var bodyFormat: String = "text"
    var noteProofHash: Data?

    var isLocked: Bool { passphraseID != nil }
    var isDeleted: Bool { deleted != nil }

    /// The columns a summary reads.
    static let summaryColumns = "id, account_id, folder_id, created, modified, pinned, revision, deleted, sealed_title, passphrase_id"

    init(_ row: PostgresRow, full: Bool) throws {
        let row = row.makeRandomAccess()
        id = try row["id"].decode(String.self)
        accountID = try row["account_id"].decode(String.self)
        folderID = try row["folder_id"].decode(String?.self)
        created = try row["created"].decode(Double.self)
        modified = try row["modified"].decode(Double.self)
        pinned = try row["pinned"].decode(Bool.self)
        revision = try row["revision"].decode(Int64.self)
        deleted = try row["deleted"].decode(Double?.self)
        sealedTitle = try row["sealed_title"].decode(Data.self)
        passphraseID = try row["passphrase_id"].decode(Int64?.self)
        guard full else { return }
        sealedBody = try row["sealed_body"].decode(Data?.self)
        salt = try row["crypto_salt"].decode(Data?.self)
        iterations = try row["crypto_iterations"].decode(Int?.self)
        wrappedKey = try row["crypto_wrapped_key"].decode(Data?.self)
        iv = try row["crypto_iv"].decode(Data?.self)
        tag = try row["crypto_tag"].decode(Data?.self)
        sealedCiphertext = try row["sealed_ciphertext"].decode(Data?.self)
        bodyFormat = try row["body_format"].decode(String.self)
        noteProofHash = try row["note_proof_hash"].decode(Data?.self)
    }
}
