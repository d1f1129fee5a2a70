import Foundation
import Testing

@testable import TresorModel

/// Tresor Markdown (docs/FORMAT.md, "Note bodies"): read into blocks, written back unchanged,
/// shown formatted on a terminal and as plain text elsewhere. The web client's js/markdown.js
/// reads and writes the same text (browser test `test_formatting`).
@Suite("Note Markdown")
struct NoteMarkdownTests {
    static let everything = """
        # Title
        ## Heading
        ### Subheading
        plain **bold** *italic* <u>underline</u> ~~strike~~ `code` [link](https://example.org)
        * bullet
        - dash
        1. one
        2. two
        - [ ] to do
        - [x] done
          - nested
        ```
        mono *not bold*
        ```
        after
        """

    @Test func everyFormatIsReadAndWrittenBackUnchanged() {
        let blocks = NoteMarkdown.parse(Self.everything)
        #expect(blocks.map(\.kind) == [.title, .heading, .subheading, .body, .bullet, .dash, .number, .number, .check, .check, .dash, .code, .body])
        #expect(
            blocks[3].runs == [
                .init("plain "), .init("bold", bold: true), .init(" "), .init("italic", italic: true), .init(" "),
                .init("underline", underline: true), .init(" "), .init("strike", strike: true), .init(" "), .init("code", code: true), .init(" "),
                .init("link", link: "https://example.org"),
            ])
        #expect(blocks[9].isChecked && !blocks[8].isChecked && blocks[10].level == 1)
        #expect(blocks[11].text == "mono *not bold*")
        #expect(NoteMarkdown.write(blocks) == Self.everything)
    }

    /// The list's preview reads a body's first blocks alone (`BlockReader`, which `parse` reads
    /// whole): one block per line as asked for, fence lines none, the lines between them code.
    @Test func blocksAreReadOneLineAtATime() {
        var reader = NoteMarkdown.BlockReader("# Title\n```\n*code*\n```\nfirst\n" + String(repeating: "*x* ", count: 10_000))
        #expect(reader.next() == NoteMarkdown.Block(.title, [.init("Title")]))
        #expect(reader.next() == NoteMarkdown.Block(.code, [.init("*code*")]))
        #expect(reader.next()?.text == "first")
        #expect(reader.next()?.kind == .body)
        #expect(reader.next() == nil)
        #expect(Array(NoteMarkdown.BlockReader("```\n```")).isEmpty)
        #expect(NoteMarkdown.parse("```\n```") == [NoteMarkdown.Block(.body, [])])
    }

    @Test func textThatLooksLikeMarkupStaysText() {
        let typed = NoteMarkdown.Block(.body, [.init("- not a list, # not a heading, *stars*, <b>tags</b>, [x](y)")])
        let written = NoteMarkdown.write([typed])
        #expect(NoteMarkdown.parse(written) == [typed])
        let numbered = NoteMarkdown.Block(.body, [.init("1. not a list")])
        #expect(NoteMarkdown.parse(NoteMarkdown.write([numbered])) == [numbered])
    }

    @Test func onlyWebAndMailLinksAreLinks() {
        #expect(NoteMarkdown.parseInline("[x](javascript:alert(1))").allSatisfy { $0.link == nil })
        #expect(NoteMarkdown.parseInline("[x](mailto:a@b.c)").first?.link == "mailto:a@b.c")
    }

    /// Lines made to be slow, as another account's shared note or a synced one may hold them: a
    /// million brackets, and a million `[a` — each `[` once read to the line's end as a link's
    /// start, hours of work — are read in one pass, within the minute this test is given, as
    /// their text; so are 200,000 runs of one style split by `****`, merged into one.
    @Test(.timeLimit(.minutes(1))) func hostileLinesAreReadInOnePass() {
        let brackets = String(repeating: "[", count: 1_000_000)
        #expect(NoteMarkdown.parseInline(brackets) == [.init(brackets)])
        let unclosed = String(repeating: "[a", count: 1_000_000)
        #expect(NoteMarkdown.parseInline(unclosed) == [.init(unclosed)])
        #expect(NoteMarkdown.parse("Title\n" + unclosed).last?.text == unclosed)
        let split = String(repeating: "a****", count: 200_000)
        #expect(NoteMarkdown.parseInline(split) == [.init(String(repeating: "a", count: 200_000))])
    }

    @Test func aTerminalShowsFormattingAndAPipeShowsPlainText() {
        let body = "# Trip\n- [x] **tickets**\n- [ ] hotel\n1. first\n2. second"
        #expect(NoteMarkdown.rendered(body, ansi: false) == "Trip\n☑ tickets\n☐ hotel\n1. first\n2. second")
        let ansi = NoteMarkdown.rendered(body, ansi: true)
        #expect(ansi.contains("\u{1B}[1;4mTrip") && ansi.contains("\u{1B}[1mtickets"))
    }
}
