import Testing
import TresorModel

/// RFC 3986 percent-encoding of attachment names (headers) and ids (path segments).
@Suite("Percent-encoding")
struct PercentEncodingTests {
    @Test func onlyUnreservedCharactersStayAsTheyAre() {
        #expect(PercentEncoding.encode("AZaz09-._~") == "AZaz09-._~")
        #expect(PercentEncoding.encode("Résumé 2026.pdf") == "R%C3%A9sum%C3%A9%202026.pdf")
        // A slash would split a path segment; CR/LF would end a header.
        #expect(PercentEncoding.encode("a/b\r\nc%") == "a%2Fb%0D%0Ac%25")
        #expect(PercentEncoding.encode("") == "")
    }

    @Test func decodingGivesBackWhatWasEncoded() {
        for text in ["plain", "Résumé 2026.pdf", "🔐 keys/2026", "100% sure", "a+b=c&d", "line\nbreak", ""] {
            #expect(PercentEncoding.decode(PercentEncoding.encode(text)) == text)
        }
        #expect(PercentEncoding.decode("%c3%a9") == "é", "lower-case hex digits are accepted")
    }

    @Test func malformedInputIsRefused() {
        for bad in ["%", "%4", "%G1", "abc%2", "%FF", "%C3"] {  // cut short, not hex, not UTF-8
            #expect(PercentEncoding.decode(bad) == nil, "\(bad)")
        }
    }

    /// SQLite reads `?` and `#` in a URI's path as its end, and decodes `%XX`: a note store or a
    /// keychain in a folder named so still opens, read-only and immutable.
    @Test func anImmutableSQLiteURIKeepsItsSlashesAndEncodesTheRest() {
        #expect(
            PercentEncoding.immutableSQLiteURI(path: "/home/ada/My Notes?#/NoteStore.sqlite")
                == "file:/home/ada/My%20Notes%3F%23/NoteStore.sqlite?mode=ro&immutable=1")
    }
}
