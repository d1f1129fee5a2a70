import ArgumentParser
import FoundationEssentials
import TresorKit

struct NoteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "note",
        abstract: "Notes: write, list, search, lock with a passphrase, attach files.",
        discussion: """
            Every note is sealed under the keybag. A locked note is also encrypted with a key \
            that only the notes passphrase unwraps (Apple Notes' scheme). Entering it opens a \
            secure session: other notes of the same passphrase then open without asking, until \
            `tresor note lock-now`, the session's idle timeout or `tresor lock`. Passphrases are \
            asked on the terminal with echo off, or read with --passphrase-stdin.
            """,
        subcommands: [
            New.self, List.self, Show.self, Edit.self, Delete.self, Search.self,
            Lock.self, Unlock.self, Rewrap.self, LockNow.self,
            Attach.self, ExportAttachment.self, FolderCommand.self, PassphraseCommand.self, TrashCommand.self,
        ])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Write a new note; its body comes from standard input.",
            discussion: "Example: tresor note new --title 'Wi-Fi' --body-stdin < wifi.txt. Without --body-stdin on a terminal, type the body and end with Ctrl-D.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "The title (default: the body's first line).") var title = ""
        @Option(help: "Put the note in this folder (created when missing).") var folder: String?
        @Flag(help: "Pin the note to the top of the list.") var pin = false
        @Flag(help: "Read the body from standard input.") var bodyStdin = false

        func run() throws {
            try Output.run(json: options.json) {
                let body = try noteBody(fromStandardInput: bodyStdin)
                let note = try options.notes().create(title: title, body: body, folder: folder, pinned: pin)
                if options.json { return Output.json(note) }
                print("Created note \(note.id).")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the notes: id, * if pinned, [locked], title, last change.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Only the notes of this folder.") var folder: String?

        func run() throws {
            try Output.run(json: options.json) {
                let notes = try options.notes().list(folder: folder)
                if options.json { return Output.json(notes) }
                print(NoteText.table(notes))
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show a note with its body and attachments.",
            discussion: """
                A locked note opens within its passphrase's secure session; otherwise the \
                passphrase is asked for. A note locked with an earlier passphrase can then be \
                re-wrapped under the current one: asked on a terminal, or with --rewrap.
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: NoteSecretOptions
        @Argument(help: "The note's id.") var id: String
        @Flag(help: "If the note is locked with an earlier passphrase, re-wrap it under the current one without asking.")
        var rewrap = false
        @Flag(help: "Print the body as its Markdown (on a terminal it is shown formatted, elsewhere as plain text).")
        var markdown = false

        func run() throws {
            try Output.run(json: options.json) {
                let notes = try options.notes()
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                var note = try unlocker.withPassphrase { try notes.show(id, passphrase: $0) }
                if let lock = note.summary.lock, !lock.isCurrent,
                   rewrap || (unlocker.interactive && SecretInput.confirm("Re-wrap it under your current passphrase? [y/N] ")) {
                    note.summary = try unlocker.withPassphrase { try notes.rewrap(id, currentPassphrase: $0) }
                    if !options.json { StandardStream.error.write("Re-wrapped under the current passphrase.\n") }
                }
                if options.json { return Output.json(note) }
                print(NoteText.note(note, style: .forOutput(markdown: markdown)))
            }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a note's title, body, pin or folder.",
            discussion: "A locked note's new body is encrypted under its note key: its passphrase or session is needed.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: NoteSecretOptions
        @Argument(help: "The note's id.") var id: String
        @Option(help: "A new title.") var title: String?
        @Flag(help: "Replace the body with standard input.") var bodyStdin = false
        @Flag(help: "Pin the note.") var pin = false
        @Flag(help: "Unpin the note.") var unpin = false
        @Option(help: "Move the note to this folder (created when missing).") var folder: String?
        @Flag(help: "Move the note out of its folder.") var noFolder = false

        func validate() throws {
            if pin && unpin { throw ValidationError("--pin and --unpin exclude each other") }
            if folder != nil && noFolder { throw ValidationError("--folder and --no-folder exclude each other") }
            if secrets.fromStandardInput && bodyStdin { throw ValidationError("standard input carries the body: the passphrase must be typed on the terminal") }
        }

        func run() throws {
            try Output.run(json: options.json) {
                let body = bodyStdin ? try readBodyFromStandardInput() : nil
                let pinned: Bool? = pin ? true : unpin ? false : nil
                let move: String?? = noFolder ? .some(nil) : folder.map { .some($0) }
                guard title != nil || body != nil || pinned != nil || move != nil else {
                    throw ValidationError("nothing to change: give --title, --body-stdin, --pin, --unpin, --folder or --no-folder")
                }
                let notes = try options.notes()
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                let note = try unlocker.withPassphrase {
                    try notes.edit(id, title: title, body: body, pinned: pinned, folder: move, passphrase: $0)
                }
                if options.json { return Output.json(note) }
                print("Changed note \(note.id).")
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete", abstract: "Move a note and its attachments to Recently Deleted (tresor note trash).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The note's id.") var id: String

        func run() throws {
            try Output.run(json: options.json) {
                try options.notes().delete(id)
                if options.json { return Output.json(["deleted": id]) }
                print("Moved note \(id) to Recently Deleted (tresor note trash restore \(id) brings it back).")
            }
        }
    }

    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Find notes by words of their title or body (locked notes: title only).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The words to look for; each must start a word of the note.") var text: String

        func run() throws {
            try Output.run(json: options.json) {
                let notes = try options.notes().search(text)
                if options.json { return Output.json(notes) }
                print(NoteText.table(notes))
            }
        }
    }

    struct LockNow: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lock-now",
            abstract: "End every secure session now (\"Lock Now\"): locked notes ask for the passphrase again.")
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(json: options.json) {
                let ended = try options.notes().lockNow()
                if options.json { return Output.json(["endedSessions": ended]) }
                print("Locked notes are locked again (\(ended) secure session\(ended == 1 ? "" : "s") ended).")
            }
        }
    }
}
