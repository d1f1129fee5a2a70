import Foundation

/// Buffered reading over a byte source that hands out at most what it is asked for, and
/// empty data at the end.
struct AgeByteReader {
    private let source: (Int) throws -> Data
    private var buffer = Data()
    private var sourceEnded = false
    private static let readSize = 64 * 1024

    init(source: @escaping (Int) throws -> Data) { self.source = source }

    /// The next line without its `\n`, nil at the end of the input.
    /// - Throws: ``AgeError/malformedHeader(_:)`` for a line longer than `maximumLength`, not
    ///   valid UTF-8, or not ended by `\n`.
    mutating func readLine(maximumLength: Int) throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[buffer.index(after: newline)...])
                guard line.count <= maximumLength, let text = String(data: line, encoding: .utf8) else {
                    throw AgeError.malformedHeader("a header line is too long or not text")
                }
                return text
            }
            guard buffer.count <= maximumLength else { throw AgeError.malformedHeader("a header line is too long") }
            guard try fill() else {
                guard buffer.isEmpty else {
                    // Bytes with no newline where a header line should be: not an age header.
                    if String(data: buffer, encoding: .utf8) == nil { throw AgeError.notAnAgeFile("it does not start with the age version line") }
                    throw AgeError.malformedHeader("the header ends in the middle of a line")
                }
                return nil
            }
        }
    }

    /// Up to `count` bytes; fewer only at the end of the input.
    mutating func read(upTo count: Int) throws -> Data {
        while buffer.count < count, try fill() {}
        let taken = buffer.prefix(count)
        buffer = Data(buffer.dropFirst(taken.count))
        return Data(taken)
    }

    /// Whether the input has no byte left.
    mutating func isAtEnd() throws -> Bool {
        if !buffer.isEmpty { return false }
        return !(try fill())
    }

    /// Reads more into the buffer; false at the end of the input.
    private mutating func fill() throws -> Bool {
        guard !sourceEnded else { return false }
        let more = try source(Self.readSize)
        if more.isEmpty { sourceEnded = true; return false }
        buffer += more
        return true
    }
}
