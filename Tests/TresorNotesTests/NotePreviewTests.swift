import Testing
import TresorNotesDomain

/// The list's preview (``NoteRules/preview(body:title:matching:)``): the first line after the
/// title, or for a search the line that matched, shown from a word shortly before the match.
struct NotePreviewTests {
    @Test func outsideASearchTheFirstLineAfterTheTitle() {
        #expect(NoteRules.preview(body: "Plan\n\n**Buy** milk\nthen bread", title: "Plan") == "Buy milk")
        #expect(NoteRules.preview(body: "Plan", title: "Plan") == nil)
    }

    @Test func aSearchShowsTheLineItMatchesOn() throws {
        let body = "Trip\nPack the bags\nRemember the Passport and visa"
        #expect(NoteRules.preview(body: body, title: "Trip", matching: try SearchWords.query("pass")) == "Remember the Passport and visa")
        // A line that fits is shown whole, however far in the match is.
        let whole = "one two three four five six seven eight nine ten eleven twelve pelican end"
        #expect(NoteRules.preview(body: "Birds\n" + whole, title: "Birds", matching: try SearchWords.query("pelican")) == whole)
        // A word matches at its start only, as the search does.
        #expect(NoteRules.preview(body: body, title: "Trip", matching: try SearchWords.query("port")) == "Pack the bags")
    }

    @Test func aLongLineIsShownFromAWordBeforeTheMatch() throws {
        let line = String(repeating: "lorem ipsum ", count: 20) + "Ærøskøbing ferry times"
        let preview = try #require(NoteRules.preview(body: "Notes\n" + line, title: "Notes", matching: try SearchWords.query("ÆRØSK")))
        #expect(preview.hasPrefix("…"), "\(preview)")
        #expect(preview.contains("Ærøskøbing ferry times"), "\(preview)")
        // It begins at a whole word, not inside one.
        #expect(preview.dropFirst().hasPrefix("lorem") || preview.dropFirst().hasPrefix("ipsum"), "\(preview)")
    }
}
