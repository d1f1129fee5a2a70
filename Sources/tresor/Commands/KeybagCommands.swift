import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the keybag of a new home, with a passcode or without one.",
        discussion: """
            Creates the home (mode 0700), its device key and one class key per protection class. \
            With a passcode, the keybag starts locked whenever the daemon starts and opens with \
            `tresor unlock`. Without one (--no-passcode), keys are protected by the device key \
            alone and whenPasscodeSetThisDeviceOnly items cannot be stored.
            """)

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Set no passcode.") var noPasscode = false
    @Flag(help: "Read the new passcode from standard input (a second line, if given, must repeat it).")
    var passcodeStdin = false

    func validate() throws {
        if noPasscode && passcodeStdin { throw ValidationError("--no-passcode and --passcode-stdin exclude each other") }
    }

    func run() throws {
        try Output.run(options) {
            let client = try options.connect(makingHome: true)
            // Said before a passcode is asked for: a home that has a keybag keeps it.
            let current = try client.status()
            guard current.keybag == .notInitialized else {
                throw APIError(
                    .alreadyInitialized,
                    "this home already has a keybag (\(current.home)): tresor unlock opens it; another home is --home DIR")
            }
            var input = SecretInput(fromStandardInput: passcodeStdin)
            let passcode = noPasscode ? nil : try input.newPasscode("New passcode:")
            let status = try client.initialize(passcode: passcode)
            if options.json { return Output.json(status) }
            print("Created the keybag in \(status.home) (\(status.passcodeSet ? "passcode set" : "no passcode")); it is \(status.keybag.text).")
        }
    }
}

struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the keybag with the passcode.",
        discussion: """
            Wrong passcodes are counted, across daemon restarts; from the fifth, each further attempt \
            must wait (1 min, 5 min, 15 min, … 1 h).

            Reading a secret with tresor needs you present: the passcode each time, or a terminal \
            session. `tresor unlock --for 10m` opens one, like sudo's: for ten minutes, tresor run \
            from this terminal (and only this one) reveals secrets without asking. It ends earlier \
            when the keybag locks (`tresor lock`, auto-lock) or the passcode changes.
            """)

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Read the passcode from the first line of standard input.") var passcodeStdin = false
    @Option(help: "Unlock this created keychain instead of the login keybag.") var keychain: String?
    @Option(
        name: .customLong("for"), help: "Also open a terminal session this long: 90s, 10m, 1h (at most 1h).",
        completion: .list(["5m", "10m", "30m", "1h"]), transform: { try TimeSpan($0, option: "--for", atMost: TerminalSessionInfo.longestSeconds) })
    var terminalSession: TimeSpan?

    func run() throws {
        try Output.run(options) {
            let client = try options.connect()
            var passcode: String?
            if try keychain != nil || client.status().passcodeSet {
                var input = SecretInput(fromStandardInput: passcodeStdin)
                passcode = try input.next(keychain.map { "Passcode of \($0):" } ?? "Passcode:")
            }
            let status =
                try terminalSession.map { try client.unlock(passcode: passcode, keychain: keychain, terminalSessionSeconds: $0.seconds) }
                ?? client.unlock(passcode: passcode, keychain: keychain)
            if options.json { return Output.json(status) }
            print(keychain.map { "Keychain \($0) unlocked." } ?? "Keybag \(status.keybag.text).")
            if let terminalSession {
                print("Secrets are readable from this terminal without the passcode for \(terminalSession) (until a lock).")
            }
        }
    }
}

struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Lock the keybag now.",
        discussion:
            """
            Locks every keychain, or only --keychain NAME. whenUnlocked keys leave the daemon's memory; afterFirstUnlock and always \
            keys stay — so notes, which are afterFirstUnlock, stay readable until the daemon stops (a locked note needs its \
            passphrase: tresor note lock-now closes its session).
            """)

    @OptionGroup var options: GlobalOptions
    @Option(help: "Lock only this keychain (login or a created one).") var keychain: String?

    func run() throws {
        try Output.run(options) {
            let status = try options.connect().lock(keychain: keychain)
            if options.json { return Output.json(status) }
            print(keychain.map { "Keychain \($0) locked." } ?? "Keybag \(status.keybag.text).")
        }
    }
}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the keybag's state, auto-lock and who holds it off.")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        try Output.run(options) {
            let client = try options.connect()
            let status = try client.status()
            if options.json { return Output.json(status) }
            // Best effort: a sync account that cannot be read leaves the line out, not the status.
            print(StatusText(status, sync: try? client.syncStatus()).rendered)
        }
    }
}

struct PasscodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passcode",
        abstract: "Set, change or remove the passcode; link it to the login password.",
        subcommands: [Change.self, Remove.self, LinkLogin.self, UnlinkLogin.self])

    struct Change: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "change",
            abstract: "Set a first passcode or change it.",
            discussion: """
                Re-wraps the class keys under the new passcode; no item is re-encrypted. With \
                --passcode-stdin give one per line: the current passcode (if one is set), the new \
                one, and optionally the new one again.
                """)

        @OptionGroup var options: GlobalOptions
        @Flag(help: "Read the passcodes from standard input, one per line.") var passcodeStdin = false
        @Option(help: "Change the passcode of this created keychain instead of the login keybag's.") var keychain: String?

        func run() throws {
            try Output.run(options) {
                let client = try options.connect()
                var input = SecretInput(fromStandardInput: passcodeStdin)
                let current = try keychain != nil || client.status().passcodeSet ? try input.next("Current passcode:") : nil
                let new = try input.newPasscode("New passcode:")
                let status = try client.changePasscode(current: current, new: new, keychain: keychain)
                if options.json { return Output.json(status) }
                print(current == nil ? "Passcode set." : "Passcode changed.")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove the passcode.",
            discussion: """
                Class keys are then protected by the device key alone. The \
                whenPasscodeSetThisDeviceOnly class key is destroyed: its items can never be read again.
                """)

        @OptionGroup var options: GlobalOptions
        @Flag(help: "Read the current passcode from standard input.") var passcodeStdin = false

        func run() throws {
            try Output.run(options) {
                var input = SecretInput(fromStandardInput: passcodeStdin)
                let current = try input.next("Current passcode:")
                let status = try options.connect().removePasscode(current: current)
                if options.json { return Output.json(status) }
                print("Passcode removed; whenPasscodeSetThisDeviceOnly items are gone.")
            }
        }
    }
}
