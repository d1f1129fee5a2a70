import Foundation
import TresorModel
import TresorNotesDomain
import TresorWebStore

// The JSON shapes of the web API (docs/WEB.md, "Shapes"). They are built from the store's
// records for one account: `owner` and `canManage` depend on who is asking.

/// A note as listed.
struct WebNoteSummary: Encodable, Sendable {
    var id: String
    var title: String
    /// The folder's name and id; nil for a note without one, and for a note shared with me
    /// (its folder is the owner's).
    var folder: String?
    var folderID: String?
    var created: Date
    var modified: Date
    /// Pinned by its owner — false for a note shared with me (its pin is the owner's, as its
    /// folder is).
    var isPinned: Bool
    var attachmentCount: Int
    var lock: WebLockInfo?
    var isShared: Bool
    /// The owner's login name for a note shared with me; nil for my own.
    var owner: String?
    /// Whether I own it: delete, lock, share and manage participants.
    var canManage: Bool
    /// Counted up on every change: what a save names as `base.revision`.
    var revision: Int64
    /// When it was moved to Recently Deleted (nil: it is not there).
    var deleted: Date?
    /// In lists: the first line of text after the title, without markup (none for a locked note).
    var preview: String?

    init(_ summary: NoteSummary, for account: WebAccount, folders: [Folder]) {
        let mine = summary.sharing.map { $0.owner == account.name } ?? true
        id = summary.id
        title = summary.title
        folder = mine ? summary.folder : nil
        folderID = mine ? summary.folder.flatMap { name in folders.first { $0.name == name }?.id } : nil
        created = summary.created
        modified = summary.modified
        isPinned = mine && summary.isPinned
        attachmentCount = summary.attachmentCount
        lock = summary.lock.map(WebLockInfo.init)
        isShared = summary.sharing != nil
        owner = mine ? nil : summary.sharing?.owner
        canManage = mine
        revision = summary.revision
        deleted = summary.deleted
    }
}
