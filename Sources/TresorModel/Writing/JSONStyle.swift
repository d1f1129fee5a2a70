import FoundationEssentials

/// Tresor's two ways of writing JSON, each configured once here. Both sort keys (the same value
/// gives the same bytes, which sealed records and signatures rely on) and write bytes as Base64.
public struct JSONStyle: Sendable {
    private let iso8601Dates: Bool

    /// Dates as seconds since 1970: the socket API (`APICoding`) and every record at rest —
    /// item attributes, applications, backups, the keybag's authenticated files.
    public static let secondsSince1970 = JSONStyle(iso8601Dates: false)
    /// Dates in ISO 8601: the sync protocol (`SyncJSON`) and the web client's API (`WebCoding`).
    public static let iso8601 = JSONStyle(iso8601Dates: true)

    /// A new encoder of this style.
    public var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = iso8601Dates ? .iso8601 : .secondsSince1970
        encoder.dataEncodingStrategy = .base64
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// A new decoder of this style.
    public var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = iso8601Dates ? .iso8601 : .secondsSince1970
        decoder.dataDecodingStrategy = .base64
        return decoder
    }
}
