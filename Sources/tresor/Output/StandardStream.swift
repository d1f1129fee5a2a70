import FoundationEssentials
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// The process's standard input, output and error, read and written with `read(2)` and
/// `write(2)` directly. (Foundation's `FileHandle` lives in the part of Foundation the CLI does
/// not link: BENCHMARKS.md, "Measured design choices".)
enum StandardStream: Int32 {
    case input = 0, output = 1, error = 2

    /// Writes out the lines `print` holds back. On a terminal each line leaves at once; on a pipe
    /// or in a file they leave in blocks, so a command about to wait — for another device, for an
    /// application's request, for the user's answer — shows what it said first.
    static func showPrinted() { fflush(nil) }

    /// Whether the stream is a terminal.
    var isTerminal: Bool { isatty(rawValue) == 1 }

    /// Writes all of `data` (unbuffered, like `FileHandle.write`); a failed write (a reader
    /// gone) ends it quietly.
    func write(_ data: Data) { data.write(toDescriptor: rawValue) }

    func write(_ text: String) { write(Data(text.utf8)) }

    /// Everything left to read, up to end of file, or its first `limit` bytes.
    func readToEnd(upTo limit: Int = .max) -> Data { Data(readingToEndOf: rawValue, upTo: limit) }
}
