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
            A note is named by its id, a unique start of it, or its exact title. Titles, \
            folder names and search words are confidential: `tresor note new` and `note edit` \
            open $EDITOR, and options given as - are typed or read from standard input, so that \
            `ps` and the shell's history never see them.
            """,
        subcommands: [
            New.self, List.self, Show.self, Edit.self, Delete.self, Search.self,
            Lock.self, Unlock.self, Rewrap.self, LockNow.self,
            Attach.self, Detach.self, ExportAttachment.self, AttachmentBackup.self, FolderCommand.self, PassphraseCommand.self, TrashCommand.self,
        ])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Write a new note: in $EDITOR on a terminal, else from standard input.",
            discussion: """
                On a terminal, $VISUAL or $EDITOR (else vi) opens: the first line is the title, \
                the rest the body. Otherwise standard input is the note in the same form — the \
                first line the title, the rest the body (an empty line after the title is \
                dropped) — or, with a title given, all of it is the body. Options given as - \
                are read first, one line each: --title, then --folder. Examples:
                  printf 'Wi-Fi\\nKey: 1234\\n' | tresor note new
                  printf 'Personal\\nHome\\nDoor code 4711\\n' | tresor note new --folder -
                """)
        @OptionGroup var options: GlobalOptions
        @Option(help: "The title; - to type it or read it from standard input. Without it, the note's first line.")
        var title: String?
        @Option(help: "Put the note in this folder (created when missing); - to type it or read it from standard input.")
        var folder: String?
        @Flag(help: "Pin the note to the top of the list.") var pin = false
        @Flag(
            help: ArgumentHelp(
                "All of standard input is the body, even on a terminal; the title is --title, else the body's first line.", visibility: .hidden))
        var bodyStdin = false

        mutating func run() throws {
            try Output.run(options) {
                title = try AskedText.resolve(title, prompt: "Title:", oneLine: true)
                folder = try AskedText.resolve(folder, prompt: "Folder:", oneLine: true)
                let draft: EditableNote
                var editedFile: Editor.EditedText?
                if bodyStdin {
                    draft = EditableNote(title: title ?? "", body: try readBodyFromStandardInput())
                } else if StandardInput.shared.isTerminal {
                    let file = try Editor.edit(EditableNote(title: title ?? "", body: "").text)
                    var edited = EditableNote(parsing: file.text)
                    if edited.body.hasSuffix("\n") { edited.body.removeLast() }
                    (draft, editedFile) = (edited, file)
                } else if let title {
                    draft = EditableNote(title: title, body: try readBodyFromStandardInput())
                } else {
                    draft = EditableNote(parsing: try readBodyFromStandardInput())
                }
                guard !draft.isEmpty else { throw ValidationError("the note is empty; nothing was created") }
                let note = try Editor.EditedText.saving(editedFile, with: "tresor note new") {
                    try options.notes().create(title: draft.title, body: draft.body, folder: folder, pinned: pin)
                }
                if options.json { return Output.json(note) }
                print("Created note \(note.id).")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the notes: id, * if pinned, [locked], title, last change.",
            aliases: ["ls"])
        @OptionGroup var options: GlobalOptions
        @Option(help: "Only the notes of this folder; - to type it or read it from standard input.") var folder: String?

        mutating func run() throws {
            try Output.run(options) {
                folder = try AskedText.resolve(folder, prompt: "Folder:", oneLine: true)
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
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String
        @Flag(help: "If the note is locked with an earlier passphrase, re-wrap it under the current one without asking.")
        var rewrap = false
        @Flag(help: "Print the body as its Markdown (on a terminal it is shown formatted, elsewhere as plain text).")
        var markdown = false

        func run() throws {
            try Output.run(options) {
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                var note = try unlocker.withPassphrase { try notes.show(id, passphrase: $0) }
                if let lock = note.summary.lock, !lock.isCurrent,
                    rewrap || (unlocker.interactive && Terminal.confirm("Re-wrap it under your current passphrase? [y/N] "))
                {
                    note.summary = try unlocker.withPassphrase { try notes.rewrap(id, currentPassphrase: $0) }
                    if !options.json { StandardStream.error.write("Re-wrapped under the current passphrase.\n") }
                }
                if options.json { return Output.json(note) }
                print(NoteText.note(note, style: .forOutput(markdown: markdown)))
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete", abstract: "Move a note and its attachments to Recently Deleted (tresor note trash).", aliases: ["rm"])
        @OptionGroup var options: GlobalOptions
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String

        func run() throws {
            try Output.run(options) {
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                try notes.delete(id)
                if options.json { return Output.json(["deleted": id]) }
                print("Moved note \(id) to Recently Deleted (tresor note trash restore \(id) brings it back).")
            }
        }
    }

    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Find notes by words of their title or body (locked notes: title only).",
            discussion:
                "Without words (or with -), they are typed, or read from the first line of standard input: search words say what you look for, and `ps` shows arguments to every local user."
        )
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The words to look for; each must start a word of the note. Omitted or -: typed, or read from standard input.")
        var text: String?

        mutating func run() throws {
            try Output.run(options) {
                let words = try AskedText.resolve(text ?? AskedText.marker, prompt: "Words to search for:") ?? ""
                guard !words.trimmingWhitespace().isEmpty else { throw ValidationError("give words to search for") }
                let notes = try options.notes().search(words)
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
            try Output.run(options) {
                let ended = try options.notes().lockNow()
                if options.json { return Output.json(["endedSessions": ended]) }
                print("Locked notes are locked again (\(ended) secure session\(ended == 1 ? "" : "s") ended).")
            }
        }
    }
}
