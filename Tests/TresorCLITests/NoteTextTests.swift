import FoundationEssentials
import Testing
import TresorModel

@testable import tresor

/// `tresor note list` as text: what a person reads of a title too long for its column.
@Suite struct NoteTextTests {
    /// A long title loses its end; a conflict copy's loses its middle instead, so whose version
    /// it is — the one word that tells two versions apart — stays in the list.
    @Test func aConflictCopyKeepsWhoseVersionItIs() {
        #expect(NoteText.shortened("Shopping list for the weekend in the mountains", to: 20) == "Shopping list for t…")
        let copy = "Shopping list for the weekend (conflict copy from laptop)"
        let shown = NoteText.shortened(copy, to: 40)
        #expect(shown == "Shopping li… (conflict copy from laptop)" && shown.count == 40, "\(shown)")
        #expect(NoteText.shortened("Short (conflict copy from laptop)", to: 40) == "Short (conflict copy from laptop)")
        // An end too long to keep with enough of the title before it: cut as any title.
        let long = "Trip (conflict copy from a device with a very long name indeed)"
        #expect(NoteText.shortened(long, to: 40) == String(long.prefix(39)) + "…")
        #expect(NoteText.shortened("First line\nsecond (conflict copy from laptop)", to: 40) == "First line")
    }
}
