import Foundation
import TresorModel

/// Attributes as a JSON object, for exact matching and canonical primary keys.
struct AttributeValues {
    private(set) var values: [String: Any]

    /// The values ``ItemAttributes/encoder`` would write, read off the properties directly:
    /// strings as strings, numbers and booleans as themselves, data as Base64, dates as seconds
    /// since 1970 — what parsing that JSON gives, without writing and parsing it (two JSON
    /// passes per lookup, (BENCHMARKS.md, "Measured design choices")). `PrimaryKeyTupleTests` holds the two equal.
    init(_ attributes: ItemAttributes) {
        // Room for a typical item's attributes at once, rather than growing (and rehashing) as
        // they are set one by one.
        var values = [String: Any](minimumCapacity: 12)
        for attribute in ItemAttribute.all {
            let value: Any?
            switch attribute.value {
            case .text(let get, _): value = get(attributes)
            case .integer(let get, _): value = get(attributes)
            case .fourCharCode(let get, _): value = get(attributes).map { Int($0) }
            case .boolean(let get, _): value = get(attributes)
            case .bytes(let get, _): value = get(attributes)?.base64EncodedString()
            case .date(let get, _): value = get(attributes)?.timeIntervalSince1970
            case .protectionClass(let get, _): value = get(attributes)?.rawValue
            case .accessControl(let get, _): value = get(attributes)?.rawValue
            case .keyClass(let get, _): value = get(attributes)?.rawValue
            case .stringMap(let get, _): value = get(attributes)
            }
            if let value { values[attribute.name] = value }
        }
        self.values = values
    }

