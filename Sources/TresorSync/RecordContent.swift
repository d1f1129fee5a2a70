import Foundation

/// What a record carries: a keychain item's encoded form (opaque here), or a tombstone.
public struct RecordContent: Sendable, Equatable {
    /// The item's bytes; for a tombstone, whatever the caller keeps of a deleted item (may be empty).
    public var payload: Data
    /// Whether the record says the item was deleted.
    public var isTombstone: Bool
    /// Whether the record opened — its writer, a trusted device, sealed it under the circle key —
    /// but its layout is not what a sealing device writes (its padding): nothing in it is read,
    /// and the caller sets it aside instead of applying it (``badlyPadded``).
    public private(set) var isBadlyPadded = false

    /// What a badly padded record of a trusted device carries: nothing to apply.
    public static let badlyPadded: RecordContent = {
        var content = RecordContent(payload: Data())
        content.isBadlyPadded = true
        return content
    }()

    /// A tombstone as large as a version padded to `size` (``RecordPadding``): zero bytes as its
    /// payload, which nobody reads, so that its sealed size is the deleted item's — a deletion
    /// is not told apart by its size. Nil or a size below the smallest: the smallest.
    /// - Parameter size: the padded size of the record's last version.
    /// - Returns: the tombstone's content.
    public static func tombstone(paddedTo size: Int?) -> RecordContent {
        let fill = min(max((size ?? 0) - RecordPadding.headerSize, 0), RecordPadding.maximumSize - RecordPadding.headerSize)
        return RecordContent(payload: Data(count: fill), isTombstone: true)
    }

    /// A record's content.
    /// - Parameters:
    ///   - payload: the item's encoded form (for a tombstone, what is kept of the deleted item).
    ///   - isTombstone: whether the item was deleted.
    public init(payload: Data, isTombstone: Bool = false) {
        self.payload = payload
        self.isTombstone = isTombstone
    }
}
