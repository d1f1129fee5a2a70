import Foundation
import GRDB
import TresorNotesDomain

/// Reads the summaries of many notes inside one read: each folder's name, each passphrase's
/// lock and each owner's name are read once however many notes share them, and attachment
/// counts and participants come in one query per batch of notes.
///
/// Asking each note for its folder, attachments, passphrase, account and participants in turn
/// made a query per note and field (BENCHMARKS.md, "Measured design choices"); the title is the one
/// thing opened per note.
struct NoteSummaryReader {
    private let store: NotesStore
    private let db: Database
    private let sealing: ContentSealing
    private var folderNames: [String: String] = [:]
    private var locks: [Int64: LockInfo] = [:]
    private var ownerNames: [String: String] = [:]

    /// Notes per attachment-count and participants query (SQLite bounds a statement's arguments).
    static let batchSize = 500

    init(_ store: NotesStore, _ db: Database, _ sealing: ContentSealing) {
        self.store = store
        self.db = db
        self.sealing = sealing
    }

    /// The summaries of `rows`, in their order.
    mutating func summaries(of rows: [NoteRow]) throws -> [NoteSummary] {
        var summaries: [NoteSummary] = []
        summaries.reserveCapacity(rows.count)
        var start = rows.startIndex
        while start < rows.endIndex {
            let batch = rows[start..<min(start + Self.batchSize, rows.endIndex)]
            let ids = batch.map(\.id)
            let attachmentCounts = try attachmentCounts(of: ids)
            let participants = try participants(of: ids)
            // A synced note shared with or by the sync account: who shares it, as the server told.
            let synced = try SharingSyncTables.sharing(of: ids, db, sealing)
            for row in batch {
                summaries.append(
                    NoteSummary(
                        id: row.id, title: try store.title(of: row, sealing), folder: try folderName(row.folderID),
                        created: row.created, modified: row.modified, isPinned: row.isPinned,
                        attachmentCount: attachmentCounts[row.id] ?? 0,
                        lock: try row.passphraseID.map { try lock($0) },
                        sharing: try participants[row.id].map { ShareInfo(owner: try ownerName(row.accountID), participants: $0) }
                            ?? synced[row.id].map { ShareInfo(owner: $0.owner, participants: $0.participants) },
                        revision: row.revision, deleted: row.deleted))
            }
            start = batch.endIndex
        }
        return summaries
    }

    /// The summary of one note.
    mutating func summary(of row: NoteRow) throws -> NoteSummary {
        try summaries(of: [row])[0]
    }

    private mutating func folderName(_ id: String?) throws -> String? {
        guard let id else { return nil }
        if let known = folderNames[id] { return known }
        guard let sealed = try Data.fetchOne(db, sql: "SELECT sealed_name FROM folders WHERE id = ?", arguments: [id]) else { return nil }
        let name = try sealing.openText(sealed, table: "folders", id: id, column: "name")
        folderNames[id] = name
        return name
    }

    private mutating func lock(_ passphraseID: Int64) throws -> LockInfo {
        if let known = locks[passphraseID] { return known }
        let lock = try store.lockInfo(PassphraseRow.fetch(passphraseID, db), db, sealing)
        locks[passphraseID] = lock
        return lock
    }

    private mutating func ownerName(_ accountID: String) throws -> String {
        if let known = ownerNames[accountID] { return known }
        let name =
            try String.fetchOne(db, sql: "SELECT login_name FROM accounts WHERE id = ?", arguments: [accountID])
            ?? NoteRules.localLoginName
        ownerNames[accountID] = name
        return name
    }

    private func attachmentCounts(of ids: [String]) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT note_id, COUNT(*) FROM attachments WHERE note_id IN (\(databaseQuestionMarks(count: ids.count))) GROUP BY note_id
                """, arguments: StatementArguments(ids))
        while let row = try rows.next() { counts[row[0]] = row[1] }
        return counts
    }

    /// Each shared note's participants' names, in the order they were added.
    private func participants(of ids: [String]) throws -> [String: [String]] {
        var names: [String: [String]] = [:]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT p.note_id, COALESCE(a.login_name, ?) FROM participants p JOIN accounts a ON a.id = p.account_id
                WHERE p.note_id IN (\(databaseQuestionMarks(count: ids.count))) ORDER BY p.note_id, p.added, a.login_name
                """, arguments: StatementArguments([NoteRules.localLoginName] + ids))
        while let row = try rows.next() { names[row[0], default: []].append(row[1]) }
        return names
    }
}

extension NoteRow {
    /// The columns a summary reads: all but the body and a locked note's ciphertext, which a
    /// list of thousands of notes must not load. Read them with ``init(summaryRow:)``.
    static let summaryColumns = """
        id, account_id, folder_id, created, modified, pinned, sealed_title, passphrase_id, body_format, sealed_record_key,
        revision, deleted
        """

    /// A row selected with ``summaryColumns``, read by position (looking ten columns up by name
    /// in each of 10,000 rows was a fifth of a list's time). It has no body.
    init(summaryRow row: Row) {
        id = row[0]
        accountID = row[1]
        folderID = row[2]
        created = Date(timeIntervalSince1970: row[3])
        modified = Date(timeIntervalSince1970: row[4])
        isPinned = row[5]
        sealedTitle = row[6]
        passphraseID = row[7]
        bodyFormat = BodyFormat(rawValue: row[8]) ?? .text
        sealedRecordKey = row[9]
        revision = row[10]
        deleted = (row[11] as Double?).map(Date.init(timeIntervalSince1970:))
    }
}
