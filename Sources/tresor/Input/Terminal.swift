import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The user's terminal (`/dev/tty`): questions asked there, with or without echo, whatever
/// standard input and output are.
enum Terminal {
    /// Whether a terminal is there to ask on (`/dev/tty` opens).
    static var available: Bool {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { return false }
        close(tty)
        return true
    }

    /// Asks `prompt` and returns the line typed (at most 4096 bytes, without its newline).
    /// - Parameters:
    ///   - prompt: written to the terminal first.
    ///   - echo: false for secrets: what is typed is not shown.
    ///   - otherwise: what to say when there is no terminal (the option that gives the value
    ///     another way).
    /// - Returns: the line.
    /// - Throws: `ValidationError` with `otherwise` when there is no terminal, or when the line
    ///   is too long.
    static func ask(_ prompt: String, echo: Bool, otherwise: String) throws -> String {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { throw ValidationError(otherwise) }
        defer { close(tty) }
        StandardStream.showPrinted()  // what the question is about comes before it
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        var saved = termios()
        let silence = !echo && tcgetattr(tty, &saved) == 0
        if silence {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(tty, TCSAFLUSH, &silent)
        }
        defer {
            if silence {
                tcsetattr(tty, TCSAFLUSH, &saved)
                _ = write(tty, "\n", 1)
            }
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

    /// Asks a yes/no question (echo on); false without a terminal.
    static func confirm(_ question: String) -> Bool {
        guard let answer = try? ask(question, echo: true, otherwise: "") else { return false }
        let word = answer.trimmingWhitespace().lowercased()
        return word == "y" || word == "yes"
    }
}
