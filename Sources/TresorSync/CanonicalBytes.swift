import Foundation

/// The byte layout of everything TresorSync signs or binds as associated data: big-endian
/// integers, and strings and byte strings each preceded by their length (4 bytes). One layout,
/// so two different values never encode to the same bytes and a signature covers exactly the
/// fields it names (docs/SYNC.md).
struct CanonicalWriter {
    private(set) var bytes = Data()

    init(domain: String) {
        append(domain)
    }

    mutating func append(_ value: UInt8) { bytes.append(value) }

    mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ value: Data) {
        withUnsafeBytes(of: UInt32(value.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(value)
    }

    mutating func append(_ value: String) { append(Data(value.utf8)) }
}

/// Reads what ``CanonicalWriter`` wrote, bounded: every length is checked against what is left.
struct CanonicalReader {
    private let bytes: Data
    private var offset: Int

    init(_ bytes: Data, domain: String) throws {
        self.bytes = Data(bytes)
        offset = 0
        guard try readString() == domain else { throw SyncError.malformed("not a \(domain) value") }
    }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func readByte() throws -> UInt8 {
        guard offset < bytes.count else { throw SyncError.malformed("truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt64() throws -> UInt64 {
        guard bytes.count - offset >= 8 else { throw SyncError.malformed("truncated") }
        defer { offset += 8 }
        return bytes[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func readData() throws -> Data {
        guard bytes.count - offset >= 4 else { throw SyncError.malformed("truncated") }
        let count = Int(bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        offset += 4
        guard bytes.count - offset >= count else { throw SyncError.malformed("a field claims \(count) bytes past the end") }
        defer { offset += count }
        return Data(bytes[offset..<offset + count])
    }

    mutating func readString() throws -> String {
        guard let string = String(data: try readData(), encoding: .utf8) else { throw SyncError.malformed("a text field is not UTF-8") }
        return string
    }

    /// Ends a read: bytes left over mean the value is not what was parsed.
    func finish() throws {
        guard isAtEnd else { throw SyncError.malformed("\(bytes.count - offset) bytes after the end") }
    }
}
