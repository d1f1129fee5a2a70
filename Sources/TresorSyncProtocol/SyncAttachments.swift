import Foundation
import TresorModel

// Attachments sync (docs/SYNC.md, "Attachments"): an attachment never changes once added, so
// it travels by its id — the same on the server and every device — its bytes streamed in the
// body of `PUT`/`GET /v1/sync/notes/{note}/attachments/{id}`, its kind and name in headers (so
// that no name is in a URL a proxy logs).

/// An attachment of a note as the server lists it.
public struct SyncAttachment: Codable, Equatable, Sendable {
    /// Its id: the same on the server and on every device.
    public var id: String
    /// Its kind (`image`, `audio`, `video`, `pdf`, `file`…, the notes domain's `AttachmentKind`).
    public var kind: String
    /// Its file name.
    public var name: String
    /// Its size in bytes (of the plaintext).
    public var byteCount: Int
    /// A locked note's attachment: it travels as its chunks sealed under the note key (the web
    /// client's format), 28 bytes more each than their plaintext.
    public var isSealed: Bool?
    /// Whether backups leave it out (`tresor note attach --exclude-from-backup`): the server lists
    /// it for every attachment; nil from an older server, which does not keep it.
    public var excludedFromBackup: Bool?
    /// When it was added, on the device or in the browser that added it: the server lists it for
    /// every attachment; nil from an older server, which does not.
    public var created: Date?

    public init(
        id: String, kind: String, name: String, byteCount: Int, isSealed: Bool? = nil, excludedFromBackup: Bool? = nil, created: Date? = nil
    ) {
        self.excludedFromBackup = excludedFromBackup
        self.created = created
        self.id = id
        self.kind = kind
        self.name = name
        self.byteCount = byteCount
        self.isSealed = isSealed
    }

    /// The header that carries an uploaded attachment's kind.
    public static let kindHeader = "Tresor-Attachment-Kind"
    /// The header that carries an uploaded attachment's name, percent-encoded (UTF-8).
    public static let nameHeader = "Tresor-Attachment-Name"
    /// The header that says an uploaded body is a locked note's sealed chunks (`true`), to be
    /// refused if the note is not locked on the server (and a plain body if it is).
    public static let sealedHeader = "Tresor-Attachment-Sealed"
    /// The header that says an uploaded attachment is left out of backups (`true`); an older
    /// server ignores it.
    public static let excludedFromBackupHeader = "Tresor-Attachment-Excluded-From-Backup"
    /// The header that carries when an uploaded attachment was added on the device (ISO 8601, as
    /// the JSON's dates), which dates it and its note on the server rather than the upload's
    /// arrival; an older server ignores it.
    public static let createdHeader = "Tresor-Attachment-Created"

    /// `date` as the created header carries it.
    /// - Parameter date: when the attachment was added.
    /// - Returns: its ISO 8601 form, to the second.
    public static func headerValue(created date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    /// The date the created header carries; nil when it is not ISO 8601.
    /// - Parameter value: the header's value.
    /// - Returns: the date.
    public static func created(headerValue value: String) -> Date? {
        ISO8601DateFormatter().date(from: value)
    }

    /// Whether `id` is an attachment id: a lowercase UUID, as every store makes them.
    /// - Parameter id: the id to check.
    /// - Returns: true for a lowercase UUID.
    public static func isWellFormedID(_ id: String) -> Bool {
        id.count == 36 && UUID(uuidString: id) != nil && id == id.lowercased()
    }

    /// `name` as the name header carries it.
    /// - Parameter name: the attachment's name.
    /// - Returns: its percent-encoded UTF-8.
    public static func headerValue(name: String) -> String {
        PercentEncoding.encode(name)
    }

    /// The name the name header carries; nil when it is not percent-encoded UTF-8.
    /// - Parameter value: the header's value.
    /// - Returns: the name.
    public static func name(headerValue value: String) -> String? {
        PercentEncoding.decode(value)
    }
}

/// The revision of a note a device's own change of one of its attachments made on the server,
/// and the one before it: `DELETE /v1/sync/notes/{note}/attachments/{id}`'s answer (`200`), and
/// part of `PATCH`'s (``SyncAttachmentChanged``). A device whose change of the note still
/// waits — a lock removal the server refused until then — makes it from the revision its own
/// step made, when that was the one it held, instead of a conflict copy. A `DELETE` answered
/// `204`, no body: the attachment was gone already (or an older server).
public struct SyncNoteRevisionStep: Codable, Equatable, Sendable {
    /// The note's revision before the change.
    public var revisionBefore: Int64
    /// The note's revision after it.
    public var revision: Int64

    public init(revisionBefore: Int64, revision: Int64) {
        self.revisionBefore = revisionBefore
        self.revision = revision
    }
}

/// `PATCH /v1/sync/notes/{note}/attachments/{id}`: an attachment left out of backups on a device,
/// or put back in. Answered with ``SyncAttachmentChanged``.
public struct SyncAttachmentBackupChange: Codable, Equatable, Sendable {
    public var excludedFromBackup: Bool

    public init(excludedFromBackup: Bool) {
        self.excludedFromBackup = excludedFromBackup
    }
}

/// `PUT` and `PATCH /v1/sync/notes/{note}/attachments/{id}`'s answer: the attachment as the
/// server holds it, and the revision step of its note the upload or the flag's change made. One
/// JSON object — the attachment's fields and the step's side by side — so an older device reads
/// it as the attachment alone.
public struct SyncAttachmentChanged: Codable, Equatable, Sendable {
    /// The attachment as the server holds it.
    public var attachment: SyncAttachment
    /// The note's revision step; nil when nothing changed (a retry finding it stored, a flag
    /// already so), or from an older server.
    public var step: SyncNoteRevisionStep?

    public init(attachment: SyncAttachment, step: SyncNoteRevisionStep?) {
        self.attachment = attachment
        self.step = step
    }

    public init(from decoder: any Decoder) throws {
        attachment = try SyncAttachment(from: decoder)
        step = try? SyncNoteRevisionStep(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try attachment.encode(to: encoder)
        try step?.encode(to: encoder)
    }
}
