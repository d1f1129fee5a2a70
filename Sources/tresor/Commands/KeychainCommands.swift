import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

struct KeychainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain",
        abstract: "Create, list and delete keychains, each with its own passcode and lock state.",
        discussion: """
            Every home has the login keychain (unlocked with `tresor unlock`) and the read-only \
            "System Roots". A created keychain has its own passcode: `tresor unlock --keychain NAME`. \
            Use it with `tresor item … --keychain NAME`.
            """,
        subcommands: [Create.self, List.self, Delete.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a keychain (asks for its new passcode twice).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Its name: 1 to 64 of A-Z, a-z, 0-9, '.', '_' or '-', beginning with a letter or digit.") var name: String
        @Flag(help: "Read the new passcode from standard input.") var passcodeStdin = false

        func run() throws {
            try Output.run(options) {
                // Checked before the passcode is asked for (the daemon checks it again).
                guard KeychainName.isValid(name) else { throw ValidationError(KeychainName.rule) }
                let client = try options.connect()
                if try client.keychains().contains(where: { $0.name == name }) {
                    throw ValidationError("a keychain named \(name) exists already (tresor keychain list)")
                }
                var input = SecretInput(fromStandardInput: passcodeStdin)
                let passcode = try input.newPasscode("New passcode for \(name):")
                let keychains = try client.createKeychain(name: name, passcode: passcode)
                if options.json { return Output.json(keychains) }
                print("Created keychain \(name); it is unlocked.")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the keychains and their lock states.")
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let keychains = try options.connect().keychains()
                if options.json { return Output.json(keychains) }
                for keychain in keychains { print("\(keychain.name)  \(Words.of(keychain.state))") }
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete", abstract: "Delete a created keychain and every item in it (asks for its passcode).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The keychain's name.", completion: Completion.keychains) var name: String
        @Flag(help: "Read its passcode from standard input.") var passcodeStdin = false

        func run() throws {
            try Output.run(options) {
                var input = SecretInput(fromStandardInput: passcodeStdin)
                let passcode = try input.next("Passcode of \(name):")
                let keychains = try options.connect().deleteKeychain(name: name, passcode: passcode)
                if options.json { return Output.json(keychains) }
                print("Deleted keychain \(name).")
            }
        }
    }
}
