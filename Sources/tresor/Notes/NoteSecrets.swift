import ArgumentParser
import Dispatch
import FoundationEssentials
import TresorKit
import TresorSystem

/// Where a notes command's secrets come from: the terminal (echo off), or standard input one
/// per line in the order they are asked — `--passphrase-stdin`, or `--passcode-stdin` when the
/// first secret is the passcode.
struct NoteSecretOptions: ParsableArguments {
    @Flag(help: "Read passphrases from standard input, one per line, in the order they are asked.")
    var passphraseStdin = false

    @Flag(
        help:
            "Read the passcode first (to open the notes key kept in the keychain with user presence, or for a reset), then any passphrases, from standard input."
    )
    var passcodeStdin = false

    @Option(
        name: .customLong("passphrase-fd"),
        help: ArgumentHelp(
            "Read passphrases from this file descriptor instead, one per line.",
            discussion:
                "For a script whose standard input carries the note: tresor note edit ID --body-stdin --passphrase-fd 3 <body 3<passphrase-file.",
            valueName: "fd"))
    var passphraseDescriptor: Int32?

    /// Whether secrets come from standard input (not the terminal, nor another descriptor).
    var fromStandardInput: Bool { passphraseStdin || passcodeStdin || passphraseDescriptor == 0 }

    /// Whether secrets come from standard input or a descriptor: nothing is asked on the terminal.
    var fromInput: Bool { fromStandardInput || passphraseDescriptor != nil }

    func validate() throws {
        guard let passphraseDescriptor else { return }
        if passphraseStdin || passcodeStdin { throw ValidationError("--passphrase-fd and --passphrase-stdin or --passcode-stdin exclude each other") }
        if passphraseDescriptor < 0 { throw ValidationError("--passphrase-fd is a file descriptor: 0 or more") }
    }

    func input() -> SecretInput {
        if let passphraseDescriptor { return SecretInput(fileDescriptor: passphraseDescriptor) }
        let flag = passcodeStdin ? "--passcode-stdin" : "--passphrase-stdin (or --passphrase-fd N where standard input carries the note)"
        return SecretInput(fromStandardInput: fromStandardInput, flag: flag)
    }
}

/// Asks for a locked note's passphrase when the daemon says it needs it, and tries again.
struct NoteUnlocker {
    let notes: Notes
    let options: NoteSecretOptions
    private var input: SecretInput
    private var passcodeUsed = false

    init(notes: Notes, options: NoteSecretOptions) {
        self.notes = notes
        self.options = options
        input = options.input()
    }

    /// Whether secrets are typed on a terminal (not read from standard input).
    var interactive: Bool { !options.fromInput && Terminal.available }

    /// The next secret, as the prompt says.
    mutating func next(_ prompt: String) throws -> String { try input.next(prompt) }

    /// A new passphrase, twice on a terminal.
    mutating func new(_ prompt: String) throws -> String { try input.new(prompt) }

    /// A passphrase hint, from the same input as the secrets (``SecretInput/hint()``).
    mutating func hint() throws -> String? { try input.hint() }

    /// Runs `body` without a passphrase; if a locked note needs one, asks for it — saying
    /// which passphrase (an earlier one: with its hint and date) — and runs `body` with it.
    /// On a terminal a wrong passphrase may be typed again, up to three times in all.
    mutating func withPassphrase<T>(_ body: (String?) throws -> T) throws -> T {
        do {
            return try body(nil)
        } catch NotesClientError.passphraseRequired(let lock) {
            return try retry(lock, body)
        }
    }

    private mutating func retry<T>(_ lock: LockInfo, _ body: (String?) throws -> T) throws -> T {
        // Without a terminal and without an input of secrets, the daemon's explanation is the answer.
        guard options.fromInput || Terminal.available else { throw NotesClientError.passphraseRequired(lock) }
        if lock.isCurrent, !passcodeUsed, try wantsPasscode() {
            passcodeUsed = true
            try notes.openSession(passcode: try input.next("Passcode (to use the notes key kept in the keychain):"))
            return try withPassphrase(body)
        }
        let prompt = lock.isCurrent ? "Notes passphrase:" : "\(lock.explanation.prefix(1).uppercased())\(lock.explanation.dropFirst()).\nPassphrase:"
        var attempts = 1
        while true {
            let passphrase = try input.next(prompt)
            do {
                return try body(passphrase)
            } catch let error as NotesClientError {
                guard interactive, attempts < 3, case .wrongPassphrase(_, _, nil) = error else { throw error }
                StandardStream.error.write("tresor: \(error)\n")
                attempts += 1
            }
        }
    }

    /// Whether to ask for the passcode instead: `--passcode-stdin`, or on a terminal when the
    /// notes key is kept in the keychain behind user presence.
    private func wantsPasscode() throws -> Bool {
        if options.passcodeStdin { return true }
        guard interactive else { return false }
        let status = try notes.passphraseStatus()
        return status.status.keychainUnlock && status.keychainUserPresence == true
    }
}

/// Runs `body` on another thread while `poll` is called every 100 ms on this one; returns
/// `body`'s result. For progress bars fed from a second connection.
func whilePolling<T>(_ body: @escaping () throws -> T, poll: () -> Void) throws -> T {
    let box = ResultBox<T>()
    let work = UncheckedSendable(body)
    DetachedThread.start {
        box.result = Result { try work.value() }
        box.done.signal()
    }
    while box.done.wait(timeout: .now() + .milliseconds(100)) == .timedOut { poll() }
    return try box.result!.get()
}

/// A result handed from a worker thread to the waiting one; the semaphore orders the accesses.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
    let done = DispatchSemaphore(value: 0)
}

/// Hands a non-Sendable value to one other thread, which alone uses it from then on.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A one-line progress bar on standard error, for terminals only.
struct ProgressBar {
    let label: String
    private var shown = false

    init(label: String) { self.label = label }

    static var enabled: Bool { StandardStream.error.isTerminal }

    mutating func update(done: Int, total: Int) {
        guard total > 0 else { return }
        let width = 30, filled = min(width, done * width / total)
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        StandardStream.error.write("\r\(label) [\(bar)] \(done)/\(total)")
        shown = true
    }

    /// The bar for bytes of a known total (MiB), with how many items went by.
    mutating func updateBytes(done: Int, total: Int, items: Int) {
        guard total > 0 else { return }
        let width = 30, filled = min(width, Int(Double(done) * Double(width) / Double(total)))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        StandardStream.error.write("\r\(label) [\(bar)] \(done >> 20)/\(total >> 20) MiB, \(items) items")
        shown = true
    }

    func finish() {
        if shown { StandardStream.error.write("\n") }
    }
}
