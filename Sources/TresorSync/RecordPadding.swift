import Foundation

/// How a record's plaintext is laid out before sealing, so its size tells little: a flag byte,
/// the payload's length (4 bytes, big-endian), the payload, then zero bytes up to the next power
/// of two from 256 bytes (docs/SYNC.md, "What the server learns").
public enum RecordPadding {
    /// The smallest padded plaintext: every record up to 251 payload bytes is this size.
    public static let minimumSize = 256
    /// The largest padded plaintext (16 MiB): a larger payload is refused before sealing.
    public static let maximumSize = 1 << 24
    static let headerSize = 5
    static let tombstoneFlag: UInt8 = 1

    /// The padded plaintext size of a payload of `payloadCount` bytes.
    /// - Parameter payloadCount: the payload's size in bytes.
    /// - Returns: the smallest power of two ≥ 256 that holds it with its 5-byte header, or nil
    ///   when that is above ``maximumSize``.
    public static func paddedSize(payloadCount: Int) -> Int? {
        guard payloadCount >= 0, payloadCount <= maximumSize - headerSize else { return nil }
        var size = minimumSize
        while size < payloadCount + headerSize { size *= 2 }
        return size
    }

    static func pad(_ content: RecordContent) throws -> Data {
        guard let size = paddedSize(payloadCount: content.payload.count) else {
            throw SyncError.cannotSeal("a payload of \(content.payload.count) bytes is over the \(maximumSize - headerSize)-byte limit")
        }
        var bytes = Data(capacity: size)
        bytes.append(content.isTombstone ? tombstoneFlag : 0)
        withUnsafeBytes(of: UInt32(content.payload.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(content.payload)
        bytes.append(Data(count: size - bytes.count))
        return bytes
    }

    /// The content of a padded plaintext, refusing any layout a sealing device does not write:
    /// another size than the payload's padded size, an unknown flag, non-zero padding.
    static func unpad(_ bytes: Data) throws -> RecordContent {
        let bytes = Data(bytes)
        guard bytes.count >= headerSize, bytes[0] <= tombstoneFlag else { throw RecordRefusal.badPadding }
        let count = Int(bytes[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard paddedSize(payloadCount: count) == bytes.count, bytes[(headerSize + count)...].allSatisfy({ $0 == 0 }) else {
            throw RecordRefusal.badPadding
        }
        return RecordContent(payload: Data(bytes[headerSize..<headerSize + count]), isTombstone: bytes[0] == tombstoneFlag)
    }
}
