import Foundation
import PostgresNIO
import TresorNotesDomain

// Search (docs/WEB.md): titles and bodies are sealed, so the database cannot index them. A
// search opens the asking account's own notes one row at a time as PostgreSQL streams them and
// matches in Swift — no index of words is kept anywhere, in the database or in memory, so
// nothing is left to go stale between instances or to leak. The cost grows with the account's
// notes, not the server's.
extension PostgresWebStore {
    func search(_ text: String, account: AccountID) async throws -> [NoteSummary] {
        let words = try SearchWords.query(text)
        return try await db.read { [self, logger] connection in
            var found: [(id: String, titleMatches: Int, modified: Date)] = []
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
                if let score = SearchWords.score(of: words, title: title, body: body) {
                    found.append((id, score, Date(timeIntervalSince1970: modified)))
                }
            }
            let ids = SearchWords.ranked(found)
            guard !ids.isEmpty else { return [] }
            let summaries = try await summaries(
                selecting: "SELECT \(unescaped: StoredNote.summaryColumns) FROM notes WHERE id = ANY(\(ids))", connection)
            let byID = Dictionary(uniqueKeysWithValues: summaries.map { ($0.id, $0) })
            return ids.compactMap { byID[$0] }
        }
    }
}
