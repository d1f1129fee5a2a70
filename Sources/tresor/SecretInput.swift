import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where secrets come from: one per line on standard input (`--passcode-stdin`), or a prompt
/// on the terminal with echo off. Never from an argument, where `ps` would show it.
struct SecretInput {
    /// Lines come from this descriptor; nil means the terminal.
    private let descriptor: Int32?
    private var lines: [String]?

    private var fromStandardInput: Bool { descriptor != nil }

    init(fromStandardInput: Bool) {
        descriptor = fromStandardInput ? 0 : nil
    }

    /// Secrets from another descriptor (`--passcode-fd 3`), when standard input carries data.
    init(fileDescriptor: Int32) {
        descriptor = fileDescriptor
    }

    /// The next secret: the next line of standard input, or what the user types after `prompt`.
    mutating func next(_ prompt: String) throws -> String {
        guard fromStandardInput else { return try Self.promptWithoutEcho(prompt) }
        if lines == nil { lines = try Self.readLines(descriptor ?? 0) }
        guard let line = lines?.first else {
            let what = prompt.trimmingCharacters(in: CharacterSet(charactersIn: ": "))
            throw ValidationError("standard input has no line for \"\(what)\"")
        }
        lines?.removeFirst()
        return line
    }

    /// A new secret, typed twice on a terminal. On standard input the second line is
    /// optional but, when present, must match.
    mutating func new(_ prompt: String) throws -> String {
        let first = try next(prompt)
        if fromStandardInput {
            if lines == nil { lines = try Self.readLines(descriptor ?? 0) }
            guard let again = lines?.first else { return first }
            lines?.removeFirst()
            guard again == first else { throw ValidationError("the two new passcodes differ") }
            return first
        }
        guard try next(prompt.replacingOccurrences(of: ":", with: " again:")) == first else {
            throw ValidationError("the two new passcodes differ")
        }
        return first
    }

    private static func readLines(_ descriptor: Int32) throws -> [String] {
        let data = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readDataToEndOfFile()
        guard data.count <= 64 * 1024 else { throw ValidationError("the secret input is larger than 64 KiB") }
        guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("the secret input is not UTF-8") }
        var lines = text.components(separatedBy: "\n").map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    private static func promptWithoutEcho(_ prompt: String) throws -> String {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else {
            throw ValidationError("no terminal to ask on; pass the secret on standard input with --passcode-stdin")
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
