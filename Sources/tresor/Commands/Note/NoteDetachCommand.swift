import ArgumentParser
import TresorKit
import TresorProtocol

extension NoteCommand {
    struct Detach: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "detach",
            abstract: "Remove an attachment from a note.",
            discussion: "Its file is overwritten and unlinked. A note in Recently Deleted keeps its attachments until it is restored.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The note's id.") var id: String
        @Argument(help: "The attachment's id (see tresor note show).") var attachment: String

        func run() throws {
            try Output.run(options) {
                let summary = try options.notes().removeAttachment(attachment, of: id)
                if options.json { return Output.json(summary) }
                print("Removed attachment \(attachment) from note \(summary.id).")
            }
        }
    }
}
