import Foundation

// Folders travel by name (docs/SYNC.md, "Notes"): a folder a device made or deleted — empty
// ones too, which no note carries — goes as such, and the device mirrors the account's folders.

/// `POST /v1/sync/folders`: the folders a device made and deleted since it last had the
/// account's folders (empty lists: only read them).
public struct SyncFolderChanges: Codable, Equatable, Sendable {
    /// The most names a request carries.
    public static let maxNames = 1_000

    public var created: [String]
    public var deleted: [String]

    public init(created: [String], deleted: [String]) {
        self.created = created
        self.deleted = deleted
    }
}

/// The account's folders on the server, by name.
public struct SyncFolders: Codable, Equatable, Sendable {
    public var names: [String]

    public init(names: [String]) {
        self.names = names
    }
}
