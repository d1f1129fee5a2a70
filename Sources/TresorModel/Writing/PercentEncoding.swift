/// Percent-encoding (RFC 3986 §2.1) for attachment names in headers and ids in paths.
///
/// Written here rather than taken from Foundation's `addingPercentEncoding`, which lives in the
/// part of Foundation the CLI does not link (BENCHMARKS.md, "Measured design choices").
public enum PercentEncoding {
    /// `text` as percent-encoded UTF-8, every byte but the unreserved characters
    /// (`A–Z a–z 0–9 - . _ ~`) written `%XX`: safe in a header value and as one path segment.
    public static func encode(_ text: String) -> String { encode(text, keeping: nil) }

    /// A `file:` URI that SQLite opens read-only and immutable (`mode=ro&immutable=1`: no lock,
    /// no `-shm`, nobody writing) for the file at `path`, its bytes encoded but for `/` (SQLite
    /// decodes `%XX` in a URI's path).
    /// - Parameter path: an absolute file path.
    /// - Returns: the URI to open.
    public static func immutableSQLiteURI(path: String) -> String {
        "file:" + encode(path, keeping: UInt8(ascii: "/")) + "?mode=ro&immutable=1"
    }

    private static func encode(_ text: String, keeping kept: UInt8?) -> String {
        var encoded: [UInt8] = []
        encoded.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if isUnreserved(byte) || byte == kept {
                encoded.append(byte)
            } else {
                encoded += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            }
        }
        // Only ASCII was written: valid UTF-8 as it is.
        return String(decoding: encoded, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// The text `value` percent-encodes; nil when it is not valid percent-encoded UTF-8.
    public static func decode(_ value: String) -> String? {
        // Most values (a service, an account) have nothing encoded: a String is valid UTF-8 already.
        guard value.utf8.contains(UInt8(ascii: "%")) else { return value }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count)
        var rest = value.utf8[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard rest.count >= 2, let high = hexValue(rest.removeFirst()), let low = hexValue(rest.removeFirst()) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
