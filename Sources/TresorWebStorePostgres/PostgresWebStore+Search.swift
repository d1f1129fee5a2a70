import Foundation
import PostgresNIO
import TresorWebStore

// Search (docs/WEB.md): titles and bodies are sealed, so the database cannot index them. A
// search opens the asking account's own notes one row at a time as PostgreSQL streams them and
// matches in Swift — no index of words is kept anywhere, in the database or in memory, so
// nothing is left to go stale between instances or to leak. The cost grows with the account's
// notes, not the server's.
extension PostgresWebStore {
    func search(_ text: String, account: AccountID) async throws -> [NoteSummary] {
        try NoteRules.validate(text, limit: NoteRules.searchTextBytes, what: "search text", allowEmpty: false)
        let words = SearchWords.words(of: text)
        guard !words.isEmpty else { throw NotesError.invalid("the search text is empty") }
        return try await db.read { [self, logger] connection in
            var found: [(id: String, score: Int, modified: Double)] = []
            for try await row in try await connection.query(
                """
                SELECT id, sealed_title, sealed_body, passphrase_id, modified FROM notes
                WHERE account_id = \(account.rawValue) AND deleted IS NULL
                """, logger: logger)
            {
                let (id, sealedTitle, sealedBody, passphraseID, modified) = try row.decode((String, Data, Data?, Int64?, Double).self)
                let title = SearchWords.words(of: try sealing.openText(sealedTitle, "notes", id, "title"))
                // A locked note is found by its title only: its body is the browser's to read.
                let body = passphraseID == nil ? SearchWords.words(of: try sealing.openText(sealedBody ?? Data(), "notes", id, "body")) : []
                if let score = SearchWords.score(of: words, title: title, body: body) { found.append((id, score, modified)) }
            }
            // Best first: more of the words in the title, then the most recently modified.
            let ids = found.sorted { ($0.score, $0.modified, $1.id) > ($1.score, $1.modified, $0.id) }.map(\.id)
            guard !ids.isEmpty else { return [] }
            let summaries = try await summaries(selecting: "SELECT \(unescaped: StoredNote.summaryColumns) FROM notes WHERE id = ANY(\(ids))", connection)
            let byID = Dictionary(uniqueKeysWithValues: summaries.map { ($0.id, $0) })
            return ids.compactMap { byID[$0] }
        }
    }
}

/// Words as search compares them, the way the embedded store's full-text index (SQLite FTS5,
/// `unicode61 remove_diacritics 2`) cuts and folds them: runs of letters and digits, lowercased,
/// their diacritics removed.
enum SearchWords {
    static func words(of text: String) -> [String] {
        let folded = text.decomposedStringWithCanonicalMapping.lowercased()
        var words: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in folded.unicodeScalars {
            let properties = scalar.properties
            if properties.generalCategory == .nonspacingMark || properties.generalCategory == .enclosingMark { continue }
            if properties.isAlphabetic || properties.numericType != nil {
                current.append(scalar)
            } else if !current.isEmpty {
                words.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { words.append(String(current)) }
        return words
    }

    /// Nil unless every word of `query` begins a word of the title or the body; otherwise how
    /// many begin a word of the title.
    static func score(of query: [String], title: [String], body: [String]) -> Int? {
        var score = 0
        for word in query {
            if title.contains(where: { $0.hasPrefix(word) }) {
                score += 1
            } else if !body.contains(where: { $0.hasPrefix(word) }) {
                return nil
            }
        }
        return score
    }
}
