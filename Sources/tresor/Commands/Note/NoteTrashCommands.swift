import ArgumentParser
import FoundationEssentials
import TresorKit

extension NoteCommand {
    /// `tresor note trash`: Recently Deleted — where `tresor note delete` puts a note for 30 days.
    struct TrashCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trash",
            abstract: "Recently Deleted: list, restore, or delete notes for good.",
            discussion: "`tresor note delete` moves a note here with its attachments; after 30 days it is deleted for good.",
            subcommands: [List.self, Restore.self, Delete.self, Empty.self])

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List the notes in Recently Deleted, and when each goes for good.")
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Output.run(options) {
                    let notes = try options.notes().recentlyDeleted()
                    if options.json { return Output.json(notes) }
                    guard !notes.isEmpty else { return print("Recently Deleted is empty.") }
                    print(NoteText.table(notes))
                    if let last = notes.compactMap(\.deleted).min() {
                        print(
                            "Notes are deleted for good 30 days after they were deleted (the oldest on \(NoteText.date(last.addingTimeInterval(30 * 86_400))))."
                        )
                    }
                }
            }
        }

        struct Restore: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "restore", abstract: "Bring a note back from Recently Deleted.")
            @OptionGroup var options: GlobalOptions
            @Argument(help: NoteReference.trashHelp) var id: String

            func run() throws {
                try Output.run(options) {
                    let notes = try options.notes()
                    let note = try notes.restore(try NoteReference.resolve(id, in: notes, inTrash: true))
                    if options.json { return Output.json(note) }
                    print("Restored note \(note.id).")
                }
            }
        }

        struct Delete: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a note in Recently Deleted for good.")
            @OptionGroup var options: GlobalOptions
            @Argument(help: NoteReference.trashHelp) var id: String

            func run() throws {
                try Output.run(options) {
                    let notes = try options.notes()
                    let id = try NoteReference.resolve(id, in: notes, inTrash: true)
                    try notes.deleteForGood(id)
                    if options.json { return Output.json(["deletedForGood": id]) }
                    print("Deleted note \(id) for good.")
                }
            }
        }

        struct Empty: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "empty", abstract: "Delete every note in Recently Deleted for good.")
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Output.run(options) {
                    let count = try options.notes().emptyRecentlyDeleted()
                    if options.json { return Output.json(["deletedForGood": count]) }
                    print("Deleted \(count) note\(count == 1 ? "" : "s") for good.")
                }
            }
        }
    }
}
