import ArgumentParser
import FoundationEssentials
import TresorSystem
#if canImport(Glibc)
import Glibc
#endif

/// Where secrets come from: one per line on standard input (`--passcode-stdin`), or a prompt
/// on the terminal with echo off. Never from an argument, where `ps` would show it.
struct SecretInput {
    /// Lines come from this descriptor; nil means the terminal.
    private let descriptor: Int32?
    private var lines: [String]?
    /// The option that feeds standard input, named when there is no terminal to ask on.
    private var flag = "--passcode-stdin"

    var fromStandardInput: Bool { descriptor != nil }

    init(fromStandardInput: Bool) {
        descriptor = fromStandardInput ? 0 : nil
    }

    /// Secrets from standard input when `fromStandardInput`, else from the terminal; `flag`
    /// is the option to name when there is no terminal.
    init(fromStandardInput: Bool, flag: String) {
        descriptor = fromStandardInput ? 0 : nil
        self.flag = flag
    }

    /// Secrets from another descriptor (`--passcode-fd 3`), when standard input carries data.
    init(fileDescriptor: Int32) {
        descriptor = fileDescriptor
    }

    /// The next secret: the next line of standard input, or what the user types after `prompt`.
    mutating func next(_ prompt: String) throws -> String {
        guard fromStandardInput else { return try Self.promptWithoutEcho(prompt, flag: flag) }
        if lines == nil { lines = try Self.readLines(descriptor ?? 0) }
        guard let line = lines?.first else {
            let what = prompt.trimming { $0 == ":" || $0 == " " }
            throw ValidationError("standard input has no line for \"\(what)\"")
        }
        lines?.removeFirst()
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
            if lines == nil { lines = try Self.readLines(descriptor ?? 0) }
            guard let again = lines?.first else { return first }
            lines?.removeFirst()
            guard again == first else { throw ValidationError("the two new \(what(prompt))s differ") }
            return first
        }
        guard try next(prompt.replacing(":", with: " again:")) == first else {
            throw ValidationError("the two new \(what(prompt))s differ")
        }
        return first
    }

    /// Whether a terminal is there to ask on (`/dev/tty` opens).
    static var terminalAvailable: Bool {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { return false }
        close(tty)
        return true
    }

    /// Asks a yes/no question on the terminal (echo on); false without a terminal.
    static func confirm(_ question: String) -> Bool {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { return false }
        defer { close(tty) }
        _ = question.withCString { write(tty, $0, strlen($0)) }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(tty, &byte, 1) == 1, byte != 0x0A, bytes.count < 64 { bytes.append(byte) }
        let answer = String(decoding: bytes, as: UTF8.self).trimmingWhitespace().lowercased()
        return answer == "y" || answer == "yes"
    }

    /// "passcode" or "passphrase", from the prompt.
    private func what(_ prompt: String) -> String { prompt.lowercased().contains("passphrase") ? "passphrase" : "passcode" }

    private static func readLines(_ descriptor: Int32) throws -> [String] {
        let data = Data(readingToEndOf: descriptor)
        guard data.count <= 64 * 1024 else { throw ValidationError("the secret input is larger than 64 KiB") }
        guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("the secret input is not UTF-8") }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.hasSuffix("\r") ? $0.dropLast() : $0) }
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    private static func promptWithoutEcho(_ prompt: String, flag: String) throws -> String {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else {
            throw ValidationError("no terminal to ask on; pass the secret on standard input with \(flag)")
        }
        defer { close(tty) }
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        var saved = termios()
        let isTerminal = tcgetattr(tty, &saved) == 0
        if isTerminal {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(tty, TCSAFLUSH, &silent)
        }
        defer {
            if isTerminal { tcsetattr(tty, TCSAFLUSH, &saved) }
            _ = write(tty, "\n", 1)
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(tty, &byte, 1) == 1, byte != 0x0A {
            bytes.append(byte)
            guard bytes.count <= 4096 else { throw ValidationError("input too long") }
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
