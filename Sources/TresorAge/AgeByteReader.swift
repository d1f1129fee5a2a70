import Foundation

/// Buffered reading over a byte source that hands out at most what it is asked for, and
/// empty data at the end.
struct AgeByteReader {
    private let source: (Int) throws -> Data
    /// The bytes not read yet: a slice of what the source gave, handed out as slices of it.
    private var buffer = Data()
    private var sourceEnded = false
    private static let readSize = 1 << 20

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
        while buffer.count < count, try fill(completing: count) {}
        // Slices, not copies: the source's buffer lives until its last slice is dropped.
        let end = buffer.startIndex + min(count, buffer.count)
        let taken = buffer[buffer.startIndex..<end]
        buffer = buffer[end...]
        return taken
    }

    /// Whether the input has no byte left.
    mutating func isAtEnd() throws -> Bool {
        if !buffer.isEmpty { return false }
        return !(try fill())
    }

    /// Reads more into the buffer; false at the end of the input.
    /// - Parameter count: the size of the read waiting for it: with bytes left over, only what
    ///   completes it is asked for — those few bytes are copied together with the leftover, and
    ///   the next large read starts where the last read ended.
    private mutating func fill(completing count: Int? = nil) throws -> Bool {
        guard !sourceEnded else { return false }
        let wanted = buffer.isEmpty ? max(count ?? 0, Self.readSize) : count.map { $0 - buffer.count } ?? Self.readSize
        let more = try source(wanted)
        if more.isEmpty { sourceEnded = true; return false }
        buffer = buffer.isEmpty ? more : buffer + more
        return true
    }
}
