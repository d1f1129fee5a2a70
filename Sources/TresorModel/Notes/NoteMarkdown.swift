import FoundationEssentials

/// Note bodies are **Tresor Markdown** (docs/FORMAT.md, "Note bodies"): a small, strict subset
/// of CommonMark with GitHub's task lists and strikethrough, one block per line — what the web
/// editor shows formatted (`js/markdown.js` reads and writes the same text), what `tresor note
/// show` renders on a terminal, and what `--markdown` prints as it is.
///
/// ```
/// # Title            ## Heading           ### Subheading
/// * bulleted         - dashed             1. numbered         - [ ] to do   - [x] done
/// **bold** *italic* <u>underline</u> ~~strikethrough~~ `code` [text](https://…)
/// ```                (a fence: the lines between are monospace, verbatim)
/// ```
/// List items are indented two spaces a level (up to 5); `\` escapes a markup character.
public enum NoteMarkdown {
    /// What a line is.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case title, heading, subheading, body, bullet, dash, number, check, code

        public var isList: Bool { self == .bullet || self == .dash || self == .number || self == .check }
    }

    /// A stretch of text with one style.
    public struct Run: Equatable, Sendable {
        public var text: String
        public var bold = false, italic = false, underline = false, strike = false, code = false
        /// Only `http(s):` and `mailto:` links are kept.
        public var link: String?

        public init(
            _ text: String, bold: Bool = false, italic: Bool = false, underline: Bool = false, strike: Bool = false,
            code: Bool = false, link: String? = nil
        ) {
            self.text = text
            self.bold = bold
            self.italic = italic
            self.underline = underline
            self.strike = strike
            self.code = code
            self.link = link
        }

        func sameStyle(as other: Run) -> Bool {
            bold == other.bold && italic == other.italic && underline == other.underline && strike == other.strike
                && code == other.code && link == other.link
        }
    }

    /// One line.
    public struct Block: Equatable, Sendable {
        public var kind: Kind
        /// List indentation, 0–5.
        public var level: Int
        /// A checklist item's tick.
        public var isChecked: Bool
        public var runs: [Run]

        public init(_ kind: Kind, _ runs: [Run], level: Int = 0, isChecked: Bool = false) {
            self.kind = kind
            self.runs = runs
            self.level = level
            self.isChecked = isChecked
        }

        /// The line's text without markup.
        public var text: String { runs.map(\.text).joined() }
    }

    static let maximumLevel = 5
    /// Read after a backslash as the character itself.
    static let escapable: Set<Character> = ["\\", "*", "_", "~", "`", "[", "]", "<", ">", "#", "(", ")", "-", "+", ".", "!"]
    /// Escaped by the writer anywhere in a line.
    static let escapedAnywhere: Set<Character> = ["\\", "*", "_", "~", "`", "[", "]", "<"]

    // MARK: Reading

    /// The blocks of a body.
    /// - Parameter text: the Markdown.
    /// - Returns: one block per line (lines inside a fence are `code`).
    public static func parse(_ text: String) -> [Block] {
        let blocks = Array(BlockReader(text))
        return blocks.isEmpty ? [Block(.body, [])] : blocks
    }

    /// The blocks of a body read one line at a time, as they are asked for: a reader that needs
    /// the first lines alone (the note list's preview) does not parse the rest.
    public struct BlockReader: Sequence, IteratorProtocol {
        private var rest: Substring?
        private var inFence = false

        /// - Parameter text: the Markdown.
        public init(_ text: String) { rest = text[...] }

        /// The next line's block (lines inside a fence are `code`; fence lines are none).
        /// - Returns: the block, or nil after the last line.
        public mutating func next() -> Block? {
            while let remaining = rest {
                let line: Substring
                if let newline = remaining.firstIndex(of: "\n") {
                    line = remaining[..<newline]
                    rest = remaining[remaining.index(after: newline)...]
                } else {
                    line = remaining
                    rest = nil
                }
                if line.hasPrefix("```") {
                    inFence.toggle()
                    continue
                }
                if inFence { return Block(.code, line.isEmpty ? [] : [Run(String(line))]) }
                return parseLine(String(line))
            }
            return nil
        }
    }

    static func parseLine(_ line: String) -> Block {
        for (prefix, kind) in [("### ", Kind.subheading), ("## ", .heading), ("# ", .title)] where line.hasPrefix(prefix) {
            return Block(kind, parseInline(String(line.dropFirst(prefix.count))))
        }
        let spaces = line.prefix { $0 == " " }.count
        let rest = line.dropFirst(spaces)
        let level = min(spaces / 2, maximumLevel)
        for (mark, checked) in [("- [ ]", false), ("- [x]", true), ("- [X]", true)] where rest.hasPrefix(mark) {
            let after = rest.dropFirst(mark.count)
            if after.isEmpty { return Block(.check, [], level: level, isChecked: checked) }
            if after.hasPrefix(" ") { return Block(.check, parseInline(String(after.dropFirst())), level: level, isChecked: checked) }
        }
        if rest.hasPrefix("- ") { return Block(.dash, parseInline(String(rest.dropFirst(2))), level: level) }
        if rest.hasPrefix("* ") { return Block(.bullet, parseInline(String(rest.dropFirst(2))), level: level) }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        if (1...9).contains(digits.count), rest.dropFirst(digits.count).hasPrefix(". ") {
            return Block(.number, parseInline(String(rest.dropFirst(digits.count + 2))), level: level)
        }
        return Block(.body, parseInline(line))
    }

    /// Inline markup into runs; an unclosed marker ends with its line.
    public static func parseInline(_ text: String) -> [Run] {
        var runs: [Run] = []
        var style = Run("")
        var current = ""
        func flush() {
            if !current.isEmpty { var run = style; run.text = current; runs.append(run) }
            current = ""
        }
        let characters = Array(text)
        var i = 0
        func starts(_ marker: String) -> Bool {
            var at = i
            for character in marker {
                guard at < characters.count, characters[at] == character else { return false }
                at += 1
            }
            return true
        }
        while i < characters.count {
            let ch = characters[i]
            if ch == "\\", i + 1 < characters.count, escapable.contains(characters[i + 1]) {
                current.append(characters[i + 1]); i += 2; continue
            }
            if starts("**") { flush(); style.bold.toggle(); i += 2; continue }
            if starts("~~") { flush(); style.strike.toggle(); i += 2; continue }
            if starts("<u>") { flush(); style.underline = true; i += 3; continue }
            if starts("</u>") { flush(); style.underline = false; i += 4; continue }
            if ch == "*" { flush(); style.italic.toggle(); i += 1; continue }
            if ch == "`", let end = characters[(i + 1)...].firstIndex(of: "`") {
                flush()
                var run = style
                run.text = String(characters[(i + 1)..<end])
                run.code = true
                if !run.text.isEmpty { runs.append(run) }
                i = end + 1
                continue
            }
            if ch == "[", let (label, url, length) = link(characters, at: i), isSafeLink(url) {
                flush()
                var run = style
                run.text = label
                run.link = url
                runs.append(run)
                i += length
                continue
            }
            current.append(ch)
            i += 1
        }
        flush()
        return merged(runs)
    }

    /// `[label](url)` at `start`: the label (escapes read), the url and the length consumed.
    /// A label holds no unescaped `[` (the writer escapes every bracket), so each attempt reads
    /// no further than the next `[` or `(`: a line of a million brackets is read once, not once
    /// per bracket.
    static func link(_ characters: [Character], at start: Int) -> (String, String, Int)? {
        var label = ""
        var i = start + 1
        while i < characters.count, characters[i] != "]" {
            if characters[i] == "[" { return nil }
            if characters[i] == "\\", i + 1 < characters.count { label.append(characters[i + 1]); i += 2; continue }
            label.append(characters[i]); i += 1
        }
        guard i + 1 < characters.count, characters[i + 1] == "(" else { return nil }
        var url = ""
        var j = i + 2
        while j < characters.count, characters[j] != ")" {
            guard !characters[j].isWhitespace, characters[j] != "(" else { return nil }
            url.append(characters[j]); j += 1
        }
        guard j < characters.count else { return nil }
        return (label, url, j + 1 - start)
    }

    /// Links go only to the web and mail: never `javascript:` or `data:`.
    public static func isSafeLink(_ url: String) -> Bool {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("mailto:") else { return false }
        return !url.contains { $0.isWhitespace || $0 == "<" || $0 == ">" || $0 == "\"" }
    }

    static func merged(_ runs: [Run]) -> [Run] {
        var result: [Run] = []
        for run in runs where !run.text.isEmpty {
            // Through the index, not a copy of the last run: a copy would share its text and make
            // every append copy the whole text so far.
            if let last = result.indices.last, result[last].sameStyle(as: run), !run.code {
                result[last].text += run.text
            } else {
                result.append(run)
            }
        }
        return result
    }

    // MARK: Writing

    /// The Markdown of `blocks`: numbered items numbered from 1, code lines fenced.
    /// - Parameter blocks: the lines.
    /// - Returns: the body.
    public static func write(_ blocks: [Block]) -> String {
        var lines: [String] = []
        var numbers: [Int: Int] = [:]
        for (index, block) in blocks.enumerated() {
            let previous = index > 0 ? blocks[index - 1] : nil
            if block.kind == .code {
                if previous?.kind != .code { lines.append("```") }
                lines.append(block.text)
                if index + 1 == blocks.count || blocks[index + 1].kind != .code { lines.append("```") }
                continue
            }
            let level = block.kind.isList ? min(block.level, maximumLevel) : 0
            let indent = String(repeating: "  ", count: level)
            if block.kind == .number {
                numbers[level] = previous.map { $0.kind.isList && ($0.kind == .number || $0.level > level) } == true ? (numbers[level] ?? 0) + 1 : 1
                numbers = numbers.filter { $0.key <= level }
            } else if !block.kind.isList {
                numbers = [:]
            }
            let text = writeInline(block.runs, atLineStart: block.kind == .body)
            switch block.kind {
            case .title: lines.append("# " + text)
            case .heading: lines.append("## " + text)
            case .subheading: lines.append("### " + text)
            case .bullet: lines.append(indent + "* " + text)
            case .dash: lines.append(indent + "- " + text)
            case .number: lines.append(indent + "\(numbers[level] ?? 1). " + text)
            case .check: lines.append(indent + "- [\(block.isChecked ? "x" : " ")] " + text)
            case .body, .code: lines.append(text)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Runs as inline markup; `atLineStart` escapes what would read as a block marker.
    public static func writeInline(_ runs: [Run], atLineStart: Bool = false) -> String {
        var out = ""
        for run in merged(runs) {
            if run.code {
                out += wrap(run, "`" + run.text.replacing("`", with: "'") + "`")
                continue
            }
            var text = ""
            for ch in run.text { text += escapedAnywhere.contains(ch) ? "\\\(ch)" : String(ch) }
            if let link = run.link, isSafeLink(link) { text = "[\(text)](\(link))" }
            out += wrap(run, text)
        }
        guard atLineStart else { return out }
        if out.hasPrefix("#") || out.hasPrefix("- ") || out.hasPrefix("+ ") { return "\\" + out }
        let digits = out.prefix { $0.isASCII && $0.isNumber }
        if !digits.isEmpty, out.dropFirst(digits.count).hasPrefix(". ") { return digits + "\\" + out.dropFirst(digits.count) }
        return out
    }

    static func wrap(_ run: Run, _ text: String) -> String {
        let lead = text.prefix { $0.isWhitespace }
        let trail = text.dropFirst(lead.count).reversed().prefix { $0.isWhitespace }
        let core = text.dropFirst(lead.count).dropLast(trail.count)
        guard !core.isEmpty else { return text }
        var open = "", close = ""
        if run.bold { open += "**"; close = "**" + close }
        if run.italic { open += "*"; close = "*" + close }
        if run.strike { open += "~~"; close = "~~" + close }
        if run.underline { open += "<u>"; close = "</u>" + close }
        return lead + open + core + close + String(trail.reversed())
    }

    // MARK: Showing

    /// A body for a person to read: formatted with terminal escapes (`ansi`), or as plain text
    /// with list marks and ticks — never markup characters.
    /// - Parameters:
    ///   - text: the Markdown.
    ///   - ansi: whether to use ANSI styles (bold, italic, underline, strikethrough, dim).
    /// - Returns: the text to print.
    public static func rendered(_ text: String, ansi: Bool) -> String {
        var numbers: [Int: Int] = [:]
        var previous: Block?
        return parse(text).map { block -> String in
            defer { previous = block }
            let indent = String(repeating: "  ", count: block.kind.isList ? block.level : 0)
            let inline = block.runs.map { styled($0, ansi: ansi) }.joined()
            switch block.kind {
            case .title: return ansi ? "\u{1B}[1;4m\(block.text)\u{1B}[0m" : block.text
            case .heading: return ansi ? "\u{1B}[1m\(block.text)\u{1B}[0m" : block.text
            case .subheading: return ansi ? "\u{1B}[1;2m\(block.text)\u{1B}[0m" : block.text
            case .bullet: return indent + "• " + inline
            case .dash: return indent + "– " + inline
            case .number:
                numbers[block.level] =
                    (previous?.kind == .number || (previous?.kind.isList == true && previous!.level > block.level))
                    ? (numbers[block.level] ?? 0) + 1 : 1
                return indent + "\(numbers[block.level]!). " + inline
            case .check: return indent + (block.isChecked ? "☑ " : "☐ ") + (ansi && block.isChecked ? "\u{1B}[2m\(inline)\u{1B}[0m" : inline)
            case .code: return ansi ? "\u{1B}[2m│\u{1B}[0m \(block.text)" : "    " + block.text
            case .body: return inline
            }
        }.joined(separator: "\n")
    }

    static func styled(_ run: Run, ansi: Bool) -> String {
        var text = run.text
        if let link = run.link, link != run.text { text += " <\(link)>" }
        guard ansi else { return text }
        var codes: [String] = []
        if run.bold { codes.append("1") }
        if run.italic { codes.append("3") }
        if run.underline || run.link != nil { codes.append("4") }
        if run.strike { codes.append("9") }
        if run.code { codes.append("2") }
        return codes.isEmpty ? text : "\u{1B}[\(codes.joined(separator: ";"))m\(text)\u{1B}[0m"
    }
}
