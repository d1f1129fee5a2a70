import FoundationEssentials

/// One D-Bus value, typed as the D-Bus type system types it.
///
/// Arrays carry their element signature, so an empty array still says what it holds; byte
/// arrays (`ay`, how secrets and keys travel) are ``bytes(_:)`` rather than an array of bytes.
public indirect enum DBusValue: Sendable, Equatable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// `ay`.
    case bytes([UInt8])
    /// `a…`: every element of type `elementSignature` (a dictionary is an array of
    /// ``dictEntry(_:_:)``, element signature `{sv}` and the like).
    case array(elementSignature: String, [DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])
    case variant(DBusValue)
    /// `h`: a file descriptor passed with the message (libdbus passes it over the Unix socket).
    /// Sending one sends a duplicate; the value keeps its own.
    case unixFD(DBusFileDescriptor)

    /// This value's D-Bus signature.
    public var signature: String {
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .bytes: return "ay"
        case .array(let element, _): return "a" + element
        case .dictEntry(let key, let value): return "{" + key.signature + value.signature + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .variant: return "v"
        case .unixFD: return "h"
        }
    }
}

// MARK: Building values

extension DBusValue {
    /// `a{ss}`, as the Secret Service's attribute maps travel.
    public static func stringDictionary(_ dictionary: [String: String]) -> DBusValue {
        .array(elementSignature: "{ss}", dictionary.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .string($0.value)) })
    }

    /// `a{sv}`, as properties travel.
    public static func properties(_ dictionary: [String: DBusValue]) -> DBusValue {
        .array(elementSignature: "{sv}", dictionary.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) })
    }

    /// `ao`.
    public static func objectPaths(_ paths: [String]) -> DBusValue {
        .array(elementSignature: "o", paths.map { .objectPath($0) })
    }
}

// MARK: Reading values

extension DBusValue {
    public var stringValue: String? {
        switch self {
        case .string(let value), .objectPath(let value), .signature(let value): return value
        default: return nil
        }
    }

    public var boolValue: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    public var byteArray: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    /// An `h`'s descriptor, nil for anything else.
    public var fileDescriptor: DBusFileDescriptor? {
        if case .unixFD(let descriptor) = self { return descriptor }
        return nil
    }

    /// The value inside a variant, or the value itself.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The elements of an array, nil for anything else.
    public var elements: [DBusValue]? {
        switch self {
        case .array(_, let elements): return elements
        case .bytes(let bytes): return bytes.map { .byte($0) }
        default: return nil
        }
    }

    /// An `ao` as paths.
    public var objectPathList: [String]? {
        guard case .array("o", let elements) = self else { return nil }
        return elements.compactMap(\.stringValue)
    }

    /// An `a{ss}` as a dictionary; nil for anything else. A key given twice keeps its last value.
    public var stringDictionary: [String: String]? {
        guard case .array("{ss}", let entries) = self else { return nil }
        var result: [String: String] = [:]
        for case .dictEntry(.string(let key), .string(let value)) in entries { result[key] = value }
        return result
    }

    /// An `a{sv}` as a dictionary of the variants' contents; nil for anything else.
    public var propertyDictionary: [String: DBusValue]? {
        guard case .array("{sv}", let entries) = self else { return nil }
        var result: [String: DBusValue] = [:]
        for case .dictEntry(.string(let key), let value) in entries { result[key] = value.unwrapped }
        return result
    }
}
