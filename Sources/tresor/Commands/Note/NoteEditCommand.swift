import ArgumentParser
import FoundationEssentials
import TresorKit

extension NoteCommand {
    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a note: in $EDITOR on a terminal, from standard input, or its title, pin or folder.",
            discussion: """
                With no other option, the note opens in $VISUAL or $EDITOR (else vi) on a \
                terminal — the first line the title, the rest the body — and what is saved \
                replaces both; without a terminal, standard input in that form replaces them. \
                --body-stdin replaces the body alone with standard input. Options given as - \
                are read first, one line each: the note, --title, then --folder. A locked \
                note's new body is encrypted under its note key: its passphrase or session is \
                needed (and, in $EDITOR, its text sits in a file of $XDG_RUNTIME_DIR while the \
                editor runs).
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: NoteSecretOptions
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String
        @Option(help: "A new title; - to type it or read it from standard input.") var title: String?
        @Flag(help: "Replace the body alone with standard input.") var bodyStdin = false
        @Flag(help: "Pin the note.") var pin = false
        @Flag(help: "Unpin the note.") var unpin = false
        @Option(help: "Move the note to this folder (created when missing); - to type it or read it from standard input.") var folder: String?
        @Flag(help: "Move the note out of its folder.") var noFolder = false

        func validate() throws {
            if pin && unpin { throw ValidationError("--pin and --unpin exclude each other") }
            if folder != nil && noFolder { throw ValidationError("--folder and --no-folder exclude each other") }
            if secrets.fromStandardInput && (bodyStdin || (!changesSomething && !StandardInput.shared.isTerminal)) {
                throw ValidationError(
                    "standard input carries the note: type the passphrase on the terminal, or give it on another descriptor with --passphrase-fd")
            }
        }

        /// Whether options say what to change (else the whole note is edited).
        private var changesSomething: Bool { title != nil || bodyStdin || pin || unpin || folder != nil || noFolder }

        mutating func run() throws {
            try Output.run(options) {
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                title = try AskedText.resolve(title, prompt: "New title:", oneLine: true)
                folder = try AskedText.resolve(folder, prompt: "Folder:", oneLine: true)
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                var newTitle = title, body: String?, base: NoteBase?, edited: Editor.EditedText?
                if bodyStdin {
                    body = try readBodyFromStandardInput()
                } else if !changesSomething {
                    guard let (draft, shown, file) = try Self.wholeNote(id, notes: notes, unlocker: &unlocker) else {
                        if !options.json { StandardStream.error.write("No change.\n") }
                        if options.json { Output.json(try notes.list().first { $0.id == id }) }
                        return
                    }
                    (newTitle, body, base, edited) = (draft.title, draft.body, shown, file)
                }
                let pinned: Bool? = pin ? true : unpin ? false : nil
                let move: String?? = noFolder ? .some(nil) : folder.map { .some($0) }
                // An edit of the note as the editor showed it names that version: a change made
                // meanwhile (the web, another terminal) is merged with it, or it becomes a conflict copy.
                let saved = try Editor.EditedText.saving(edited, with: "tresor note edit \(id)") {
                    try unlocker.withPassphrase {
                        try notes.save(id, title: newTitle, body: body, pinned: pinned, folder: move, passphrase: $0, base: base)
                    }
                }
                switch saved.kind {
                case .saved: if !options.json { print("Changed note \(saved.note.id).") }
                case .merged:
                    if !options.json { print("Changed note \(saved.note.id), merged with a change made meanwhile.") }
                case .conflictCopy:
                    // Said on standard error in --json too: a script must not think its text is the note's.
                    StandardStream.error.write(
                        "Note \(saved.note.id) changed in the same lines meanwhile: it keeps that version, and yours is the new note "
                            + "\(saved.conflictCopy?.id ?? "?") (a conflict copy).\n")
                }
                if options.json { Output.json(saved.note) }
            }
        }

        /// The whole note as edited in $EDITOR on a terminal — with the version the editor
        /// showed, which the save names — or read from standard input (a replacement: no
        /// version); nil when the editor saved it unchanged.
        private static func wholeNote(
            _ id: String, notes: Notes, unlocker: inout NoteUnlocker
        ) throws -> (EditableNote, NoteBase?, Editor.EditedText?)? {
            guard StandardInput.shared.isTerminal else {
                let draft = EditableNote(parsing: try readBodyFromStandardInput())
                guard !draft.isEmpty else { throw ValidationError("standard input held no note; nothing was changed") }
                return (draft, nil, nil)
            }
            let opened = try unlocker.withPassphrase { try notes.show(id, passphrase: $0) }
            let before = EditableNote(title: opened.summary.title, body: opened.body)
            let shown = NoteBase(revision: opened.summary.revision, title: opened.summary.title, body: opened.body)
            let edited = try Editor.edit(before.text)
            var after = EditableNote(parsing: edited.text)
            // The editor ends the file with a newline the body may not have had.
            if !before.body.hasSuffix("\n"), after.body.hasSuffix("\n") { after.body.removeLast() }
            guard after != before else { return nil }
            guard !after.isEmpty else { throw ValidationError("the note is empty; nothing was changed (tresor note delete removes a note)") }
            return (after, shown, edited)
        }
    }
}
