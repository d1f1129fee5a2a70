import Foundation

/// One change a device sends to the server: exactly what the server stores and serves back.
/// The server reads the first four fields and never the ``body``, a sealed and signed record
/// (``SealedRecord``) that repeats them inside its signed part, so a server that alters them
/// is caught (``SyncProgress/applying(_:list:keys:)``).
public struct SyncUpload: Sendable, Equatable, Codable {
    /// The item's record id: a random UUID the device chose for the item (not the item's key).
    public var recordID: String
    /// The writing device (``DeviceIdentity/deviceID``).
    public var deviceID: String
    /// The writing device's number for this change: 1, 2, 3… with no gap.
    public var deviceSequence: UInt64
    /// The server counter of the version this change was made from; 0 for a new record.
    public var baseCounter: UInt64
    /// The sealed, signed record.
    public var body: Data

    /// An upload as the server stores it; ``SealedRecord/seal(_:recordID:deviceSequence:baseCounter:account:key:device:)``
    /// makes a device's own.
    /// - Parameters:
    ///   - recordID: the item's record id.
    ///   - deviceID: the writing device.
    ///   - deviceSequence: the writing device's number for the change.
    ///   - baseCounter: the server counter of the version it was made from; 0 for new.
    ///   - body: the sealed, signed record.
    public init(recordID: String, deviceID: String, deviceSequence: UInt64, baseCounter: UInt64, body: Data) {
        self.recordID = recordID
        self.deviceID = deviceID
        self.deviceSequence = deviceSequence
        self.baseCounter = baseCounter
        self.body = body
    }
}

/// One change as the server serves it, in the server's order.
public struct SyncPageEntry: Sendable, Equatable, Codable {
    /// The server's counter for the change, increasing in the order the server committed them.
    public var counter: UInt64
    public var upload: SyncUpload

    /// A change as the server serves it.
    /// - Parameters:
    ///   - counter: the server's counter for it.
    ///   - upload: the change as the device sent it.
    public init(counter: UInt64, upload: SyncUpload) {
        self.counter = counter
        self.upload = upload
    }
}

/// What a record carries: a keychain item's encoded form (opaque here), or a tombstone.
public struct RecordContent: Sendable, Equatable {
    /// The item's bytes; for a tombstone, whatever the caller keeps of a deleted item (may be empty).
    public var payload: Data
    /// Whether the record says the item was deleted.
    public var isTombstone: Bool

    /// A record's content.
    /// - Parameters:
    ///   - payload: the item's encoded form (for a tombstone, what is kept of the deleted item).
    ///   - isTombstone: whether the item was deleted.
    public init(payload: Data, isTombstone: Bool = false) {
        self.payload = payload
        self.isTombstone = isTombstone
    }
}
