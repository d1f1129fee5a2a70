import ArgumentParser
import FoundationEssentials
import TresorModel
import TresorSystem

/// Standard input, read once and handed out from the front: first whole lines (passcodes
/// with `--passcode-stdin`, the values of options given as `-`), then the rest (a secret, a
/// note's text). So one input carries metadata and a secret in a documented order: the
/// lines first, the secret — which may span lines — last.
///
/// Only the main thread reads it.
final class StandardInput: @unchecked Sendable {
    /// The process's standard input.
    static let shared = StandardInput()

    /// A line longer than this is refused (a passcode, a title, a label is far shorter).
    static let maximumLineBytes = 64 * 1024
    /// Standard input longer than this is refused, and read no further: twice the largest
    /// note body, the largest thing it carries, with room for the lines before it. Reading an
    /// endless input (`< /dev/zero`) to its end would take all memory.
    static let maximumBytes = 2 * 1024 * 1024

    private var data: Data?
    private var offset = 0

    /// Whether standard input is a terminal (then values are asked, not read).
    var isTerminal: Bool { StandardStream.input.isTerminal }

    /// The next line, without its newline (or `\r\n`), as UTF-8.
    /// - Parameter what: what the line holds, for the error (`"Passcode"`, `"the label"`).
    /// - Returns: the line; an empty line is an empty string.
    /// - Throws: `ValidationError` when standard input has no line left, or the line is not
    ///   UTF-8 or longer than ``maximumLineBytes``.
    func line(for what: String) throws -> String {
        guard let line = try nextLine(for: what) else {
            throw ValidationError("standard input has no line for \(what)")
        }
        return line
    }

    /// The next line, or nil at the end of standard input.
    /// - Parameter what: what the line holds, for the error.
    /// - Returns: the line, or nil when nothing is left.
    /// - Throws: `ValidationError` when the line is not UTF-8 or too long.
    func nextLine(for what: String) throws -> String? {
        let data = try loaded()
        guard offset < data.count else { return nil }
        let end = data[offset...].firstIndex(of: 0x0A) ?? data.endIndex
        var bytes = data[offset..<end]
        offset = end == data.endIndex ? end : end + 1
        if bytes.last == 0x0D { bytes = bytes.dropLast() }
        guard bytes.count <= Self.maximumLineBytes else { throw ValidationError("the line for \(what) is longer than 64 KiB") }
        guard let text = String(data: Data(bytes), encoding: .utf8) else { throw ValidationError("the line for \(what) is not UTF-8") }
        return text
    }

    /// Everything after the lines taken so far, as it is. Taking it leaves nothing.
    /// - Throws: `ValidationError` when standard input is longer than ``maximumBytes``.
    func rest() throws -> Data {
        let data = try loaded()
        defer { offset = data.count }
        return Data(data[offset...])
    }

    private func loaded() throws -> Data {
        if let data { return data }
        let read = StandardStream.input.readToEnd(upTo: Self.maximumBytes + 1)
        guard read.count <= Self.maximumBytes else {
            throw ValidationError("standard input holds more than \(ByteSize(Self.maximumBytes)): no secret or note is that large")
        }
        data = read
        return read
    }
}

/// Confidential text an option may carry — a note's title or folder, an item's label, words to
/// search for. Given as `-`, the option's value is not on the command line (where `ps` shows
/// it to every local user and the shell keeps it in its history): it is asked on the terminal
/// when standard input is one, else it is the next line of standard input. Commands read
/// such lines in the order their `--help` lists the options, before any secret or body.
enum AskedText {
    /// The value that means "ask for it".
    static let marker = "-"

    /// `value` itself, or — when it is `-` — asked for or read from standard input.
    /// - Parameters:
    ///   - value: what the option was given (nil: not given).
    ///   - prompt: the question on the terminal, e.g. `"Label:"`.
    ///   - oneLine: whether the value is a name shown on one line (a title, a folder, a file
    ///     name): a line break given in it is refused, as typed or read it never holds one.
    /// - Returns: the value, nil when the option was not given.
    /// - Throws: `ValidationError` when standard input has no line for it, or for a line break
    ///   in a one-line value.
    static func resolve(_ value: String?, prompt: String, oneLine: Bool = false) throws -> String? {
        guard value == marker else {
            if oneLine, let value, value.contains(where: \.isNewline) {
                throw ValidationError("\(what(prompt)) is one line: give it without a line break")
            }
            return value
        }
        let read = try read(prompt)
        ConcealedText.add(read)
        return read
    }

    /// "the title" for the prompt `"Title:"`.
    private static func what(_ prompt: String) -> String { "the " + prompt.trimming { $0 == ":" || $0 == " " }.lowercased() }

    /// Asks `prompt` on the terminal (echo on) when standard input is one, else reads the
    /// next line of standard input.
    /// - Parameter prompt: the question, e.g. `"Title:"`.
    /// - Returns: the text.
    /// - Throws: `ValidationError` when standard input has no line for it.
    static func read(_ prompt: String) throws -> String {
        let what = what(prompt)
        guard StandardInput.shared.isTerminal else { return try StandardInput.shared.line(for: what) }
        return try Terminal.ask(prompt + " ", echo: true, otherwise: "no terminal to ask \(what) on")
    }
}
