import Foundation
import TresorModel

/// The rules every notes store applies the same way, whatever keeps the notes: valid names
/// and texts, a note's title, a conflict copy's title, a list's preview (docs/WEB.md,
/// docs/FORMAT.md). Pure functions; the stores call them, so the embedded store and the
/// server's database agree on every answer.
public enum NoteRules {
    /// The login name of the local account ("On My Computer").
    public static let localLoginName = "local"
    /// Login names: 1–32 of `a-z 0-9 . _ -`, compared case-folded.
    static let loginNameCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789._-")
    /// The most participants a note may have.
    public static let maximumParticipants = 64
    /// How long a note stays in Recently Deleted before it is deleted for good.
    public static let recentlyDeletedDays = 30
    /// How many titles each list of the widget holds.
    public static let widgetListLength = 5
    /// The longest preview, in characters.
    public static let previewLength = 120
    /// Consecutive wrong passphrases after which the hint is shown.
    public static let hintAfterFailures = 3
    /// The longest search text.
    public static let searchTextBytes = 1024

    /// A valid login name, case-folded.
    /// - Parameter name: the name as typed.
    /// - Returns: the name as stored and compared.
    /// - Throws: ``NotesError/invalid(_:)`` for a name of the wrong length or characters.
    public static func loginName(_ name: String) throws -> String {
        let login = name.lowercased()
        guard (1...32).contains(login.count), login.allSatisfy({ loginNameCharacters.contains($0) }) else {
            throw NotesError.invalid("an account name is 1 to 32 characters: letters a-z, digits, '.', '_' or '-'")
        }
        return login
    }

    /// Checks a text a person typed: at most `limit` UTF-8 bytes, no NUL, not empty unless allowed.
    /// - Parameters:
    ///   - text: the text.
    ///   - limit: its largest size in bytes.
    ///   - what: what it is, for the error ("title").
    ///   - allowEmpty: whether "" is fine.
    /// - Throws: ``NotesError/invalid(_:)`` naming `what`.
    public static func validate(_ text: String, limit: Int, what: String, allowEmpty: Bool = true) throws {
        if !allowEmpty && text.isEmpty { throw NotesError.invalid("the \(what) is empty") }
        guard text.utf8.count <= limit else { throw NotesError.invalid("the \(what) is longer than \(limit) bytes") }
        guard !text.unicodeScalars.contains("\0") else { throw NotesError.invalid("the \(what) contains a NUL character") }
    }

    /// A new note's title: the one given, else the first line of the body, else "New Note".
    /// - Parameters:
    ///   - given: the title typed (may be blank).
    ///   - body: the note's body.
    /// - Returns: the title to store.
    /// - Throws: ``NotesError/invalid(_:)`` when it is too long or holds a NUL.
    public static func title(_ given: String, body: String) throws -> String {
        let trimmed = given.trimmingCharacters(in: .whitespacesAndNewlines)
        let title =
            !trimmed.isEmpty
            ? given
            : String(body.split(separator: "\n", omittingEmptySubsequences: true).first?.prefix(120) ?? "New Note")
        try validate(title, limit: NoteLimits.titleBytes, what: "title", allowEmpty: false)
        return title
    }

    /// "Groceries (conflict copy from bob)", shortened to fit the title limit.
    /// - Parameters:
    ///   - title: the note's title.
    ///   - editorName: the login name of whoever saved the copy's text, when known.
    /// - Returns: the copy's title.
    public static func conflictCopyTitle(_ title: String, editorName: String?) -> String {
        let suffix = " (\(NoteSummary.conflictCopyWords)\(editorName.map { " from \($0)" } ?? ""))"
        var base = title.isEmpty ? "New Note" : title
        while base.utf8.count + suffix.utf8.count > NoteLimits.titleBytes { base.removeLast() }
        return base + suffix
    }

