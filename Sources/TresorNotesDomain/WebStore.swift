import Foundation
import TresorModel

/// Where the web side keeps its accounts, folders, notes, passphrase records, shares and
/// attachments (docs/ARCHITECTURE.md, "The web storage boundary"). Two stores answer it: the
/// embedded one over a home's notes database (SQLite, `TresorWebStoreSQLite`) and the server's
/// (PostgreSQL, `TresorWebStorePostgres`), and one conformance suite holds both to the same
/// answers. Every method is one step: it checks, changes and announces atomically, or throws and
/// changes nothing. Errors are ``NotesError``s; a store that cannot reach its storage throws
/// ``NotesError/unavailable(_:)``.
///
/// Both mean the same by a revision and by an announcement: a note's `revision` counts up with
/// every change another device must fetch again — its title, body, pin, folder, lock,
/// attachments, place in Recently Deleted, participants, and its key's wrapping — and every change
/// of what a client shows is announced (``NoteChange``, on the backend's ``WebEventBus``) with the
/// revision it made. A note in Recently Deleted is not edited, locked, re-wrapped alone, or given or
/// relieved of an attachment (``NotesError/invalid(_:)``: restore it first); a passphrase change
/// re-wraps it with the rest.
///
/// Callers check access first (``access(toNote:for:includingDeleted:)``); the methods that name
/// a note trust that check, as the routes make it for every request.
///
/// Each area is a protocol of its own, in a file of its own — ``AccountStore``,
/// ``FoldersAndNotesStore``, ``SharingStore``, ``RecentlyDeletedStore``, ``AttachmentStore``,
/// ``LockedNoteStore``, ``WidgetStore`` — and each store answers it in its `+Area` file; this
/// protocol is all of them, for callers that need every area.
public protocol WebStore: AccountStore, FoldersAndNotesStore, SharingStore, RecentlyDeletedStore, AttachmentStore, LockedNoteStore, WidgetStore {
    /// Returns when the storage answers (`GET /healthz`).
    /// - Throws: ``NotesError/unavailable(_:)`` when it does not.
    func checkHealth() async throws
}

/// A web account's storage limit, checked in the same step as the write that would exceed it,
/// so two concurrent writes of one account cannot both take the last room.
public struct StorageQuota: Sendable, Equatable {
    /// Bytes the account may store in all.
    public var limitBytes: Int64
    /// Bytes this write adds at most.
    public var addingBytes: Int

    public init(limitBytes: Int64, addingBytes: Int) {
        self.limitBytes = limitBytes
        self.addingBytes = addingBytes
    }

    /// Throws ``NotesError/quotaExceeded(_:)`` when `used` plus this write passes the limit.
    /// - Parameter used: the bytes the account stores now.
    /// - Throws: ``NotesError/quotaExceeded(_:)``.
    public func check(used: Int64) throws {
        guard used + Int64(addingBytes) <= limitBytes else {
            throw NotesError.quotaExceeded(
                "this account stores \(ByteSize(used)) of its \(ByteSize(limitBytes)): no room for \(ByteSize(addingBytes)) more")
        }
    }

}
