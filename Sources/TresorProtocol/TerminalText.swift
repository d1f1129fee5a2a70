/// Text that others chose — a client's item label or attributes, a requester's command line —
/// as it may be shown on the user's terminal or in a dialog.
public enum TerminalText {
    /// `text` with every control and formatting character (escape sequences, line breaks,
    /// direction overrides) as `?`, cut at `limit` characters.
    /// - Parameters:
    ///   - text: what someone else chose.
    ///   - limit: the most characters shown; more end with `…`. Nil: all of them.
    /// - Returns: the text as it may be shown: it draws nothing on the screen.
    public static func printable(_ text: String, limit: Int? = nil) -> String {
        let scalars = text.unicodeScalars.map { scalar -> Unicode.Scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return "?"
            default: return scalar
            }
        }
        var shown = String(String.UnicodeScalarView(scalars))
        if let limit, shown.count > limit { shown = String(shown.prefix(limit)) + "…" }
        return shown
    }
}
