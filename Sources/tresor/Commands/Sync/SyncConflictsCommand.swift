import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

extension SyncCommand {
    /// `tresor sync conflicts [restore ID]`: the losing versions of concurrent edits.
    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conflicts",
            abstract: "The versions that lost a concurrent edit, kept on this device.",
            discussion: """
                When two devices changed the same item, the change the server received later wins \
                everywhere and the other is kept here. `tresor sync conflicts show ID` prints a kept \
                version's secret; `tresor sync conflicts restore ID` makes it the item again (the next \
                sync sends it to the other devices); `tresor sync conflicts discard ID` \
                forgets it. Showing and restoring need you present as reading the item would (the \
                passcode, or a terminal session: tresor unlock --for); discarding, as deleting it.
                """,
            subcommands: [List.self, Show.self, Restore.self, Discard.self], defaultSubcommand: List.self)

        static func print(_ conflicts: [SyncConflictInfo]) {
            guard !conflicts.isEmpty else { return Swift.print("No conflicts kept.") }
            for conflict in conflicts { Swift.print(line(conflict)) }
        }

        /// `ID  class  service  account  changed DATE`, or that its class is locked: the date tells
        /// the kept version from the item's.
        static func line(_ conflict: SyncConflictInfo) -> String {
            guard let attributes = conflict.attributes, let itemClass = conflict.itemClass else { return "\(conflict.id)  (locked: tresor unlock)" }
            let names = [attributes.service ?? attributes.server, attributes.account].compactMap { $0 }.map { TerminalText.printable($0) }
            let changed = attributes.modificationDate.map { ["changed \($0.formatted(.iso8601))"] } ?? []
            return "\(conflict.id)  \(itemClass.rawValue)  \((names + changed).joined(separator: "  "))"
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "List the kept versions.", aliases: ["ls"])
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Output.run(options) {
                    let conflicts = try options.connect().syncConflicts()
                    if options.json { return Output.json(SyncConflictsAnswer(conflicts: conflicts)) }
                    Conflicts.print(conflicts)
                }
            }
        }

        /// The kept version a subcommand acts on, and where its passcode comes from.
        struct ConflictOptions: ParsableArguments {
            @Argument(help: "The conflict's id (tresor sync conflicts), or enough of its start.") var id: String
            @Flag(help: "Read the passcode from standard input.") var passcodeStdin = false

            /// The kept version `id` names: its whole id, or the one that starts so (in any case).
            func resolved(_ client: TresorClient) throws -> String {
                // An empty id starts every id: with one version kept, it would name that one.
                guard !id.isEmpty else { throw ValidationError("the kept version's id is empty (tresor sync conflicts lists them)") }
                let ids = try client.syncConflicts().map(\.id)
                let given = id.lowercased()
                if let exact = ids.first(where: { $0.lowercased() == given }) { return exact }
                let starting = ids.filter { $0.lowercased().hasPrefix(given) }
                guard starting.count == 1 else {
                    throw ValidationError(
                        starting.isEmpty
                            ? "no kept version has the id \(id) (tresor sync conflicts lists them)"
                            : "\(starting.count) kept versions start with \(id); give more of the id")
                }
                return starting[0]
            }

            /// Runs `request` again with the passcode when the daemon asks for the user.
            func withPasscode<T>(_ request: (String?) throws -> T) throws -> T {
                try withPasscodeIfAsked(stdin: passcodeStdin, request)
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "show", abstract: "Print a kept version's secret, alone (to compare it with the item's).")
            @OptionGroup var conflict: ConflictOptions
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Output.run(options) {
                    let client = try options.connect()
                    let id = try conflict.resolved(client)
                    let secret = try conflict.withPasscode { try client.syncConflictSecret(id, passcode: $0) }
                    if options.json { return Output.json(KeptSecretJSON(id: id, secret: secret)) }
                    SecretOutput.write(secret)
                }
            }
        }

        /// `show --json`: the kept version's id, and its secret as `item get --json` gives one.
        struct KeptSecretJSON: Encodable {
            var id: String
            var secret: String?
            var secretBase64: String

            init(id: String, secret: Data) {
                self.id = id
                let shown = SecretJSON(secret)
                (self.secret, secretBase64) = (shown.text, shown.base64)
            }
        }

        struct Discard: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "discard", abstract: "Forget a kept version; the item stays as it is.")
            @OptionGroup var conflict: ConflictOptions
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Conflicts.change(conflict, options, done: "Discarded") { try $0.syncDiscardConflict($1, passcode: $2) }
            }
        }

        struct Restore: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "restore", abstract: "Make a kept version the item again (sent at the next sync).")
            @OptionGroup var conflict: ConflictOptions
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Conflicts.change(conflict, options, done: "Restored", then: "; it goes to the other devices with the next sync") {
                    try $0.syncRestoreConflict($1, passcode: $2)
                }
            }
        }

        /// Restores or discards `conflict` with `request` (the client, the id, the passcode if
        /// asked for); then says "`done` ID`then`.", or lists the conflicts left in --json.
        static func change(
            _ conflict: ConflictOptions, _ options: GlobalOptions, done: String, then: String = "",
            _ request: (TresorClient, String, String?) throws -> Void
        ) throws {
            try Output.run(options) {
                let client = try options.connect()
                let id = try conflict.resolved(client)
                try conflict.withPasscode { try request(client, id, $0) }
                if options.json { return Output.json(SyncConflictsAnswer(conflicts: try client.syncConflicts())) }
                Swift.print("\(done) \(id)\(then).")
            }
        }
    }
}
