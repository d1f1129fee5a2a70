import ArgumentParser

/// `tresor`: the command-line client of the Tresor daemon.
@main
struct Tresor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tresor",
        abstract: "A keychain with protection classes and per-application access, and notes with locked notes, for Linux.",
        discussion: """
            tresor talks to tresord, the daemon that holds the keybag, and starts it when it is not \
            running. Secrets are never taken from the command line: they are asked for on the \
            terminal with echo off, or read one per line from standard input with --passcode-stdin.
            """,
        subcommands: [
            InitCommand.self, UnlockCommand.self, LockCommand.self, StatusCommand.self,
            PasscodeCommand.self, ItemCommand.self, ApproveCommand.self, KeychainCommand.self, AppCommand.self, SecretServiceCommand.self, NoteCommand.self, BackupCommand.self, ImportCommand.self, WidgetCommand.self, WebCommand.self, DoctorCommand.self,
        ])
}
