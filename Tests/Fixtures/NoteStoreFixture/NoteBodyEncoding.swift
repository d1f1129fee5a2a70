import Foundation

// Makes Apple Notes note bodies for the tests: the protobuf by hand (so tests can also make
// malformed ones byte by byte) and gzip through the system's `gzip`.

/// Protobuf wire-format pieces.
public enum Protobuf {
    public static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        repeat {
            let low = UInt8(value & 0x7F)
            value >>= 7
            bytes.append(value == 0 ? low : low | 0x80)
        } while value != 0
        return bytes
    }

    public static func tag(_ field: Int, wireType: UInt8) -> [UInt8] { varint(UInt64(field) << 3 | UInt64(wireType)) }

    /// A length-delimited field (wire type 2): a message, a string or bytes.
    public static func field(_ field: Int, _ bytes: [UInt8]) -> [UInt8] {
        tag(field, wireType: 2) + varint(UInt64(bytes.count)) + bytes
    }

    /// A varint field (wire type 0).
    public static func field(_ field: Int, varint value: UInt64) -> [UInt8] { tag(field, wireType: 0) + varint(value) }

    /// `NoteStoreProto { document(2) { version(2), note(3) { note_text(2), attribute_run(5)… } } }`
    /// the way Apple writes it, with the fields the reader must skip: the document version,
    /// an attribute run per line with a nested paragraph style, and a fixed32 and a fixed64
    /// field.
    public static func noteStore(textBytes: [UInt8]) -> [UInt8] {
        var note = field(2, textBytes)
        for length in [5, 12] {
            let paragraphStyle = field(1, varint: 3) + field(4, varint: 1)
            note += field(5, field(1, varint: UInt64(length)) + field(2, paragraphStyle) + field(5, varint: 0))
        }
        note += tag(9, wireType: 5) + [1, 2, 3, 4] + tag(10, wireType: 1) + [1, 2, 3, 4, 5, 6, 7, 8]
        let document = field(2, varint: 0) + field(3, note)
        return field(2, document)
    }

    public static func noteStore(text: String) -> [UInt8] { noteStore(textBytes: Array(text.utf8)) }
}

/// gzip through `/usr/bin/env gzip` (Debian's gzip is an essential package).
public enum Gzip {
    public static func compress(_ bytes: [UInt8]) throws -> Data {
        let folder = try TemporaryFolder()
        let input = folder.url.appendingPathComponent("input")
        try Data(bytes).write(to: input)
        return try run("gzip -c -n -9 \"$0\"", input.path)
    }

    /// A gzip stream of `count` zero bytes, made without holding them in memory.
    public static func zeros(count: Int) throws -> Data {
        try run("head -c \"$0\" /dev/zero | gzip -c -n -9", String(count))
    }

    /// The gzipped protobuf body of a note with this text.
    public static func noteBody(_ text: String) throws -> Data { try compress(Protobuf.noteStore(text: text)) }

    private static func run(_ script: String, _ argument: String) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, argument]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw FixtureError("gzip failed (\(process.terminationStatus))") }
        return data
    }
}

public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension Data {
    /// Bytes from hexadecimal digits (whitespace ignored); traps on anything else.
    public init(hex: String) {
        let digits = Array(hex.filter { !$0.isWhitespace })
        precondition(digits.count % 2 == 0, "odd number of hex digits")
        self.init(stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! })
    }
}
