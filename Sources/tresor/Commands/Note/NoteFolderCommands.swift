import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

extension NoteCommand {
    struct FolderCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "folder",
            abstract: "List, create and delete folders of notes.",
            discussion:
                "A folder's name is confidential: give it as - (or leave it out) to type it or read it from standard input, off the command line.",
            subcommands: [List.self, Create.self, Delete.self])

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List the folders and how many notes each holds.", aliases: ["ls"])
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Output.run(options) {
                    let folders = try options.notes().folders()
                    if options.json { return Output.json(folders) }
                    if folders.isEmpty { print("No folders.") }
                    for folder in folders {
                        print("\(TerminalText.printable(folder.name))  (\(folder.noteCount) note\(folder.noteCount == 1 ? "" : "s"))")
                    }
                }
            }
        }

        struct Create: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a folder.")
            @OptionGroup var options: GlobalOptions
            @Argument(help: "The folder's name; omitted or -: typed, or read from standard input.") var name: String?

            func run() throws {
                try Output.run(options) {
                    let name = try FolderName.resolve(name), notes = try options.notes()
                    // Said, not made again: a script that creates a folder it has learns so.
                    if try notes.folders().contains(where: { $0.name == name }) {
                        throw APIError(.duplicateItem, "folder \"\(name)\" exists already")
                    }
                    let folder = try notes.createFolder(name)
                    if options.json { return Output.json(folder) }
                    print("Created folder \(TerminalText.printable(folder.name)).")
                }
            }
        }

        struct Delete: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an empty folder.", aliases: ["rm"])
            @OptionGroup var options: GlobalOptions
            @Argument(help: "The folder's name; omitted or -: typed, or read from standard input.") var name: String?

            func run() throws {
                try Output.run(options) {
                    let name = try FolderName.resolve(name)
                    let folders = try options.notes().deleteFolder(name)
                    if options.json { return Output.json(folders) }
                    print("Deleted folder \(TerminalText.printable(name)).")
                }
            }
        }
    }
}

/// A folder's name from the command line, or — omitted or `-` — typed or read from standard input.
enum FolderName {
    static func resolve(_ given: String?) throws -> String {
        try AskedText.resolve(given ?? AskedText.marker, prompt: "Folder name:", oneLine: true) ?? ""
    }
}
