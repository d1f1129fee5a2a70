import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

extension SyncCommand {
    /// `tresor sync conflicts [restore ID]`: the losing versions of concurrent edits.
    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conflicts",
            abstract: "The versions that lost a concurrent edit, kept on this device.",
            discussion: """
                When two devices changed the same item, the change the server received later wins \
                everywhere and the other is kept here. `tresor sync conflicts restore ID` makes a kept \
                version the item again; the next `tresor sync now` sends it to the other devices.
                """,
            subcommands: [List.self, Restore.self], defaultSubcommand: List.self)

        static func print(_ conflicts: [SyncConflictInfo]) {
            guard !conflicts.isEmpty else { return Swift.print("No conflicts kept.") }
            for conflict in conflicts {
                guard let attributes = conflict.attributes, let itemClass = conflict.itemClass else {
                    Swift.print("\(conflict.id)  (locked: tresor unlock)")
                    continue
                }
                let names = [attributes.service ?? attributes.server, attributes.account].compactMap { $0 }.joined(separator: "  ")
                Swift.print("\(conflict.id)  \(itemClass.rawValue)  \(names)")
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "List the kept versions.")
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Output.run(options) {
                    let conflicts = try options.connect().syncConflicts()
                    if options.json { return Output.json(SyncConflictsAnswer(conflicts: conflicts)) }
                    Conflicts.print(conflicts)
                }
            }
        }

        struct Restore: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "restore", abstract: "Make a kept version the item again (sent at the next sync).")
            @Argument(help: "The conflict's id (tresor sync conflicts).") var id: String
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Output.run(options) {
                    let client = try options.connect()
                    try client.syncRestoreConflict(id)
                    if options.json { return Output.json(SyncConflictsAnswer(conflicts: try client.syncConflicts())) }
                    Swift.print("Restored \(id); tresor sync now sends it to the other devices.")
                }
            }
        }
    }
}
