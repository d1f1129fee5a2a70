import FoundationEssentials
import TresorModel

/// Which keychain a request is for: the user's `login` keychain (the default), the read-only
/// `System Roots`, or a keychain the user created, by its name.
public enum KeychainName {
    /// The user's login keychain, what a request without a `keychain` is for.
    public static let login = "login"
    /// The operating system's CA certificates, read-only: any client may search it, none may change it.
    public static let systemRoots = "System Roots"

    /// What a created keychain's name may be, in words: what ``isValid(_:)`` checks.
    public static let rule = "a keychain's name is 1 to 64 of A-Z, a-z, 0-9, '.', '_' or '-', beginning with a letter or digit, and not \(login)"

    /// Whether `name` may name a keychain the user creates (its files are named after it).
    /// - Parameter name: the name.
    /// - Returns: true when it follows ``rule``.
    public static func isValid(_ name: String) -> Bool {
        name != login && name.wholeMatch(of: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/) != nil
    }
}

/// `POST /v1/items/add` (`SecItemAdd`). `secret` travels Base64-encoded inside the JSON —
/// a transport encoding, not protection: the socket is private to the user.
public struct AddItemRequest: Codable, Sendable {
    /// The keychain to add to: `login` (also when nil), or a created keychain's name.
    public var keychain: String?
    /// The new item's class (`genp`, `inet`, `cert`, `keys`).
    public var itemClass: ItemClass
    /// The new item's attributes; unset ones take their defaults (`accessGroup`, `accessible`,
    /// `synchronizable`), and a certificate's are read from it.
    public var attributes: ItemAttributes
    /// The secret (for `cert` the DER certificate), 0 to 262,144 bytes.
    public var secret: Data
    /// For the `tresor` tool adding to another application's group: the user's presence (or a
    /// terminal session). Not checked when not needed.
    public var passcode: String?

    /// Makes an add request; the parameters are the properties of the same names.
    public init(keychain: String? = nil, itemClass: ItemClass, attributes: ItemAttributes, secret: Data, passcode: String? = nil) {
        self.keychain = keychain
        self.itemClass = itemClass
        self.attributes = attributes
        self.secret = secret
        self.passcode = passcode
    }
}

/// `POST /v1/items/search` (`SecItemCopyMatching`). `passcode` is needed to reveal the secret
/// of a `userPresence` item, or — for the `tresor` CLI — of another application's item.
public struct SearchItemsRequest: Codable, Sendable {
    /// The keychain to search: `login` (also when nil), `System Roots`, or a created keychain's name.
    public var keychain: String?
    /// What to find and what to return.
    public var query: ItemQuery
    /// The user's presence, when the request needs it (as above); not checked when not needed.
    public var passcode: String?

    /// Makes a search request; the parameters are the properties of the same names.
    public init(keychain: String? = nil, query: ItemQuery, passcode: String? = nil) {
        self.keychain = keychain
        self.query = query
        self.passcode = passcode
    }
}

/// The answer to a search.
public struct ItemsResponse: Codable, Sendable {
    /// The matching items, at least one (nothing matching is `404 itemNotFound`), in no set order;
    /// each with its attributes and secret as the query asked.
    public var items: [KeychainItem]
    /// Makes a search answer; the parameter is the property of the same name.
    public init(items: [KeychainItem]) { self.items = items }
}

/// `POST /v1/items/update` (`SecItemUpdate`): set `changes` (and, if given, the secret) on
/// every item matching `query`.
public struct UpdateItemsRequest: Codable, Sendable {
    /// The keychain: `login` (also when nil), or a created keychain's name.
    public var keychain: String?
    /// The items to change: every match, whatever its `limit`.
    public var query: ItemQuery
    /// The attributes to set on every match; attributes left unset stay as they are.
    public var changes: ItemAttributes
    /// A new secret for every match (up to 262,144 bytes; not for certificates); nil keeps it.
    public var secret: Data?
    /// The user's presence: needed to replace the secret of a `userPresence` item and, for the
    /// `tresor` CLI, to replace a secret, change another application's item or mark one
    /// `readableByScripts` (unless a terminal session proves it).
    public var passcode: String?

    /// Makes an update request; the parameters are the properties of the same names.
    public init(keychain: String? = nil, query: ItemQuery, changes: ItemAttributes, secret: Data? = nil, passcode: String? = nil) {
        self.keychain = keychain
        self.query = query
        self.changes = changes
        self.secret = secret
        self.passcode = passcode
    }
}

/// `POST /v1/items/delete` (`SecItemDelete`).
public struct DeleteItemsRequest: Codable, Sendable {
    /// The keychain: `login` (also when nil), or a created keychain's name.
    public var keychain: String?
    /// The items to delete: every match, whatever its `limit`.
    public var query: ItemQuery
    /// For the `tresor` tool deleting another application's items: the user's presence (or a
    /// terminal session).
    public var passcode: String?

    /// Makes a delete request; the parameters are the properties of the same names.
    public init(keychain: String? = nil, query: ItemQuery, passcode: String? = nil) {
        self.keychain = keychain
        self.query = query
        self.passcode = passcode
    }
}

/// How many items an update or delete changed.
public struct CountResponse: Codable, Sendable {
    /// How many items changed: at least one (nothing matching is `404 itemNotFound`).
    public var count: Int
    /// Makes a count answer; the parameter is the property of the same name.
    public init(count: Int) { self.count = count }
}
