import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

/// `tresor widget`: the widget of the web client, in the terminal.
struct WidgetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "widget",
        abstract: "Show the notes widget: how many notes, recently changed and pinned ones.",
        discussion: """
            Titles are private: they show as •••• unless the keybag is unlocked and a secure \
            session is open (the passphrase typed for a locked note, as tresor note show asks it, or a browser's). With "widgetProtection": \
            "complete" or "completeUnlessOpen" in config.json the whole widget stays a \
            placeholder while the keybag is locked (complete) or until its first unlock.
            """)

    @OptionGroup var options: GlobalOptions

    func run() throws {
        try Output.run(options) {
            let widget = try options.notes().widget()
            if options.json { return Output.json(widget) }
            print(WidgetText.render(widget), terminator: "")
        }
    }
}

/// The widget as a box of plain text.
enum WidgetText {
    static let width = 44

    static func render(_ widget: Widget, now: Date = Date()) -> String {
        var lines: [String] = []
        if widget.placeholder {
            lines.append(Widget.redactedText)
            lines.append(placeholderReason(widget))
        } else {
            let count = widget.noteCount ?? 0
            lines.append("\(count) note\(count == 1 ? "" : "s")")
            if !widget.pinned.isEmpty {
                lines.append("")
                lines.append("Pinned")
                for note in widget.pinned { lines.append("  \(title(note.title))\(lockMark(note.isLocked))") }
            }
            if !widget.recent.isEmpty {
                lines.append("")
                lines.append("Recently changed")
                for note in widget.recent {
                    lines.append("  \(title(note.title))\(lockMark(note.isLocked))  · \(ago(note.modified, now: now))")
                }
            }
            if widget.redacted {
                lines.append("")
                lines.append(widget.keybag == .unlocked ? "Titles hidden: no secure session is open." : "Titles hidden: the keybag is locked.")
            }
        }
        return box("Notes", lines)
    }

    static func placeholderReason(_ widget: Widget) -> String {
        switch widget.reason {
        case .notInitialized: return "No keybag yet (tresor init)."
        case .protectionLevel:
            return widget.protection == .complete ? "Hidden while the keybag is locked." : "Hidden until the first unlock."
        case .contentUnavailable: return "Unavailable: the keybag is damaged (tresor status says why)."
        case nil: return "Unavailable."
        }
    }

    static func title(_ title: String?) -> String {
        guard let title else { return Widget.redactedText }
        // One line, drawing nothing (a title is someone's input shown in a terminal).
        return TerminalText.printable(title, limit: width - 17)
    }

    /// Plain text, not an emoji: emoji are two columns wide and would break the box.
    static func lockMark(_ locked: Bool) -> String { locked ? " (locked)" : "" }

    static func ago(_ date: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        return seconds < 60 ? "just now" : "\(Words.duration(seconds)) ago"
    }

    static func box(_ heading: String, _ lines: [String]) -> String {
        let inner = max(width, lines.map(\.count).max() ?? 0, heading.count + 4)
        var text = "╭─ \(heading) " + String(repeating: "─", count: inner - heading.count - 1) + "╮\n"
        for line in lines { text += "│ " + line + String(repeating: " ", count: inner - line.count) + " │\n" }
        text += "╰" + String(repeating: "─", count: inner + 2) + "╯\n"
        return text
    }
}
