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
        @Argument(help: "The attachment's id (see tresor note show).") var attachment: String

        func run() throws {
            try Output.run(options) {
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                let summary = try unlocker.withPassphrase { try notes.removeAttachment(attachment, of: id, passphrase: $0) }
                if options.json { return Output.json(summary) }
                print("Removed attachment \(attachment) from note \(summary.id).")
            }
        }
    }
}
