import Foundation

/// How a note search matches and ranks, the same in every store (``WebStore/search(_:account:)``):
/// words are runs of letters and digits, lowercased, their diacritics removed — as SQLite's FTS5
/// `unicode61 remove_diacritics 2` cuts and folds them, so the embedded store's index finds what
/// a server's scan finds. A note matches when every word of the search begins a word of its
/// title or (unlocked) body; notes with more of the words in their title come first, then the
/// most recently modified, then by id.
public enum SearchWords {
    /// The words of `text`.
    /// - Parameter text: a title, a body, or what was typed.
    /// - Returns: its words, lowercased, without diacritics, in order.
    public static func words(of text: String) -> [String] {
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

    /// Where in `text` the first word begins that a word of `query` begins (what a search's
    /// preview shows).
    /// - Parameters:
    ///   - query: the search's words (``query(_:)``).
    ///   - text: a line of a note, as written.
    /// - Returns: the index in `text`, or nil when no word matches.
    public static func firstMatch(of query: [String], in text: String) -> String.Index? {
        var start = text.startIndex
        var word = ""
        for index in text.indices {
            // Folded one character at a time, so the match is found at its place in `text`.
            let folded = words(of: String(text[index])).joined()
            if folded.isEmpty {
                if query.contains(where: word.hasPrefix), !word.isEmpty { return start }
                word = ""
            } else {
                if word.isEmpty { start = index }
                word += folded
            }
        }
        return query.contains(where: word.hasPrefix) && !word.isEmpty ? start : nil
    }

    /// The words of a search text, refusing one without any.
    /// - Parameter text: what was typed.
    /// - Returns: its words.
    /// - Throws: ``NotesError/invalid(_:)`` for an empty or too long text, or one without a word.
    public static func query(_ text: String) throws -> [String] {
        try NoteRules.validate(text, limit: NoteRules.searchTextBytes, what: "search text", allowEmpty: false)
        let words = words(of: text)
        guard !words.isEmpty else { throw NotesError.invalid("the search text has no word to look for") }
        return words
    }

    /// How many words of `query` begin a word of `title`: what ranks a match.
    /// - Parameters:
    ///   - query: the search's words.
    ///   - title: the title's words.
    /// - Returns: the count.
    public static func titleMatches(of query: [String], title: [String]) -> Int {
        query.filter { word in title.contains { $0.hasPrefix(word) } }.count
    }

    /// Nil unless every word of `query` begins a word of the title or the body; otherwise
    /// ``titleMatches(of:title:)``.
    /// - Parameters:
    ///   - query: the search's words.
    ///   - title: the title's words.
    ///   - body: the body's words (none for a locked note).
    /// - Returns: the rank, or nil for no match.
    public static func score(of query: [String], title: [String], body: [String]) -> Int? {
        for word in query where !title.contains(where: { $0.hasPrefix(word) }) && !body.contains(where: { $0.hasPrefix(word) }) {
            return nil
        }
        return titleMatches(of: query, title: title)
    }

    /// Matches in search order: more title matches first, then the most recently modified,
    /// then by id.
    /// - Parameter matches: (note id, title matches, modified).
    /// - Returns: the note ids, best first.
    public static func ranked(_ matches: [(id: String, titleMatches: Int, modified: Date)]) -> [String] {
        matches.sorted { ($0.titleMatches, $0.modified, $1.id) > ($1.titleMatches, $1.modified, $0.id) }.map(\.id)
    }
}
