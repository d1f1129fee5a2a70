import Foundation

/// One recipient stanza of an age header: `-> type arg…` then a Base64 body wrapped at 64
/// columns (the last line shorter, possibly empty).
struct AgeStanza: Equatable {
    /// The type and its arguments (`["scrypt", salt, workFactor]`).
    var arguments: [String]
    var body: Data

    static let columns = 64

    /// The stanza as the header writes it, newline-terminated.
    var encoded: String {
        var lines = ["-> " + arguments.joined(separator: " ")]
        let text = AgeBase64.encode(body)
        var start = text.startIndex
        while true {
            let end = text.index(start, offsetBy: Self.columns, limitedBy: text.endIndex) ?? text.endIndex
            lines.append(String(text[start..<end]))
            // A full last line is followed by an empty one: that is how a reader knows the body ended.
            if text.distance(from: start, to: end) < Self.columns { break }
            start = end
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether `argument` is a valid stanza argument: one or more visible ASCII characters.
    static func isValidArgument(_ argument: Substring) -> Bool {
        !argument.isEmpty && argument.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
