import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

struct SecretServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-service",
        abstract: "See and share the items desktop programs keep through the Secret Service.",
        discussion: """
            With `tresord --secret-service`, programs that speak the freedesktop Secret Service \
            (secret-tool, git's libsecret helper, Python keyring, browsers) keep their secrets in \
            Tresor. Each executable sees only the items it created: a program installed by the \
            system (owned by root) is known by its path, so upgrades keep its items; any other by \
            the SHA-256 of its file. Interpreters are one program: every Python script shares \
            python3's items. `allow` lets one executable use another's items; it needs the passcode.
            """,
        subcommands: [Owners.self, Allow.self, Revoke.self, SecretServiceTrustCommand.self])

    struct Owners: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "owners", abstract: "List which executable owns which item, and the grants.")
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let response = try options.connect().secretServiceOwners()
                if options.json { return Output.json(response) }
                if response.owners.isEmpty { print("No Secret Service items.") }
                // Labels are what each client chose: shown so that none draws on the terminal.
                for owner in response.owners {
                    print(TerminalText.printable(owner.owner))
                    for item in owner.items { print("  \(item.id)  \(TerminalText.printable(item.label))") }
                }
                for grant in response.grants {
                    let what = grant.group.map { "group \($0)" } ?? "item \(grant.item ?? "")"
                    print(TerminalText.printable("granted: \(grant.grantee) may use \(what)"))
                }
            }
        }
    }

    struct Change: ParsableArguments {
        @Option(help: "The executable to let in (or shut out).") var exe: String
        @Option(help: "The executable whose items it may use.") var owner: String?
        @Option(help: "An access group named directly (an exe-sha256:… group from `owners`, or an application id).") var group: String?
        @Option(help: "One item, by the id `owners` shows.") var item: String?
        @Flag(help: "Read the passcode from standard input.") var passcodeStdin = false

        func validate() throws {
            guard [owner, group, item].compactMap({ $0 }).count == 1 else { throw ValidationError("name one of --owner, --group or --item") }
        }
    }

    struct Allow: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "allow", abstract: "Let an executable use another executable's items (asks for the passcode).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var change: Change
        func run() throws { try SecretServiceCommand.apply(change, revoke: false, options: options) }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Take a grant back (asks for the passcode).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var change: Change
        func run() throws { try SecretServiceCommand.apply(change, revoke: true, options: options) }
    }

    static func apply(_ change: Change, revoke: Bool, options: GlobalOptions) throws {
        try Output.run(options) {
            let executable = try existingExecutable(change.exe)
            let client = try options.connect()
            let passcode = try client.passcodeAgainIfSet(
                stdin: change.passcodeStdin, prompt: "Passcode (to change what \(change.exe) may read):")
            let absolute = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.path }
            let grants = try client.grantSecretService(
                executablePath: executable, ownerPath: change.owner.map(absolute), group: change.group, itemID: change.item,
                revoke: revoke, passcode: passcode)
            if options.json { return Output.json(grants) }
            print(revoke ? "Revoked." : "Allowed.")
        }
    }
}
