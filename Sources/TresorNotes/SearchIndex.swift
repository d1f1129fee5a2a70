import Foundation
import GRDB
import Synchronization

/// Full-text search (SQLite FTS5) over note titles and the bodies of unlocked notes.
///
/// The index lives in memory, never in the home: an FTS index on disk would hold note text
/// in the clear, against the rule that all note content at rest is sealed under the keybag
/// (docs/FORMAT.md, "Two layers", "Search"). It is built from the sealed notes on the first
/// search after the daemon starts and kept current by every write. A locked note is indexed by its
/// title only; its body never enters.
final class SearchIndex: Sendable {
    private let queue: DatabaseQueue
    private let isBuilt = Mutex(false)

    init() throws {
        queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE notes_fts USING fts5(
                        note_id UNINDEXED, account_id UNINDEXED, title, body,
                        tokenize = 'unicode61 remove_diacritics 2')
                    """)
        }
    }

    struct Entry {
        var noteID: String
        var accountID: String
        var title: String
        /// Nil for a locked note.
        var body: String?
    }

    /// Forgets what was built: the next search builds the index again (after a restore wrote
    /// notes beside the store).
    func invalidate() {
        isBuilt.withLock { $0 = false }
    }

    /// Builds the index once, from `entries()`, if it has not been built yet.
    func buildIfNeeded(_ entries: () throws -> [Entry]) throws {
        try isBuilt.withLock { isBuilt in
            guard !isBuilt else { return }
            let all = try entries()
            try queue.write { db in
                try db.execute(sql: "DELETE FROM notes_fts")
                for entry in all { try insert(entry, db) }
            }
            isBuilt = true
        }
    }

    /// Adds or replaces a note's entry (only once the index is built; before, the build reads it).
    func upsert(_ entry: Entry) {
        guard isBuilt.withLock({ $0 }) else { return }
        try? queue.write { db in
            try db.execute(sql: "DELETE FROM notes_fts WHERE note_id = ?", arguments: [entry.noteID])
            try insert(entry, db)
        }
    }

    func remove(noteID: String) {
        try? queue.write { db in try db.execute(sql: "DELETE FROM notes_fts WHERE note_id = ?", arguments: [noteID]) }
    }

    /// The ids of `account`'s notes matching every one of `words` (``SearchWords/query(_:)``: letters
    /// and digits only, so each is quoted safely) as a word prefix, in no order: the store ranks them.
    func search(_ words: [String], accountID: String) throws -> [String] {
        let query = words.map { "\"\($0)\"*" }.joined(separator: " ")
        return try queue.read { db in
            try String.fetchAll(db, sql: "SELECT note_id FROM notes_fts WHERE notes_fts MATCH ? AND account_id = ?", arguments: [query, accountID])
        }
    }

    private func insert(_ entry: Entry, _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO notes_fts (note_id, account_id, title, body) VALUES (?, ?, ?, ?)",
            arguments: [entry.noteID, entry.accountID, entry.title, entry.body ?? ""])
    }
}