    /// The values of attributes sealed as `json` (what ``ItemAttributes/encoder`` wrote), read
    /// without decoding them into ``ItemAttributes`` first.
    init(json: Data, ofItem id: Int64) throws {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw ItemSealing.damagedAttributes(of: id)
        }
        values = object
    }

    /// The names of the attributes that are set, sorted.
    var names: [String] { values.keys.sorted() }

    /// The same values with another access group — what encoding the attributes with that
    /// group would give, without encoding them again.
    func with(accessGroup: String) -> AttributeValues {
        var copy = self
        copy.values["accessGroup"] = accessGroup
        return copy
    }

    /// Whether every attribute set in `query` has the same value here. Custom attributes
    /// match when every queried key is present with the same value — byte for byte, as their
    /// blind index compares them (a dictionary's lookup and `==` would take a decomposed "é"
    /// for a precomposed one, and a scan would find what the index does not).
    func matches(_ query: AttributeValues) -> Bool {
        for (name, wanted) in query.values {
            if name == "custom" {
                let have = values["custom"] as? [String: String] ?? [:]
                guard let wantedMap = wanted as? [String: String] else { return false }
                for (key, value) in wantedMap {
                    guard have.contains(where: { $0.key.utf8.elementsEqual(key.utf8) && $0.value.utf8.elementsEqual(value.utf8) }) else {
                        return false
                    }
                }
                continue
            }
            guard let have = values[name], Self.same(have, wanted) else { return false }
        }
        return true
    }

    /// Whether two values are the same JSON value. Strings (most attributes) compare by their
    /// UTF-8 bytes — as the blind index does, so no Unicode normalisation — without the cost
    /// of serialising them; anything else compares as canonical JSON.
    static func same(_ a: Any, _ b: Any) -> Bool {
        if let a = a as? String, let b = b as? String { return a.utf8.elementsEqual(b.utf8) }
        // Both read off ItemAttributes (an index lookup's row and its query): Swift values of
        // one type compare as themselves. Exact types only — a parsed JSON number would cast
        // to Bool too, and `1` is not `true`.
        if type(of: a) == Bool.self, type(of: b) == Bool.self { return a as! Bool == b as! Bool }
        if type(of: a) == Int.self, type(of: b) == Int.self { return a as! Int == b as! Int }
        return canonical(a) == canonical(b)
    }

    /// A value as canonical JSON bytes, so values compare whatever Foundation type holds them.
    static func canonical(_ value: Any) -> Data? {
        try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys])
    }

    /// The primary-key tuple of `itemClass`, canonically serialised (absent values as null);
    /// without the access group when `includingGroup` is false (the lookup index's tuple).
    func primaryKeyTuple(for itemClass: ItemClass, includingGroup: Bool = true) -> Data {
        var tuple: [Any] = [itemClass.rawValue]
        for name in ItemAttribute.primaryKey[itemClass] ?? [] where includingGroup || name != "accessGroup" {
            tuple.append(values[name] ?? NSNull())
        }
        return Self.jsonArray(tuple) ?? (try? JSONSerialization.data(withJSONObject: tuple, options: [.sortedKeys])) ?? Data()
    }

    /// `elements` as JSONSerialization writes them, when each is a Swift `String`, `Int`,
    /// `Bool` or `NSNull` — what a query's or a new item's values are — without its cost
    /// (BENCHMARKS.md, "Measured design choices"). Nil for anything else, such as the Foundation numbers of a parsed
    /// row. `PrimaryKeyTupleTests` holds the bytes equal to JSONSerialization's.
    static func jsonArray(_ elements: [Any]) -> Data? {
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(128)
        for (index, element) in elements.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            switch ObjectIdentifier(type(of: element)) {
            case ObjectIdentifier(String.self): appendJSONString(element as! String, to: &out)
            case ObjectIdentifier(Int.self): out += String(element as! Int).utf8
            case ObjectIdentifier(Bool.self): out += (element as! Bool ? "true" : "false").utf8
            case ObjectIdentifier(NSNull.self): out += "null".utf8
            default: return nil
            }
        }
        out.append(UInt8(ascii: "]"))
        return Data(out)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// JSONSerialization's escaping: quote, backslash and slash escaped, control characters
    /// as `\b \t \n \f \r` or `\u00xx` (lowercase), everything else as its UTF-8 bytes.
    private static func appendJSONString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "/"): out += [UInt8(ascii: "\\"), UInt8(ascii: "/")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0..<0x20:
                out += [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)],
                    hexDigits[Int(byte & 0xF)],
                ]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension ItemAttributes {
    /// Every attribute name the keychain knows, as spelled in JSON.
    public static let knownNames: Set<String> = Set(ItemAttribute.named.keys)

    /// The coders of sealed attributes and the keychain's other records (``JSONStyle/secondsSince1970``),
    /// made once: every item read and written uses them.
    static let encoder = JSONStyle.secondsSince1970.encoder
    static let decoder = JSONStyle.secondsSince1970.decoder

    /// The names of the attributes that are set.
    var setNames: [String] { AttributeValues(self).names }

    /// Why these attributes cannot be used for `itemClass` as `purpose`, if they cannot.
    /// `values`, when the caller has them already, are these attributes' values.
    func validate(for itemClass: ItemClass, purpose: Purpose, values: AttributeValues? = nil) throws {
        for name in values?.names ?? setNames {
            guard let attribute = ItemAttribute.named[name], attribute.classes.contains(itemClass) else {
                throw KeychainError.param("attribute \(name) does not apply to \(itemClass.humanName) items")
            }
            if purpose != .query && attribute.rules.contains(.setByKeychain) {
                throw KeychainError.param("attribute \(name) is set by the keychain and cannot be given")
            }
        }
        for attribute in Self.limitedLength {
            guard case .text(let get, _) = attribute.value else { continue }
            if let value = get(self), value.utf8.count > Self.maximumStringBytes {
                throw KeychainError.param("attribute \(attribute.name) is longer than \(Self.maximumStringBytes) bytes")
            }
        }
        if let custom, custom.count > 64 || custom.contains(where: { $0.key.utf8.count > 256 || $0.value.utf8.count > Self.maximumStringBytes }) {
            throw KeychainError.param("custom attributes: at most 64, keys up to 256 bytes, values up to \(Self.maximumStringBytes) bytes")
        }
        if let port, !(0...65535).contains(port) { throw KeychainError.param("port must be 0 to 65535") }
    }

    static let maximumStringBytes = ItemAttribute.maximumTextBytes

    /// The text attributes whose length ``validate(for:purpose:values:)`` checks.
    static let limitedLength = ItemAttribute.all.filter { $0.rules.contains(.limitedLength) }

    /// The attributes filled from a certificate's DER, which a caller may not contradict.
    static let fromCertificate = Set(ItemAttribute.all.filter { $0.rules.contains(.fromCertificate) }.map(\.name))

    enum Purpose { case add, query, update }

    /// These attributes with every attribute set in `changes` replaced.
    func applying(_ changes: ItemAttributes) throws -> ItemAttributes {
        var merged = AttributeValues(self).values
        for (name, value) in AttributeValues(changes).values { merged[name] = value }
        let data = try JSONSerialization.data(withJSONObject: merged)
        return try Self.decoder.decode(ItemAttributes.self, from: data)
    }
}
