import FoundationEssentials
import TresorModel

/// The answer of `GET /v1/items/attributes` (docs/API.md, "The attributes route"): the
/// attributes of every item a find matched, in bytes rather than JSON.
///
/// A find by label answers the item's attributes; as JSON they cost the client more to decode
/// than the keychain spends finding them (BENCHMARKS.md, "A find's floor"). The layout, every
/// integer big-endian: a version byte (1); the item count (4 bytes); for each item its attribute
/// count (2 bytes), then per attribute its JSON name (a length byte, UTF-8) and its value (a
/// 4-byte length, then the bytes): text and the named values (`accessible`, `accessControl`,
/// `keyClass`) as UTF-8; an integer as 8 bytes, a `FourCharCode` as 4; a boolean as one byte,
/// 0 or 1; bytes as they are; a date as the 8 bytes of its seconds since 1970 (IEEE 754 double);
/// the free-form pairs as key and value, each a 4-byte length and UTF-8. A name this side does
/// not know is skipped by its length, as JSON skips an unknown member; anything short,
/// trailing, repeated or of the wrong size is ``Malformed``.
public enum ItemAttributesList {
    /// The answer's content type.
    public static let contentType = "application/vnd.tresor.item-attributes"
    static let version: UInt8 = 1

    /// The bytes are not an answer of this layout.
    public struct Malformed: Error, CustomStringConvertible {
        /// What is wrong with the bytes, in words.
        public let description: String
    }

    /// The answer for `items`.
    /// - Parameter items: The attributes of each item found.
    /// - Returns: The answer's bytes.
    public static func encode(_ items: [ItemAttributes]) -> [UInt8] {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(64 + 320 * items.count)
        append(UInt32(items.count), to: &bytes)
        for attributes in items {
            let countAt = bytes.count
            append(UInt16(0), to: &bytes)
            var count: UInt16 = 0
            for attribute in ItemAttribute.all where append(attribute, of: attributes, to: &bytes) { count += 1 }
            bytes[countAt] = UInt8(count >> 8)
            bytes[countAt + 1] = UInt8(count & 0xFF)
        }
        return bytes
    }

    /// The attributes of each item in `bytes`.
    /// - Parameter bytes: An answer of `GET /v1/items/attributes`.
    /// - Returns: Each item's attributes, in the answer's order.
    /// - Throws: ``Malformed`` for bytes that are not such an answer (short, tampered, trailing).
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [ItemAttributes] {
        var reader = Reader(bytes: bytes)
        guard try reader.byte() == version else { throw Malformed(description: "not an attributes answer of version \(version)") }
        let itemCount = Int(try reader.integer(UInt32.self))
        // Each item takes two bytes at least: a count beyond that is a lie, not a reservation.
        guard itemCount <= reader.remaining / 2 else { throw Malformed(description: "\(itemCount) items announced in \(reader.remaining) bytes") }
        var items: [ItemAttributes] = []
        items.reserveCapacity(itemCount)
        for _ in 0..<itemCount { items.append(try reader.item()) }
        guard reader.remaining == 0 else { throw Malformed(description: "\(reader.remaining) bytes after the last item") }
        return items
    }

    /// ``decode(_:)`` of `bytes`.
    public static func decode(_ bytes: Data) throws -> [ItemAttributes] {
        try bytes.withUnsafeBytes { try decode($0) }
    }

    // MARK: Writing

    /// Appends `attribute` if `attributes` has it set; whether it did.
    private static func append(_ attribute: ItemAttribute, of attributes: ItemAttributes, to bytes: inout [UInt8]) -> Bool {
        switch attribute.value {
        case .text(let get, _): return append(attribute.name, get(attributes).map { Array($0.utf8) }, to: &bytes)
        case .integer(let get, _): return append(attribute.name, get(attributes).map { bigEndian(Int64($0)) }, to: &bytes)
        case .fourCharCode(let get, _): return append(attribute.name, get(attributes).map { bigEndian($0) }, to: &bytes)
        case .boolean(let get, _): return append(attribute.name, get(attributes).map { [$0 ? 1 : 0] }, to: &bytes)
        case .bytes(let get, _): return append(attribute.name, get(attributes).map { [UInt8]($0) }, to: &bytes)
        case .date(let get, _): return append(attribute.name, get(attributes).map { bigEndian($0.timeIntervalSince1970.bitPattern) }, to: &bytes)
        case .protectionClass(let get, _): return append(attribute.name, get(attributes).map { Array($0.rawValue.utf8) }, to: &bytes)
        case .accessControl(let get, _): return append(attribute.name, get(attributes).map { Array($0.rawValue.utf8) }, to: &bytes)
        case .keyClass(let get, _): return append(attribute.name, get(attributes).map { Array($0.rawValue.utf8) }, to: &bytes)
        case .stringMap(let get, _):
            return append(
                attribute.name,
                get(attributes).map { map in
                    var value: [UInt8] = []
                    // Sorted: the same attributes give the same bytes.
                    for (key, text) in map.sorted(by: { $0.key < $1.key }) {
                        append(UInt32(key.utf8.count), to: &value)
                        value += key.utf8
                        append(UInt32(text.utf8.count), to: &value)
                        value += text.utf8
                    }
                    return value
                }, to: &bytes)
        }
    }

