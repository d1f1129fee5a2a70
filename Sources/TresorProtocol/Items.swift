import FoundationEssentials
import TresorModel

/// Which keychain a request is for: the user's `login` keychain (the default) or the
/// read-only `System Roots`.
public enum KeychainName {
    public static let login = "login"
    public static let systemRoots = "System Roots"

    /// What a created keychain's name may be, in words: what ``isValid(_:)`` checks.
    public static let rule = "a keychain's name is 1 to 64 letters, digits, '.', '_' or '-', beginning with a letter or digit, and not \(login)"

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
    public var keychain: String?
    public var itemClass: ItemClass
    public var attributes: ItemAttributes
    public var secret: Data
    /// For the `tresor` tool adding to another application's group: the user's presence.
    public var passcode: String?

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
    public var keychain: String?
    public var query: ItemQuery
    public var passcode: String?

    public init(keychain: String? = nil, query: ItemQuery, passcode: String? = nil) {
        self.keychain = keychain
        self.query = query
        self.passcode = passcode
    }
}

/// The answer to a search.
public struct ItemsResponse: Codable, Sendable {
    public var items: [KeychainItem]
    public init(items: [KeychainItem]) { self.items = items }
}

/// `POST /v1/items/update` (`SecItemUpdate`): set `changes` (and, if given, the secret) on
/// every item matching `query`.
public struct UpdateItemsRequest: Codable, Sendable {
    public var keychain: String?
    public var query: ItemQuery
    public var changes: ItemAttributes
    public var secret: Data?
    public var passcode: String?

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
    public var keychain: String?
    public var query: ItemQuery
    /// For the `tresor` tool deleting another application's items: the user's presence.
    public var passcode: String?

    public init(keychain: String? = nil, query: ItemQuery, passcode: String? = nil) {
        self.keychain = keychain
        self.query = query
        self.passcode = passcode
    }
}

/// How many items an update or delete changed.
public struct CountResponse: Codable, Sendable {
    public var count: Int
    public init(count: Int) { self.count = count }
}
