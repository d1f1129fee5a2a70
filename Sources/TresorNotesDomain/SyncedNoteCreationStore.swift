import Foundation

/// Which device made a note, and its own id of it (docs/SYNC.md, "Notes"): a device's new note
/// is remembered by its origin, so a creation retried after a lost answer finds the note.
public struct NoteOrigin: Sendable, Equatable {
    /// The device's id in its sync account.
    public var device: String
    /// The device's own id of the note.
    public var localID: String

    public init(device: String, localID: String) {
        self.device = device
        self.localID = localID
    }
}

/// Where and when a device made a change it syncs (docs/SYNC.md, "Notes").
public struct SyncedEdit: Sendable, Equatable {
    /// The device's name: a conflict copy the change causes is "from" it.
    public var device: String
    /// When the device's version was made or last edited; nil: now. A server never dates a note
    /// later than its own clock, nor moves a note's time back.
    public var editedAt: Date?
    /// When the device made the note (a new note keeps it); nil: now.
    public var created: Date?

    public init(device: String, editedAt: Date? = nil, created: Date? = nil) {
        self.device = device
        self.editedAt = editedAt
        self.created = created
    }
}

/// Creating a device's note and remembering its origin in one transaction (the server's store:
/// docs/SYNC.md, "Notes"), so that no server dying between the two can make a retried creation
/// a second note.
public protocol SyncedNoteCreationStore: Sendable {
    /// The note `origin` made, when it still exists; else a new note of `account` made from
    /// `draft` — locked with `locked` when given, in Recently Deleted when `inRecentlyDeleted` —
    /// remembered as `origin`'s. All in one transaction under the account's lock.
    /// - Parameters:
    ///   - draft: title, body, folder and pin (the body is empty for a locked note).
    ///   - locked: a locked note's sealed record, or nil.
    ///   - inRecentlyDeleted: whether it is in Recently Deleted on the device.
    ///   - origin: the device and its id of the note.
    ///   - edit: the device, and when it made and last edited the note (the note keeps both).
    ///   - account: the owner.
    ///   - quota: the owner's storage quota, checked in the same transaction; nil for none.
    /// - Returns: the note's id, and whether this call made it.
    /// - Throws: ``NotesError/invalid(_:)``, ``NotesError/quotaExceeded(_:)``, ``NotesError/unavailable(_:)``.
    func createSyncedNote(
        _ draft: NoteDraft, locked: SyncedLockedRecord?, inRecentlyDeleted: Bool, origin: NoteOrigin, edit: SyncedEdit, account: AccountID,
        quota: StorageQuota?
    ) async throws -> (id: String, created: Bool)
}
