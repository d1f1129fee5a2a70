import ArgumentParser
import FoundationEssentials

/// A note as text — what `$EDITOR` shows and what `tresor note new` and `note edit` read from
/// standard input: the first line is the title, the rest is the body. One empty line right
/// after the title separates them, as in a commit message, and is not part of the body.
struct EditableNote: Equatable {
    var title: String
    var body: String

    init(title: String, body: String) {
        self.title = title
        self.body = body
    }

    /// Splits `text` into title and body.
    /// - Parameter text: e.g. `"Wi-Fi\n\nNetwork: home\nKey: …\n"`.
    init(parsing text: String) {
        let newline = text.firstIndex(of: "\n")
        var title = newline.map { String(text[..<$0]) } ?? text
        if title.hasSuffix("\r") { title.removeLast() }
        var body = newline.map { String(text[text.index(after: $0)...]) } ?? ""
        if body.hasPrefix("\n") { body.removeFirst() } else if body.hasPrefix("\r\n") { body.removeFirst(1) }
        self.title = title.trimmingWhitespace()
        self.body = body
    }

    /// Whether it holds nothing but white space.
    var isEmpty: Bool { title.isEmpty && body.trimmingWhitespace().isEmpty }

    /// As `$EDITOR` shows it: the title, an empty line, the body, ending with a newline.
    var text: String { title + "\n\n" + body + (body.hasSuffix("\n") || body.isEmpty ? "" : "\n") }
}

/// The text on standard input, all of it, as UTF-8 (after any lines taken before it).
/// - Returns: the text.
/// - Throws: `ValidationError` when it is not UTF-8.
func readBodyFromStandardInput() throws -> String {
    let data = try StandardInput.shared.rest()
    guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("the note on standard input is not UTF-8") }
    return text
}
