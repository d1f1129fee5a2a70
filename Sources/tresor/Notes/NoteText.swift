import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

/// Notes as text: the list table, one note, attachments, the passphrase status.
enum NoteText {
    static func date(_ date: Date) -> String { date.formatted(.iso8601) }

    /// One line per note: id, `*` when pinned, `[locked]` when locked, title, modified, and who
    /// shares a shared note.
    static func table(_ notes: [NoteSummary]) -> String {
        guard !notes.isEmpty else { return "No notes." }
        let titles = notes.map { shortened(TerminalText.printable($0.title), to: 40) }
        let width = titles.map(\.count).max() ?? 0
        return zip(notes, titles).map { note, title in
            let pin = note.isPinned ? "*" : " "
            let lock = note.isLocked ? "[locked]" : "        "
            let line = "\(note.id)  \(pin)  \(lock)  \(title + String(repeating: " ", count: width - title.count))  \(date(note.modified))"
            return note.sharing.map { "\(line)  \(sharingText($0))" } ?? line
        }.joined(separator: "\n")
    }

    /// How a note's body is printed (docs/FORMAT.md, "Note bodies").
    enum BodyStyle {
        /// Formatted with terminal escapes (standard output is a terminal).
        case terminal
        /// Formatted as plain text: list marks and ticks, no markup (a pipe or a file).
        case plain
        /// The stored Markdown as it is (`--markdown`).
        case markdown

        /// `--markdown`, else what standard output is.
        static func forOutput(markdown: Bool) -> BodyStyle {
            markdown ? .markdown : StandardStream.output.isTerminal ? .terminal : .plain
        }
    }

    /// On a terminal, with no escape sequence of the text's own: a note may come from someone else.
    static func body(_ text: String, _ style: BodyStyle) -> String {
        let text = StandardStream.output.isTerminal ? TerminalText.printableLines(text) : text
        switch style {
        case .terminal: return NoteMarkdown.rendered(text, ansi: true)
        case .plain: return NoteMarkdown.rendered(text, ansi: false)
        case .markdown: return text
        }
    }

    static func note(_ note: OpenedNote, style: BodyStyle = .markdown) -> String {
        let summary = note.summary
        var lines = [TerminalText.printable(summary.title), "  id: \(summary.id)"]
        if let folder = summary.folder { lines.append("  folder: \(TerminalText.printable(folder))") }
        lines.append("  created: \(date(summary.created))")
        lines.append("  modified: \(date(summary.modified))")
        if summary.isPinned { lines.append("  pinned") }
        if let lock = summary.lock { lines.append("  locked: \(lockText(lock))") }
        if let sharing = summary.sharing { lines.append("  \(sharingText(sharing))") }
        for attachment in note.attachments { lines.append("  attachment: \(attachmentText(attachment))") }
        lines.append("")
        lines.append(body(note.body, style))
        return lines.joined(separator: "\n")
    }

    /// "shared by OWNER with A, B": a note shared in the web client, shown on every device.
    static func sharingText(_ sharing: ShareInfo) -> String {
        TerminalText.printable("shared by \(sharing.owner) with \(sharing.participants.joined(separator: ", "))")
    }

    static func lockText(_ lock: LockInfo) -> String {
        switch (lock.source, lock.isCurrent) {
        case (_, true): return "with the current passphrase"
        case (.appleNotes, false): return "with a passphrase imported from Apple Notes (set on \(date(lock.setOn)))"
        case (.tresor, false): return "with an earlier passphrase (generation \(lock.generation ?? 0), set on \(date(lock.setOn)))"
        }
    }

    static func attachmentText(_ attachment: AttachmentInfo) -> String {
        "\(attachment.id)  \(attachment.kind.rawValue)  \(TerminalText.printable(attachment.name))  \(attachment.byteCount) bytes"
    }

    static func passphraseStatus(_ state: NotesPassphraseStatus) -> String {
        let status = state.status
        guard status.isSet else { return "Passphrase:  not set (tresor note passphrase set)" }
        var lines = ["Passphrase:  set (generation \(status.generation ?? 1), on \(status.setOn.map(date) ?? "?"))"]
        lines.append("Hint:        \(status.hasHint ? "set" : "none")")
        lines.append("Session:     \(status.sessionOpen ? "open" : "closed")")
        var keychain = status.keychainUnlock ? "on" : "off"
        if status.keychainUnlock && state.keychainUserPresence == true { keychain += " (needs the passcode)" }
        if state.keychainKeyMissing == true {
            keychain +=
                ", but its key is gone from the keychain: locked notes need the passphrase (`tresor note passphrase keychain on` keeps it again)"
        }
        lines.append("Keychain:    \(keychain)")
        if status.failedAttempts > 0 {
            var line = "Failed:      \(status.failedAttempts) wrong passphrase\(status.failedAttempts == 1 ? "" : "s")"
            if let wait = status.retryAfterSeconds { line += "; next attempt in \(wait) s" }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// `text`'s first line in at most `length` characters. A conflict copy's title keeps its end
    /// — whose version it is, the one word that tells it from the note — and loses its middle.
    static func shortened(_ text: String, to length: Int) -> String {
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard line.count > length else { return line }
        if let copy = line.ranges(of: " (\(NoteSummary.conflictCopyWords)").last, line.hasSuffix(")") {
            let end = line[copy.lowerBound...]
            let room = length - end.count - 1
            if room >= 8 { return String(line[..<copy.lowerBound].prefix(room)) + "…" + end }
        }
        return String(line.prefix(length - 1)) + "…"
    }
}
