import ArgumentParser
import FoundationEssentials
import TresorKit

extension NoteCommand {
    struct PassphraseCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "passphrase",
            abstract: "Set, change, reset the notes passphrase; its hint; keeping its key in the keychain.",
            discussion: """
                The notes passphrase locks notes; it is not the passcode. After three wrong \
                entries its hint is shown; from the fifth, each further attempt must wait. With \
                --passphrase-stdin give the secrets one per line in the order they are asked \
                (current, new, new again).
                """,
            subcommands: [Status.self, SetPassphrase.self, Change.self, Reset.self, Hint.self, KeychainUnlock.self])

        struct Status: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "status", abstract: "Show whether a passphrase is set, its session, hint and keychain unlock.")
            @OptionGroup var options: GlobalOptions

            func run() throws {
                try Output.run(options) {
                    let status = try options.notes().passphraseStatus()
                    if options.json { return Output.json(status) }
                    print(NoteText.passphraseStatus(status))
                }
            }
        }

        struct SetPassphrase: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "set", abstract: "Set the first notes passphrase (asked twice).")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var secrets: NoteSecretOptions
            @Flag(
                help: ArgumentHelp(
                    "Give a hint too, shown after three wrong entries (it must not contain the passphrase): asked after the passphrase, or the line after it on standard input.",
                    discussion: "Never on the command line, where every local user could read it."))
            var hint = false

            func run() throws {
                try Output.run(options) {
                    let notes = try options.notes()
                    // Refused before it is asked for and warned about: a set passphrase is changed, not set.
                    if try notes.passphraseStatus().status.isSet {
                        throw APIError(.passphraseAlreadySet, "a notes passphrase is set already")
                    }
                    var input = secrets.input()
                    let passphrase = try input.newNotesPassphrase()
                    let text = hint ? try input.hint() : nil
                    let status = try notes.setPassphrase(passphrase, hint: text)
                    if options.json { return Output.json(status) }
                    print("Notes passphrase set.")
                }
            }
        }

        struct Change: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "change",
                abstract: "Change the notes passphrase (current, new, new again).",
                discussion: """
                    Re-wraps the key of every note locked with it — no content is re-encrypted — \
                    in one transaction. The current passphrase must be typed: an open session or \
                    the key kept in the keychain is not accepted.
                    """)
            @OptionGroup var options: GlobalOptions
            @OptionGroup var secrets: NoteSecretOptions
            @Flag(help: "Give a new hint: the line after the new passphrase on standard input (on a terminal a new hint is always asked).")
            var hint = false
            @Flag(help: "Remove the hint.") var noHint = false

            func validate() throws {
                if hint && noHint { throw ValidationError("--hint and --no-hint exclude each other") }
            }

            func run() throws {
                try Output.run(options) {
                    var input = secrets.input()
                    let current = try input.next("Current notes passphrase:")
                    let new = try input.newNotesPassphrase()
                    // A hint describes a passphrase: on a terminal the new one gets a hint of its own,
                    // asked (empty for none). A script keeps the old one unless it says otherwise.
                    let asks = hint || !input.fromStandardInput
                    let change: String?? = noHint ? .some(nil) : asks ? .some(try input.hint()) : nil
                    let notes = try options.notes()
                    let status: NotesPassphraseStatus
                    if ProgressBar.enabled && !options.json {
                        status = try Self.withProgress(options, UncheckedSendable(notes)) {
                            try $0.changePassphrase(current: current, new: new, hint: change)
                        }
                    } else {
                        status = try notes.changePassphrase(current: current, new: new, hint: change)
                    }
                    if options.json { return Output.json(status) }
                    print("Notes passphrase changed.")
                    if change == nil && status.status.hasHint {
                        StandardStream.error.write("The old hint was kept: give a new one with --hint, or remove it with --no-hint.\n")
                    }
                }
            }

            /// Runs the change on another thread and draws its progress, polled from a second connection.
            static func withProgress(
                _ options: GlobalOptions, _ notes: UncheckedSendable<Notes>, _ change: @escaping (Notes) throws -> NotesPassphraseStatus
            ) throws -> NotesPassphraseStatus {
                let observer = try? options.notes()
                var bar = ProgressBar(label: "Re-wrapping note keys")
                defer { bar.finish() }
                return try whilePolling({ try change(notes.value) }) {
                    guard let progress = try? observer?.passphraseChangeProgress(), progress.running else { return }
                    bar.update(done: progress.done, total: progress.total)
                }
            }
        }

        struct Reset: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "reset",
                abstract: "Reset a forgotten notes passphrase with the passcode (passcode, new, new again).",
                discussion: """
                    The new passphrase locks notes from now on. Notes locked before keep their \
                    passphrase: they still open with it, and say so ("locked with an earlier \
                    passphrase"); `tresor note rewrap` moves them to the new one.
                    """)
            @OptionGroup var options: GlobalOptions
            @OptionGroup var secrets: NoteSecretOptions
            @Flag(help: "Give a hint for the new passphrase: asked after it, or the line after it on standard input.") var hint = false

            func run() throws {
                try Output.run(options) {
                    let client = try options.connect()
                    var input = secrets.input()
                    let passcode = try client.status().passcodeSet ? try input.next("Passcode:") : nil
                    let new = try input.newNotesPassphrase()
                    let text = hint ? try input.hint() : nil
                    let status = try Notes(client: client).resetPassphrase(passcode: passcode, new: new, hint: text)
                    if options.json { return Output.json(status) }
                    print("Notes passphrase reset: notes locked from now on use the new one (generation \(status.status.generation ?? 0)).")
                }
            }
        }

        struct Hint: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "hint", abstract: "Show the passphrase's hint, or replace or remove it.")
            @OptionGroup var options: GlobalOptions
            @OptionGroup var secrets: NoteSecretOptions
            @Flag(
                name: .customLong("set"),
                help:
                    "Replace the hint: the hint is asked first (or is the first line of standard input), then the passphrase, which must be typed (or is the next line)."
            )
            var set = false
            @Flag(help: "Remove the hint.") var clear = false

            func validate() throws {
                if set && clear { throw ValidationError("--set and --clear exclude each other") }
            }

            func run() throws {
                try Output.run(options) {
                    let notes = try options.notes()
                    guard set || clear else {
                        let hint = try notes.hint()
                        if options.json { return Output.json(HintOutput(hint: hint)) }
                        return print(hint.map { "Hint: \($0)" } ?? "No hint is set.")
                    }
                    var unlocker = NoteUnlocker(notes: notes, options: secrets)
                    let newHint = set ? try unlocker.hint() : nil
                    let status = try unlocker.withPassphrase { try notes.setHint(newHint, passphrase: $0) }
                    if options.json { return Output.json(status) }
                    print(clear ? "Hint removed." : "Hint set.")
                }
            }

            struct HintOutput: Encodable { var hint: String? }
        }

        struct KeychainUnlock: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "keychain",
                abstract: "Keep the passphrase's key in the login keychain (on), or stop (off).",
                discussion: """
                    With it on, locked notes open without the passphrase while the keybag is \
                    unlocked — the Linux analogue of Touch ID. --user-presence makes every such \
                    opening ask for the passcode. Never accepted to change the passphrase.
                    """)

            enum Setting: String, ExpressibleByArgument, CaseIterable { case on, off }

            @OptionGroup var options: GlobalOptions
            @OptionGroup var secrets: NoteSecretOptions
            @Argument(help: "on or off.") var setting: Setting
            @Flag(help: "Opening notes through the keychain needs the passcode each time.") var userPresence = false

            func run() throws {
                try Output.run(options) {
                    let notes = try options.notes()
                    let status: NotesPassphraseStatus
                    switch setting {
                    case .on:
                        var input = secrets.input()
                        status = try notes.setKeychainUnlock(true, passphrase: try input.next("Notes passphrase:"), userPresence: userPresence)
                    case .off:
                        status = try notes.setKeychainUnlock(false)
                    }
                    if options.json { return Output.json(status) }
                    print(setting == .on ? "The notes key is kept in the keychain." : "The notes key is no longer kept in the keychain.")
                }
            }
        }
    }
}

extension SecretInput {
    /// A new notes passphrase, typed twice, warned about when short (``newPassphrase(_:guarding:)``).
    fileprivate mutating func newNotesPassphrase() throws -> String {
        try newPassphrase("New notes passphrase:", guarding: "a locked note (a backup or a server holds one)")
    }
}
