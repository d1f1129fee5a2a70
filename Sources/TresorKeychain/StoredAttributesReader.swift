import Foundation
import TresorModel

/// Reads an item's sealed attributes — the JSON ``ItemAttributes/encoder`` wrote, once opened —
/// into the ``ItemAttributes`` that `JSONDecoder` would give.
///
/// Written out because it is on every lookup's path, where `JSONDecoder`'s Codable machinery
/// (keyed containers, `allKeys`, a dynamic cast per value) costs several times the scan of the
/// bytes (BENCHMARKS.md, "Measured design choices"). It reads any JSON (every escape, number and nesting),
/// but only an object whose known names hold the types ``ItemAttributes`` declares; anything
/// else throws, as do two members of one name. Unknown names are skipped, as `JSONDecoder`
/// skips them for a stored item.
/// A fast path (docs/ARCHITECTURE.md, "Fast paths and their twins"): `StoredAttributesReaderTests`
/// holds it equal to `JSONDecoder` on random attributes and on mangled bytes.
enum StoredAttributesReader {
    /// The bytes are not the JSON of an attributes object.
    struct Malformed: Error {}

    static func attributes(from json: Data) throws -> ItemAttributes {
        try json.withUnsafeBytes { bytes in
            var reader = JSONReader(bytes: bytes)
            var attributes = ItemAttributes()
            try reader.enterObject()
            var count = 0, names: [String] = []
            names.reserveCapacity(16)
            while let name = try reader.nextName(count: &count) {
                try refuseDuplicate(name, in: &names)
                try reader.readValue(of: name, into: &attributes)
            }
            reader.skipWhitespace()
            guard reader.atEnd else { throw Malformed() }
            return attributes
        }
    }

    /// `JSONDecoder` keeps the first of two members of one name; our encoder never writes
    /// two. Refused rather than mimicked, so nothing depends on which one wins.
    fileprivate static func refuseDuplicate(_ name: String, in names: inout [String]) throws {
        guard !names.contains(name) else { throw Malformed() }
        names.append(name)
    }
}

/// A cursor over JSON bytes (RFC 8259).
private struct JSONReader {
    let bytes: UnsafeRawBufferPointer
    var position = 0
    /// Objects and arrays inside skipped values may nest this deep; deeper is refused rather
    /// than recursed into.
    static let maximumDepth = 64

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var atEnd: Bool { position == bytes.count }

    func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    mutating func next() throws -> UInt8 {
        guard position < bytes.count else { throw StoredAttributesReader.Malformed() }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func expect(_ byte: UInt8) throws {
        guard try next() == byte else { throw StoredAttributesReader.Malformed() }
    }

    mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    /// Consumes `literal` if the bytes go on with it.
    mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        for index in 0..<count where bytes[position + index] != literal.utf8Start[index] { return false }
        position += count
        return true
    }

    // MARK: Objects

    mutating func enterObject() throws {
        skipWhitespace()
        try expect(UInt8(ascii: "{"))
    }

    /// The next member's name, with the cursor on its value; nil at the object's end.
    /// `count` is how many members came before (0 for a new object).
    mutating func nextName(count: inout Int) throws -> String? {
        skipWhitespace()
        if count == 0 {
            if peek() == UInt8(ascii: "}") {
                position += 1
                return nil
            }
        } else {
            switch try next() {
            case UInt8(ascii: "}"): return nil
            case UInt8(ascii: ","): skipWhitespace()
            default: throw StoredAttributesReader.Malformed()
            }
        }
        let name = try readString()
        skipWhitespace()
        try expect(UInt8(ascii: ":"))
        skipWhitespace()
        count += 1
        return name
    }

    // MARK: Values

    /// Consumes `null` if it is next: what `decodeIfPresent` reads as absent.
    mutating func readNull() -> Bool {
        consume("null")
    }

