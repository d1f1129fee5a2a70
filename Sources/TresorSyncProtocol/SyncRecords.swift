import Foundation

/// One change a device sends: an opaque sealed and signed body, named by what the server
/// needs to order it and to make a retried push harmless.
public struct SyncUpload: Codable, Equatable, Sendable {
    /// The record's id: a random UUID the device chose for the item (not the item's key).
    public var recordID: String
    /// The sending device.
    public var deviceID: String
    /// The device's own count of its uploads, contiguous from 1: a retried upload repeats it.
    public var deviceSequence: UInt64
    /// The server counter of the version this change was made from; 0 for a new record.
    public var baseCounter: UInt64
    /// The sealed and signed record; the server never parses it.
    public var body: Data

    public init(recordID: String, deviceID: String, deviceSequence: UInt64, baseCounter: UInt64, body: Data) {
        self.recordID = recordID
        self.deviceID = deviceID
        self.deviceSequence = deviceSequence
        self.baseCounter = baseCounter
        self.body = body
    }
}

/// An upload as the server ordered it.
public struct SyncRecord: Codable, Equatable, Sendable {
    /// The server's counter: per account, handed out in commit order, from 1.
    public var counter: UInt64
    public var upload: SyncUpload

    public init(counter: UInt64, upload: SyncUpload) {
        self.counter = counter
        self.upload = upload
    }
}

/// `POST /v1/sync/records`: uploads stored all together or not at all.
public struct SyncPushRequest: Codable, Equatable, Sendable {
    public var uploads: [SyncUpload]

    public init(uploads: [SyncUpload]) {
        self.uploads = uploads
    }
}

/// The answer to a push: each upload with its counter, in the request's order. A retried
/// push gets the same answer and stores nothing twice.
public struct SyncPushResponse: Codable, Equatable, Sendable {
    public var records: [SyncRecord]

    public init(records: [SyncRecord]) {
        self.records = records
    }
}

/// `GET /v1/sync/records?after=CURSOR&limit=N`: the records after a cursor, in counter order.
public struct SyncPage: Codable, Equatable, Sendable {
    public var records: [SyncRecord]
    /// Where the next page starts (`after=`): the last record's counter, or the request's cursor.
    public var cursor: UInt64
    /// Whether more records follow the cursor now.
    public var more: Bool

    public init(records: [SyncRecord], cursor: UInt64, more: Bool) {
        self.records = records
        self.cursor = cursor
        self.more = more
    }
}

/// What a server accepts (docs/SYNC.md, "Transport"); beyond these it answers `413 tooLarge`
/// or `400 invalid` and stores nothing.
public enum SyncLimits {
    /// One upload's body.
    public static let bodyBytes = 1024 * 1024
    /// Uploads in one push.
    public static let uploadsPerPush = 64
    /// The bodies of one push together.
    public static let pushBodyBytes = 4 * 1024 * 1024
    /// A push request as sent (JSON, bodies in base64).
    public static let pushRequestBytes = 6 * 1024 * 1024
    /// Records in one page, at most (`limit=`), and when `limit` is not given.
    public static let pageRecords = 500
    public static let defaultPageRecords = 200
    /// Notes in one page of `GET /v1/sync/notes`, at most (`limit=`), and when `limit` is not given.
    public static let notesPageEntries = 500
    public static let defaultNotesPageEntries = 100
    /// A page stops adding records once their bodies pass this (it always holds one).
    public static let pageBodyBytes = 4 * 1024 * 1024
    /// A device list, a device's public identity, a key envelope.
    public static let blobBytes = 256 * 1024
    /// Other requests (sign-in, enrollment, approvals).
    public static let requestBytes = 1024 * 1024
    /// A device's name, in characters.
    public static let deviceNameCharacters = 64
    /// Join requests wait this long for approval.
    public static let joinRequestSeconds: TimeInterval = 600
    /// A sign-in challenge must be answered within this.
    public static let challengeSeconds: TimeInterval = 60
    /// A device session lasts this long; the device signs in again after.
    public static let sessionSeconds: TimeInterval = 3600
}
