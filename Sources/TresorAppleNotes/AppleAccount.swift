/// An Apple Notes account: a ZICCLOUDSYNCINGOBJECT row with a `ZNAME`.
public struct AppleAccount: Sendable, Equatable {
    /// The account's `Z_PK`.
    public var id: Int64
    /// Its name as Notes shows it, e.g. "iCloud" or "On My Mac".
    public var name: String

    /// An account from its parts.
    public init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }
}

/// An Apple Notes folder: a ZICCLOUDSYNCINGOBJECT row with a `ZTITLE2`.
public struct AppleFolder: Sendable, Equatable {
    /// The folder's `Z_PK`.
    public var id: Int64
    /// Its title.
    public var title: String
    /// The ``AppleAccount/id`` of the account it belongs to (`ZOWNER`, else a `ZACCOUNT…`
    /// column), or nil when that names no account of the library.
    public var accountID: Int64?
    /// The ``AppleFolder/id`` of the folder it is nested in (`ZPARENT`), or nil for a folder at
    /// the top of its account.
    public var parentID: Int64?
    /// Whether it is the account's Recently Deleted (`ZFOLDERTYPE` 1), whatever its title in the
    /// user's language.
    public var isRecentlyDeleted: Bool

    /// A folder from its parts.
    public init(id: Int64, title: String, accountID: Int64?, parentID: Int64? = nil, isRecentlyDeleted: Bool = false) {
        self.id = id
        self.title = title
        self.accountID = accountID
        self.parentID = parentID
        self.isRecentlyDeleted = isRecentlyDeleted
    }
}