    mutating func readString() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = position
        var ascii = true
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                let utf8 = UnsafeRawBufferPointer(rebasing: bytes[start..<position - 1])
                // ASCII is valid UTF-8 as it is: only other bytes need validating.
                return ascii ? String(decoding: utf8, as: UTF8.self) : try Self.validated(utf8)
            case UInt8(ascii: "\\"):
                return try readEscapedString(from: start)
            case 0..<0x20:
                throw StoredAttributesReader.Malformed()
            default:
                if byte >= 0x80 { ascii = false }
                position += 1
            }
        }
        throw StoredAttributesReader.Malformed()
    }

    /// The rest of a string that has escapes, its first `start..<position` bytes plain.
    private mutating func readEscapedString(from start: Int) throws -> String {
        var utf8 = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        while true {
            let byte = try next()
            switch byte {
            case UInt8(ascii: "\""):
                return try Self.validated(utf8)
            case UInt8(ascii: "\\"):
                switch try next() {
                case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): utf8.append(contentsOf: String(try readEscapedScalar()).utf8)
                default: throw StoredAttributesReader.Malformed()
                }
            case 0..<0x20:
                throw StoredAttributesReader.Malformed()
            default:
                utf8.append(byte)
            }
        }
    }

    /// The scalar of a `\uXXXX` escape (after the `u`), or of a surrogate pair of two.
    private mutating func readEscapedScalar() throws -> Unicode.Scalar {
        let first = try readHex4()
        switch first {
        case 0xD800..<0xDC00:
            guard consume("\\u") else { throw StoredAttributesReader.Malformed() }
            let second = try readHex4()
            guard (0xDC00..<0xE000).contains(second) else { throw StoredAttributesReader.Malformed() }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
        case 0xDC00..<0xE000:
            throw StoredAttributesReader.Malformed()
        default:
            return Unicode.Scalar(first)!
        }
    }

    private mutating func readHex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = try next()
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw StoredAttributesReader.Malformed()
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private static func validated(_ utf8: some Sequence<UInt8>) throws -> String {
        guard let string = String(validating: utf8, as: UTF8.self) else { throw StoredAttributesReader.Malformed() }
        return string
    }

    mutating func readBool() throws -> Bool {
        if consume("true") { return true }
        if consume("false") { return false }
        throw StoredAttributesReader.Malformed()
    }

    /// A number's bytes as the JSON grammar has them; `integral` when it has neither
    /// fraction nor exponent.
    private mutating func readNumberToken() throws -> (token: Substring, integral: Bool) {
        let start = position
        var integral = true
        if peek() == UInt8(ascii: "-") { position += 1 }
        switch peek() ?? 0 {
        case UInt8(ascii: "0"): position += 1
        case UInt8(ascii: "1")...UInt8(ascii: "9"): skipDigits()
        default: throw StoredAttributesReader.Malformed()
        }
        if peek() == UInt8(ascii: ".") {
            integral = false
            position += 1
            guard try requireDigits() else { throw StoredAttributesReader.Malformed() }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            integral = false
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard try requireDigits() else { throw StoredAttributesReader.Malformed() }
        }
        // Only ASCII digits, signs, dots and e: always valid UTF-8.
        let token = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        return (token[...], integral)
    }

    private mutating func skipDigits() {
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
    }

    private mutating func requireDigits() throws -> Bool {
        let start = position
        skipDigits()
        return position > start
    }

    /// An integer written without fraction or exponent, in range of `T`.
    mutating func readInteger<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let (token, integral) = try readNumberToken()
        guard integral, let value = T(token) else { throw StoredAttributesReader.Malformed() }
        return value
    }

    mutating func readDouble() throws -> Double {
        let (token, _) = try readNumberToken()
        guard let value = Double(token), value.isFinite else { throw StoredAttributesReader.Malformed() }
        return value
    }

    /// Skips any value, objects and arrays `depth` levels deep at most.
    mutating func skipValue(depth: Int = 0) throws {
        guard depth < Self.maximumDepth else { throw StoredAttributesReader.Malformed() }
        switch peek() {
        case UInt8(ascii: "\""):
            _ = try readString()
        case UInt8(ascii: "{"):
            try enterObject()
            var count = 0
            while try nextName(count: &count) != nil { try skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            position += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                position += 1
                return
            }
            while true {
                skipWhitespace()
                try skipValue(depth: depth + 1)
                skipWhitespace()
                switch try next() {
                case UInt8(ascii: "]"): return
                case UInt8(ascii: ","): continue
                default: throw StoredAttributesReader.Malformed()
                }
            }
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try readBool()
        case UInt8(ascii: "n"):
            guard readNull() else { throw StoredAttributesReader.Malformed() }
        default:
            _ = try readNumberToken()
        }
    }

    // MARK: Typed members (`decodeIfPresent`: null is absent)

    mutating func string() throws -> String? { try readNull() ? nil : readString() }
    mutating func bool() throws -> Bool? { try readNull() ? nil : readBool() }
    mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T? { try readNull() ? nil : readInteger(type) }
    mutating func date() throws -> Date? { try readNull() ? nil : Date(timeIntervalSince1970: readDouble()) }

    /// Base64, as ``ItemAttributes/encoder`` writes `Data`.
    mutating func data() throws -> Data? {
        guard let text = try string() else { return nil }
        guard let data = Data(base64Encoded: text) else { throw StoredAttributesReader.Malformed() }
        return data
    }

    mutating func value<T: RawRepresentable>(_: T.Type) throws -> T? where T.RawValue == String {
        guard let raw = try string() else { return nil }
        guard let value = T(rawValue: raw) else { throw StoredAttributesReader.Malformed() }
        return value
    }

    mutating func stringMap() throws -> [String: String]? {
        if readNull() { return nil }
        try enterObject()
        var map: [String: String] = [:]
        var count = 0
        while let key = try nextName(count: &count) {
            guard map.updateValue(try readString(), forKey: key) == nil else { throw StoredAttributesReader.Malformed() }
        }
        return map
    }

    /// Reads the value of member `name` into its property (``ItemAttribute/named``); skips the
    /// value of a name ``ItemAttributes`` does not have.
    mutating func readValue(of name: String, into attributes: inout ItemAttributes) throws {
        guard let attribute = ItemAttribute.named[name] else { return try skipValue() }
        switch attribute.value {
        case .text(_, let set): set(&attributes, try string())
        case .integer(_, let set): set(&attributes, try integer(Int.self))
        case .fourCharCode(_, let set): set(&attributes, try integer(UInt32.self))
        case .boolean(_, let set): set(&attributes, try bool())
        case .bytes(_, let set): set(&attributes, try data())
        case .date(_, let set): set(&attributes, try date())
        case .protectionClass(_, let set): set(&attributes, try value(ProtectionClass.self))
        case .accessControl(_, let set): set(&attributes, try value(AccessControl.self))
        case .keyClass(_, let set): set(&attributes, try value(ItemAttributes.KeyClass.self))
        case .stringMap(_, let set): set(&attributes, try stringMap())
        }
    }
}
