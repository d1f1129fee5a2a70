import Foundation
import TresorModel

/// Apple Notes' formatting, from the attribute runs of a note body (field 5 of the note
/// message, repeated), into Tresor Markdown (``NoteMarkdown``). Hostile input: every length
/// and nesting is bounded, and a run that cannot be read is ignored (its text stays, plain).
///
/// An attachment's place (U+FFFC) stays in the text, as the plain import kept it.
///
/// An attribute run: `length` (1, UTF-16 units of the note text), `paragraph_style` (2:
/// `style_type` 1 — 0 title, 1 heading, 2 subheading, 4 monospaced, 100 bulleted, 101 dashed,
/// 102 numbered, 103 checklist —, `indent_amount` 4, `checklist` 5 with `done` 2), `font` (3:
/// `font_hints` 3 — 1 bold, 2 italic, 3 both), `font_weight` (5, the same values), `underlined`
/// (6), `strikethrough` (7), `link` (9).
enum AppleNoteFormatting {
    struct Attributes: Equatable {
        var paragraph = NoteMarkdown.Kind.body
        var indent = 0
        var isDone = false
        var bold = false, italic = false, underline = false, strike = false
        var link: String?
    }

    /// The Markdown of `text` formatted by the runs in `unknownFields` (the note message's
    /// fields other than its text).
    static func markdown(text: String, unknownFields: Data, limits: AppleNotesLimits) -> String {
        let runs = attributeRuns(unknownFields, limits: limits)
        var blocks: [NoteMarkdown.Block] = []
        var paragraph: [NoteMarkdown.Run] = []
        var paragraphStyle: Attributes?
        // The attributes of the paragraph's last run (read only while the paragraph has one).
        var runStyle: Attributes?
        var runIndex = 0, runEnd = runs.first?.length ?? Int.max, offset = 0
        func attributes(at offset: Int) -> Attributes {
            while runIndex < runs.count, offset >= runEnd {
                runIndex += 1
                let (sum, overflow) = runEnd.addingReportingOverflow(runIndex < runs.count ? runs[runIndex].length : Int.max)
                runEnd = overflow ? Int.max : sum
            }
            return runIndex < runs.count ? runs[runIndex].attributes : Attributes()
        }
        func endParagraph(_ style: Attributes) {
            let kind = paragraphStyle?.paragraph ?? style.paragraph
            let source = paragraphStyle ?? style
            blocks.append(NoteMarkdown.Block(kind, paragraph, level: min(source.indent, 5), isChecked: source.isDone))
            paragraph = []
            paragraphStyle = nil
        }
        for character in text {
            let style = attributes(at: offset)
            offset += character.utf16.count
            if character == "\n" {
                endParagraph(style)
                continue
            }
            if paragraphStyle == nil { paragraphStyle = style }
            // A character styled as the one before extends its run: a run per character would
            // cost a note of millions of characters millions of runs.
            if let last = paragraph.indices.last, runStyle == style {
                paragraph[last].text.append(character)
                continue
            }
            runStyle = style
            paragraph.append(
                NoteMarkdown.Run(
                    String(character), bold: style.bold, italic: style.italic, underline: style.underline, strike: style.strike,
                    code: false, link: style.link.flatMap { NoteMarkdown.isSafeLink($0) ? $0 : nil }))
        }
        endParagraph(attributes(at: offset))
        // Monospace paragraphs keep their text verbatim (a fence takes no inline markup).
        return NoteMarkdown.write(
            blocks.map { block in
                guard block.kind == .code else { return block }
                return NoteMarkdown.Block(.code, [NoteMarkdown.Run(block.text)])
            })
    }

    /// The attribute runs (field 5) among `fields`, at most one per UTF-16 unit of a note.
    static func attributeRuns(_ fields: Data, limits: AppleNotesLimits) -> [(length: Int, attributes: Attributes)] {
        var runs: [(Int, Attributes)] = []
        var reader = WireReader(fields)
        while let field = reader.next(), runs.count < limits.maxDecompressedBytes {
            guard field.number == 5, case .bytes(let run) = field.value else { continue }
            var length = 0
            var attributes = Attributes()
            var runReader = WireReader(run)
            while let part = runReader.next() {
                switch (part.number, part.value) {
                case (1, .varint(let value)): length = Int(clamping: value)
                case (2, .bytes(let style)): readParagraphStyle(style, into: &attributes)
                case (3, .bytes(let font)): readFont(font, into: &attributes)
                case (5, .varint(let weight)): applyFontHints(weight, to: &attributes)
                case (6, .varint(let value)): attributes.underline = value != 0
                case (7, .varint(let value)): attributes.strike = value != 0
                case (9, .bytes(let link)): attributes.link = String(data: link, encoding: .utf8)
                default: break
                }
            }
            if length > 0 { runs.append((length, attributes)) }
        }
        return runs
    }

    static func readParagraphStyle(_ data: Data, into attributes: inout Attributes) {
        var reader = WireReader(data)
        while let field = reader.next() {
            switch (field.number, field.value) {
            case (1, .varint(let type)):
                attributes.paragraph =
                    switch type {
                    case 0: .title
                    case 1: .heading
                    case 2: .subheading
                    case 4: .code
                    case 100: .bullet
                    case 101: .dash
                    case 102: .number
                    case 103: .check
                    default: .body
                    }
            case (4, .varint(let indent)): attributes.indent = Int(clamping: min(indent, 5))
            case (5, .bytes(let checklist)):
                var checklistReader = WireReader(checklist)
                while let part = checklistReader.next() {
                    if part.number == 2, case .varint(let done) = part.value { attributes.isDone = done != 0 }
                }
            default: break
            }
        }
    }

    static func readFont(_ data: Data, into attributes: inout Attributes) {
        var reader = WireReader(data)
        while let field = reader.next() {
            if field.number == 3, case .varint(let hints) = field.value { applyFontHints(hints, to: &attributes) }
        }
    }

    static func applyFontHints(_ hints: UInt64, to attributes: inout Attributes) {
        if hints & 1 != 0 { attributes.bold = true }
        if hints & 2 != 0 { attributes.italic = true }
    }
}

/// The protobuf wire format, as far as attribute runs need it: varints and length-delimited
/// fields are read, fixed-width ones skipped; anything malformed ends the reading.
struct WireReader {
    enum Value { case varint(UInt64), bytes(Data), skipped }

    private let data: Data
    private var index: Data.Index

    init(_ data: Data) {
        self.data = data
        index = data.startIndex
    }

    mutating func next() -> (number: Int, value: Value)? {
        guard index < data.endIndex, let key = varint() else { return nil }
        let number = Int(key >> 3)
        switch key & 7 {
        case 0:
            guard let value = varint() else { return nil }
            return (number, .varint(value))
        case 2:
            guard let length = varint(), length <= UInt64(data.endIndex - index) else { return nil }
            let end = index + Int(length)
            defer { index = end }
            return (number, .bytes(data[index..<end]))
        case 1:
            guard data.endIndex - index >= 8 else { return nil }
            index += 8
            return (number, .skipped)
        case 5:
            guard data.endIndex - index >= 4 else { return nil }
            index += 4
            return (number, .skipped)
        default:
            return nil  // groups (3, 4) and the rest: not in attribute runs
        }
    }

    private mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < data.endIndex, shift < 64 {
            let byte = data[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