    /// Whom a conflict copy is from: the editor's login name — or, for an edit a device synced,
    /// that device's name, after the login name when the editor is not the note's owner ("bob on
    /// Laptop"): two devices of one account are told apart.
    /// - Parameters:
    ///   - login: the editor's login name, when known.
    ///   - device: the name of the device the edit came from; nil for an edit made in a browser.
    ///   - isOwner: whether the editor owns the note.
    /// - Returns: the name for ``conflictCopyTitle(_:editorName:)``.
    public static func conflictCopyEditor(login: String?, device: String?, isOwner: Bool) -> String? {
        guard let device else { return login }
        guard !isOwner, let login else { return device }
        return "\(login) on \(device)"
    }

    /// The list's preview of a note: the first non-empty line of `body` that is not the
    /// title, without markup — for a search, the first such line holding a word the search
    /// matches, from a little before that word.
    /// - Parameters:
    ///   - body: the note's body (Tresor Markdown).
    ///   - title: its title.
    ///   - query: the search's words (``SearchWords/query(_:)``), or none outside a search.
    /// - Returns: at most ``previewLength`` characters (and a leading "…" when the line is shown
    ///   from its middle), or nil when there is no such line.
    public static func preview(body: String, title: String, matching query: [String] = []) -> String? {
        var skippedTitle = false
        var first: String?
        for block in NoteMarkdown.BlockReader(body) {
            let text = block.text.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            if !skippedTitle && text == title.trimmingCharacters(in: .whitespaces) {
                skippedTitle = true
                continue
            }
            if first == nil { first = String(text.prefix(previewLength)) }
            guard !query.isEmpty else { break }
            if let match = SearchWords.firstMatch(of: query, in: text) { return excerpt(of: text, showing: match) }
        }
        return first
    }

    /// `text` — when longer than a preview, from a few words before `match` — so the matched
    /// word shows in a short row.
    private static func excerpt(of text: String, showing match: String.Index) -> String {
        let lead = 24
        guard text.count > previewLength, text.distance(from: text.startIndex, to: match) > lead else { return String(text.prefix(previewLength)) }
        var start = text.index(match, offsetBy: -lead)
        // Begin at a word, not inside one.
        while start < match, !text[start].isWhitespace { start = text.index(after: start) }
        let shown = text[start...].drop { $0.isWhitespace }
        return "…" + String(shown.prefix(previewLength - 1))
    }

    /// Attachment names become file names on export: no separators, nothing that walks out of
    /// a folder, nothing drawn other than as written (`TerminalText.isOneLineAsWritten(_:)`).
    /// - Parameter name: the attachment's name.
    /// - Throws: ``NotesError/invalid(_:)``.
    public static func validateAttachmentName(_ name: String) throws {
        try validate(name, limit: NoteLimits.attachmentNameBytes, what: "attachment name", allowEmpty: false)
        guard name != ".", name != "..", !name.contains("/"), !name.contains("\\"),
            TerminalText.isOneLineAsWritten(name)
        else {
            throw NotesError.invalid(
                "an attachment name may not be \".\" or \"..\" nor contain '/', '\\\\', control characters, line separators or direction controls")
        }
    }

    /// Checks a folder's name: not empty, at most ``NoteLimits/folderNameBytes``, no NUL.
    /// - Parameter name: the name.
    /// - Throws: ``NotesError/invalid(_:)``.
    public static func validateFolderName(_ name: String) throws {
        try validate(name, limit: NoteLimits.folderNameBytes, what: "folder name", allowEmpty: false)
    }

    /// Checks a hint: not empty, at most ``NoteLimits/hintBytes``.
    /// - Parameter hint: the hint, or nil for none.
    /// - Throws: ``NotesError/invalid(_:)``.
    public static func validateHint(_ hint: String?) throws {
        guard let hint else { return }
        try validate(hint, limit: NoteLimits.hintBytes, what: "hint", allowEmpty: false)
    }
}
