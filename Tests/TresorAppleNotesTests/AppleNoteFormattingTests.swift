import Foundation
import NoteStoreFixture
import Testing
import TresorAppleNotes

/// Apple Notes' attribute runs become Tresor Markdown (docs/FORMAT.md): paragraph styles,
/// checklist done-state, font hints, underline, strikethrough and links are kept.
@Suite struct AppleNoteFormattingTests {
    static func run(
        _ length: Int, style: Int? = nil, done: Int? = nil, indent: Int? = nil, weight: Int? = nil, fontHints: Int? = nil,
        underlined: Bool = false, strike: Bool = false, link: String? = nil
    ) -> [UInt8] {
        var run = Protobuf.field(1, varint: UInt64(length))
        if style != nil || done != nil || indent != nil {
            var paragraph = Protobuf.field(1, varint: UInt64(style ?? 3))
            if let indent { paragraph += Protobuf.field(4, varint: UInt64(indent)) }
            if let done { paragraph += Protobuf.field(5, Protobuf.field(1, Array("uuid".utf8)) + Protobuf.field(2, varint: UInt64(done))) }
            run += Protobuf.field(2, paragraph)
        }
        if let fontHints { run += Protobuf.field(3, Protobuf.field(1, Array("Helvetica".utf8)) + Protobuf.field(3, varint: UInt64(fontHints))) }
        if let weight { run += Protobuf.field(5, varint: UInt64(weight)) }
        if underlined { run += Protobuf.field(6, varint: 1) }
        if strike { run += Protobuf.field(7, varint: 1) }
        if let link { run += Protobuf.field(9, Array(link.utf8)) }
        return Protobuf.field(5, run)
    }

    static func body(_ text: String, _ runs: [[UInt8]]) throws -> Data {
        let note = Protobuf.field(2, Array(text.utf8)) + runs.joined()
        return try Gzip.compress(Protobuf.field(2, Protobuf.field(2, varint: 0) + Protobuf.field(3, note)))
    }

    @Test func paragraphStylesChecklistsAndFontHintsBecomeMarkdown() throws {
        let text = "Trip\ntickets\npack\nsocks\nbold and link under gone\ncode *x*\n• \u{FFFC}"
        let data = try Self.body(
            text,
            [
                Self.run(5, style: 0),
                Self.run(8, style: 103, done: 1),
                Self.run(5, style: 103, done: 0),
                Self.run(6, style: 101, indent: 1),
                Self.run(4, weight: 1), Self.run(5), Self.run(4, link: "https://example.org"), Self.run(1),
                Self.run(5, fontHints: 2, underlined: true), Self.run(5, strike: true),
                Self.run(9, style: 4),
                Self.run(3, style: 100),
            ])
        #expect(
            try AppleNoteBody.markdown(fromGzippedProtobuf: data) == """
                # Trip
                - [x] tickets
                - [ ] pack
                  - socks
                **bold** and [link](https://example.org) *<u>under</u>* ~~gone~~
                ```
                code *x*
                ```
                * • \u{FFFC}
                """)
        // The plain text is still there for titles and search.
        #expect(try AppleNoteBody.text(fromGzippedProtobuf: data) == text)
    }

    @Test func aBodyWithoutRunsIsItsTextAndMarkupCharactersStayText() throws {
        let data = try Gzip.noteBody("2 * 3 = 6\n# not a heading")
        #expect(try AppleNoteBody.markdown(fromGzippedProtobuf: data) == "2 \\* 3 = 6\n\\# not a heading")
    }

    /// A body of 4 million characters under a few runs is formatted run by run, not character
    /// by character: within the minute this test is given, where a run per character took the
    /// reader hours and gigabytes on a 40 MiB note.
    @Test(.timeLimit(.minutes(1))) func aLongBodyIsFormattedRunByRun() throws {
        let plain = String(repeating: "x", count: 2_000_000)
        let bold = String(repeating: "y", count: 2_000_000)
        let data = try Self.body(plain + bold, [Self.run(2_000_000), Self.run(2_000_000, weight: 1)])
        #expect(try AppleNoteBody.markdown(fromGzippedProtobuf: data) == plain + "**" + bold + "**")
    }

    @Test func runsThatLieAboutTheirLengthFormatNothingBeyondTheText() throws {
        let data = try Self.body("short", [Self.run(1_000_000, style: 0), Self.run(-1 & 0xFFFF, weight: 1)])
        #expect(try AppleNoteBody.markdown(fromGzippedProtobuf: data) == "# short")
    }
}
