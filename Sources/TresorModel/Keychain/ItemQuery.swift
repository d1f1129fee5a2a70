import FoundationEssentials

/// What `copyMatching`, `update` and `delete` look for: items of one class whose attributes
/// match every attribute set here (`SecItemCopyMatching`'s query dictionary, typed).
///
/// ```swift
/// var query = ItemQuery(.genericPassword)
/// query.attributes.service = "github.com"
/// query.returnData = true
/// ```
public struct ItemQuery: Codable, Equatable, Sendable {
    public enum Limit: String, Codable, Sendable {
        /// `kSecMatchLimitOne`
        case one
        /// `kSecMatchLimitAll`
        case all
    }

    public var itemClass: ItemClass
    /// Attributes that must match exactly. An unset `synchronizable` matches non-synchronizable
    /// items only, as on Apple systems.
    public var attributes: ItemAttributes
    /// Match one item by the id the keychain gave it.
    public var id: String?
    public var limit: Limit
    /// `kSecReturnData`: include the secret.
    public var returnData: Bool
    /// `kSecReturnAttributes`.
    public var returnAttributes: Bool

    public init(
        _ itemClass: ItemClass, attributes: ItemAttributes = ItemAttributes(), id: String? = nil,
        limit: Limit = .one, returnData: Bool = false, returnAttributes: Bool = true
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.id = id
        self.limit = limit
        self.returnData = returnData
        self.returnAttributes = returnAttributes
    }
}

/// One item as the keychain returns it.
public struct KeychainItem: Codable, Equatable, Sendable {
    public var id: String
    public var itemClass: ItemClass
    /// Present when the query asked for attributes.
    public var attributes: ItemAttributes?
    /// Present when the query asked for data (the secret).
    public var secret: Data?

    public init(id: String, itemClass: ItemClass, attributes: ItemAttributes?, secret: Data?) {
        self.id = id
        self.itemClass = itemClass
        self.attributes = attributes
        self.secret = secret
    }
}
