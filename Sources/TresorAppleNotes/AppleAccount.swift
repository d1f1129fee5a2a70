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

    /// A folder from its parts.
    public init(id: Int64, title: String, accountID: Int64?) {
        self.id = id
        self.title = title
        self.accountID = accountID
    }
}
