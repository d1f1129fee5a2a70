import ArgumentParser
import FoundationEssentials
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// Where secrets come from: one per line on standard input (`--passcode-stdin`), or a prompt
/// on the terminal with echo off. Never from an argument, where `ps` would show it.
struct SecretInput {
    /// Lines come from standard input (``StandardInput``), from another descriptor, or — when
    /// neither — the terminal.
    private enum Source {
        case terminal
        case standardInput
        case descriptor(Int32)
    }

    private let source: Source
    /// A descriptor's lines, read at the first secret.
    private var descriptorLines: [String]?
    /// The option that feeds standard input, named when there is no terminal to ask on.
    private var flag = "--passcode-stdin"

    var fromStandardInput: Bool {
        if case .terminal = source { return false }
        return true
    }

    init(fromStandardInput: Bool) {
        source = fromStandardInput ? .standardInput : .terminal
    }

    /// Secrets from standard input when `fromStandardInput`, else from the terminal; `flag`
    /// is the option to name when there is no terminal.
    init(fromStandardInput: Bool, flag: String) {
        source = fromStandardInput ? .standardInput : .terminal
        self.flag = flag
    }

    /// Secrets from another descriptor (`--passcode-fd 3`), when standard input carries data.
    init(fileDescriptor: Int32) {
        source = fileDescriptor == 0 ? .standardInput : .descriptor(fileDescriptor)
    }

    /// The next secret: the next line of standard input, or what the user types after `prompt`.
    mutating func next(_ prompt: String) throws -> String {
        guard let line = try nextLine(prompt) else {
            throw ValidationError("standard input has no line for \"\(what(prompt))\"")
        }
        return line
    }

    /// A passphrase hint: the next line of standard input, or asked on the terminal (echo off
    /// too — it is confidential, if not secret); never an argument. Empty means none.
    mutating func hint() throws -> String? {
        let text = try next("Hint (shown after three wrong entries; empty for none):")
        return text.isEmpty ? nil : text
    }

    /// A new secret, typed twice on a terminal. On standard input the second line is
    /// optional but, when present, must match.
    mutating func new(_ prompt: String) throws -> String {
        let first = try next(prompt)
        if fromStandardInput {
            guard let again = try nextLine(prompt) else { return first }
            guard again == first else { throw ValidationError("the two new \(kind(prompt))s differ") }
            return first
        }
        guard try next(prompt.replacing(":", with: " again:")) == first else {
            throw ValidationError("the two new \(kind(prompt))s differ")
        }
        return first
    }

    /// The fewest characters advised for a passphrase that guards what anyone holding a copy
    /// can guess offline: a locked note, a backup (the web client advises the same).
    static let passphraseCharactersAdvised = 8

    /// A new passphrase guarding `what`, guessable offline by whoever holds a copy: as
    /// ``new(_:)``, and a short one is taken with a warning on standard error (its length
    /// only, never the passphrase).
    mutating func newPassphrase(_ prompt: String, guarding what: String) throws -> String {
        let passphrase = try new(prompt)
        Self.warnIfShort(passphrase, called: "passphrase", advised: Self.passphraseCharactersAdvised, by: "whoever gets a copy of \(what)")
        return passphrase
    }

    /// The fewest characters advised for a keybag's passcode: it is tried offline by a program
    /// of the user's that copies the home and the device key (each try one KDF run, never
    /// throttled there), so it needs more than Apple's four digits, which the hardware guards.
    static let passcodeCharactersAdvised = 6

    /// A new passcode: as ``new(_:)``, and a short one is taken with a warning on standard error
    /// (its length only, never the passcode).
    mutating func newPasscode(_ prompt: String) throws -> String {
        let passcode = try new(prompt)
        Self.warnIfShort(
            passcode, called: "passcode", advised: Self.passcodeCharactersAdvised, by: "a program of yours that copies the home and its device key")
        return passcode
    }

    private static func warnIfShort(_ secret: String, called name: String, advised: Int, by whom: String) {
        let count = secret.count
        // An empty one is refused, not warned about.
        guard count > 0, count < advised else { return }
        StandardStream.error.write(
            "warning: a \(name) of \(count) character\(count == 1 ? "" : "s") is guessed quickly by \(whom): use \(advised) or more, or a few words.\n"
        )
    }

    private mutating func nextLine(_ prompt: String) throws -> String? {
        switch source {
        case .terminal:
            return try Terminal.ask(
                prompt.hasSuffix(" ") ? prompt : prompt + " ", echo: false,
                otherwise: "no terminal to ask on; pass the \(kind(prompt)) on standard input with \(flag)")
        case .standardInput:
            return try StandardInput.shared.nextLine(for: "\"\(what(prompt))\"")
        case .descriptor(let descriptor):
            if descriptorLines == nil { descriptorLines = try Self.readLines(descriptor) }
            return descriptorLines?.isEmpty == false ? descriptorLines?.removeFirst() : nil
        }
    }

    /// The prompt without its colon: what the line holds.
    private func what(_ prompt: String) -> String { prompt.trimming { $0 == ":" || $0 == " " } }

    /// "passcode", "passphrase" or "secret", from the prompt.
    private func kind(_ prompt: String) -> String {
        let lowered = prompt.lowercased()
        return lowered.contains("passphrase") ? "passphrase" : lowered.contains("passcode") ? "passcode" : "secret"
    }

    private static func readLines(_ descriptor: Int32) throws -> [String] {
        guard fcntl(descriptor, F_GETFD) != -1 else {
            throw ValidationError("file descriptor \(descriptor) is not open: give the secrets on it, e.g. 3<file")
        }
        let data = Data(readingToEndOf: descriptor)
        guard data.count <= 64 * 1024 else { throw ValidationError("the secret input is larger than 64 KiB") }
        guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("the secret input is not UTF-8") }
        // "\r\n" is one Character to Swift: split on both, as standard input's lines are.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}
