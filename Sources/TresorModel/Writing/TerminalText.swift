/// Text that others chose — a client's item label or attributes, a requester's command line, a
/// note's title or body (a shared note, an import, a backup someone handed over) — as it may be
/// shown on the user's terminal or in a dialog.
public enum TerminalText {
    /// `text` with every control and formatting character (escape sequences, line breaks,
    /// direction overrides) as `?`, cut at `limit` characters.
    /// - Parameters:
    ///   - text: what someone else chose.
    ///   - limit: the most characters shown; more end with `…`. Nil: all of them.
    /// - Returns: the text as it may be shown: it draws nothing on the screen.
    public static func printable(_ text: String, limit: Int? = nil) -> String {
        var shown = shown(text, keeping: [])
        if let limit, shown.count > limit { shown = String(shown.prefix(limit)) + "…" }
        return shown
    }

    /// `text` as ``printable(_:limit:)`` shows it, its line breaks and tabs kept: a note's
    /// body, whose lines are its own, with no escape sequence of someone else's.
    /// - Parameter text: what someone else may have written.
    /// - Returns: the text as it may be shown.
    public static func printableLines(_ text: String) -> String {
        shown(text, keeping: ["\n", "\t"])
    }

    /// Whether `text` shows as it is written, on one line: no control character, no line or
    /// paragraph separator, no direction control — which shows `invoice\u{202E}fdp.exe` as
    /// `invoiceexe.pdf`. Emoji sequences (joiners, variation selectors) pass. For a name someone
    /// chooses that others see later (a device, an attachment, a hold's reason): it is refused
    /// rather than shown changed.
    /// - Parameter text: the name as chosen.
    /// - Returns: true when nothing in it changes how it, or the text after it, is drawn.
    public static func isOneLineAsWritten(_ text: String) -> Bool {
        !text.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: return true
            default: return scalar.properties.isBidiControl
            }
        }
    }

    private static func shown(_ text: String, keeping kept: Set<Unicode.Scalar>) -> String {
        let scalars = text.unicodeScalars.map { scalar -> Unicode.Scalar in
            if kept.contains(scalar) { return scalar }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return "?"
            default: return scalar
            }
        }
        return String(String.UnicodeScalarView(scalars))
    }
}
