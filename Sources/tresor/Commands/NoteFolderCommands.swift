import ArgumentParser
import FoundationEssentials
import TresorKit

extension NoteCommand {
    struct FolderCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "folder",
            abstract: "List, create and delete folders of notes.",
            subcommands: [List.self, Create.self, Delete.self])

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "List the folders and how many notes each holds.")
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Output.run(options) {
                    let folders = try options.notes().folders()
                    if options.json { return Output.json(folders) }
                    if folders.isEmpty { print("No folders.") }
                    for folder in folders { print("\(folder.name)  (\(folder.noteCount) note\(folder.noteCount == 1 ? "" : "s"))") }
                }
            }
        }

        struct Create: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a folder.")
            @OptionGroup var options: GlobalOptions
            @Argument(help: "The folder's name.") var name: String

            func run() throws {
                try Output.run(options) {
                    let folder = try options.notes().createFolder(name)
                    if options.json { return Output.json(folder) }
                    print("Created folder \(folder.name).")
                }
            }
        }

        struct Delete: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an empty folder.")
            @OptionGroup var options: GlobalOptions
            @Argument(help: "The folder's name.") var name: String

            func run() throws {
                try Output.run(options) {
                    let folders = try options.notes().deleteFolder(name)
                    if options.json { return Output.json(folders) }
                    print("Deleted folder \(name).")
                }
            }
        }
    }
}