    private static func append(_ name: String, _ value: [UInt8]?, to bytes: inout [UInt8]) -> Bool {
        guard let value else { return false }
        // The table's names are short ASCII (`ItemAttribute.all`).
        bytes.append(UInt8(name.utf8.count))
        bytes += name.utf8
        append(UInt32(value.count), to: &bytes)
        bytes += value
        return true
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        bytes += bigEndian(value)
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    // MARK: Reading

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        var remaining: Int { bytes.count - position }

        mutating func byte() throws -> UInt8 {
            guard remaining >= 1 else { throw Malformed(description: "the answer ends early") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
            let size = MemoryLayout<T>.size
            guard remaining >= size else { throw Malformed(description: "the answer ends early") }
            var value: T = 0
            for index in position..<position + size { value = value << 8 | T(bytes[index]) }
            position += size
            return value
        }

        /// The next `count` bytes.
        mutating func slice(_ count: Int) throws -> UnsafeRawBufferPointer {
            guard remaining >= count else { throw Malformed(description: "the answer ends early") }
            defer { position += count }
            return UnsafeRawBufferPointer(rebasing: bytes[position..<position + count])
        }

        mutating func item() throws -> ItemAttributes {
            var attributes = ItemAttributes()
            var seen: [String] = []
            for _ in 0..<Int(try integer(UInt16.self)) {
                let name = try Self.text(try slice(Int(try byte())))
                guard !seen.contains(name) else { throw Malformed(description: "attribute \(name.debugDescription) appears twice") }
                seen.append(name)
                let value = try slice(Int(try integer(UInt32.self)))
                guard let attribute = ItemAttribute.named[name] else { continue }
                try Self.set(attribute, from: value, in: &attributes)
            }
            return attributes
        }

        private static func set(_ attribute: ItemAttribute, from value: UnsafeRawBufferPointer, in attributes: inout ItemAttributes) throws {
            let wrongSize = Malformed(description: "the value of \(attribute.name) has \(value.count) bytes")
            switch attribute.value {
            case .text(_, let set): set(&attributes, try text(value))
            case .integer(_, let set):
                guard value.count == 8 else { throw wrongSize }
                var reader = Reader(bytes: value)
                set(&attributes, Int(Int64(bitPattern: try reader.integer(UInt64.self))))
            case .fourCharCode(_, let set):
                guard value.count == 4 else { throw wrongSize }
                var reader = Reader(bytes: value)
                set(&attributes, try reader.integer(UInt32.self))
            case .boolean(_, let set):
                guard value.count == 1, value[0] <= 1 else { throw Malformed(description: "the value of \(attribute.name) is not a boolean") }
                set(&attributes, value[0] == 1)
            case .bytes(_, let set): set(&attributes, Data(value))
            case .date(_, let set):
                guard value.count == 8 else { throw wrongSize }
                var reader = Reader(bytes: value)
                let seconds = Double(bitPattern: try reader.integer(UInt64.self))
                guard seconds.isFinite else { throw Malformed(description: "the value of \(attribute.name) is not a time") }
                set(&attributes, Date(timeIntervalSince1970: seconds))
            case .protectionClass(_, let set): set(&attributes, try named(ProtectionClass.self, value, attribute))
            case .accessControl(_, let set): set(&attributes, try named(AccessControl.self, value, attribute))
            case .keyClass(_, let set): set(&attributes, try named(ItemAttributes.KeyClass.self, value, attribute))
            case .stringMap(_, let set):
                var reader = Reader(bytes: value)
                var map: [String: String] = [:]
                while reader.remaining > 0 {
                    let key = try text(try reader.slice(Int(try reader.integer(UInt32.self))))
                    let text = try text(try reader.slice(Int(try reader.integer(UInt32.self))))
                    guard map.updateValue(text, forKey: key) == nil else {
                        throw Malformed(description: "a key of \(attribute.name) appears twice")
                    }
                }
                set(&attributes, map)
            }
        }

        private static func text(_ utf8: UnsafeRawBufferPointer) throws -> String {
            guard let text = String(validating: utf8, as: UTF8.self) else { throw Malformed(description: "text that is not UTF-8") }
            return text
        }

        private static func named<T: RawRepresentable>(_: T.Type, _ value: UnsafeRawBufferPointer, _ attribute: ItemAttribute) throws -> T
        where T.RawValue == String {
            guard let named = T(rawValue: try text(value)) else { throw Malformed(description: "the value of \(attribute.name) is not one it takes") }
            return named
        }
    }
}
