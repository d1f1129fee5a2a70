import ArgumentParser
import TresorProtocol

/// `tresor`: the command-line client of the Tresor daemon.
@main
struct Tresor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tresor",
        abstract: "A keychain with protection classes and per-application access, and notes with locked notes, for Linux.",
        discussion: """
            tresor talks to tresord, the daemon that holds the keybag, and starts it when it is not \
            running. Secrets are never taken from the command line: they are asked for on the \
            terminal with echo off, or read one per line from standard input with --passcode-stdin. \
            Confidential names — a note's title, an item's label — are asked for too when an \
            option is given as -. --home, --json and --verbose go before or after the command.
            Completion for bash, zsh and fish: tresor --generate-completion-script bash (docs/CLI.md).
            """,
        version: TresorVersion.current,
        subcommands: [
            InitCommand.self, UnlockCommand.self, LockCommand.self, StatusCommand.self,
            PasscodeCommand.self, ItemCommand.self, ApproveCommand.self, KeychainCommand.self, AppCommand.self,
            SecretServiceCommand.self, NoteCommand.self, BackupCommand.self, ImportCommand.self, WidgetCommand.self, WebCommand.self,
            ServerCommand.self, SyncCommand.self, DaemonCommand.self, DoctorCommand.self, ClearClipboardCommand.self, PAMHelperCommand.self,
        ])

    /// Parses and runs the command line after moving global options that come before the
    /// command's name behind it (``CommandLineWords/arranged(_:)``), and after checking that the
    /// command names exist — a mistyped one gets "did you mean …".
    static func main() {
        if let index = CommandLineWords.firstNotUTF8() {
            StandardStream.error.write("tresor: argument \(index) is not UTF-8 text: give names and values in UTF-8\n")
            Self.exit(withError: ExitCode.validationFailure)
        }
        // The lookup scripts run most, read without the command tree (``SecretLookup``).
        if let lookup = SecretLookup(commandLine: Array(CommandLine.arguments.dropFirst())) {
            do {
                try Output.run(json: false, verbose: lookup.verbose, keychain: lookup.keychain) { try lookup.run() }
            } catch {
                Self.exit(withError: error)
            }
            return
        }
        let arguments = CommandLineWords.arranged(Array(CommandLine.arguments.dropFirst()))
        if arguments == ["--generate-completion-script", "fish"] || arguments == ["--generate-completion-script=fish"] {
            return print(Completion.fishScript, terminator: "")
        }
        if let unknown = CommandLineWords.unknownCommand(in: arguments) {
            StandardStream.error.write("tresor: \(unknown)\n")
            Self.exit(withError: ExitCode.validationFailure)
        }
        guard arguments.contains("--json") else { return main(arguments) }
        // With --json a command line that does not parse fails as JSON too, as every other
        // failure does (docs/CLI-JSON.md); --help and --version print as usual.
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            guard exitCode(for: error) != .success else { Self.exit(withError: error) }
            Output.json(failure: APIError(.param, message(for: error)))
            Self.exit(withError: ExitCode.validationFailure)
        }
        do {
            try command.run()
        } catch {
            Self.exit(withError: error)
        }
    }
}
