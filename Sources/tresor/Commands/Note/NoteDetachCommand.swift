import ArgumentParser
import TresorKit
import TresorProtocol

extension NoteCommand {
    struct Detach: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "detach",
            abstract: "Remove an attachment from a note.",
            discussion: """
                Its file is overwritten and unlinked. A note in Recently Deleted keeps its attachments \
                until it is restored. An attachment of a locked note needs the note's passphrase (or \
                its open session), as opening it does.
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: NoteSecretOptions
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String
        @Argument(help: AttachmentReference.help) var attachment: String

        func run() throws {
            try Output.run(options) {
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                var removed = attachment
                let summary = try unlocker.withPassphrase { passphrase in
                    removed = try AttachmentReference.resolve(attachment, ofNote: id, in: notes, passphrase: passphrase)
                    return try notes.removeAttachment(removed, of: id, passphrase: passphrase)
                }
                if options.json { return Output.json(summary) }
                print("Removed attachment \(removed) from note \(summary.id).")
            }
        }
    }
}
