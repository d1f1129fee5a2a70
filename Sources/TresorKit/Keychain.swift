import FoundationEssentials
import TresorModel

/// The keychain, from an application's side: what `SecItemAdd`, `SecItemCopyMatching`,
/// `SecItemUpdate` and `SecItemDelete` do on Apple systems.
///
/// ```swift
/// import TresorKit
///
/// let keychain = try Keychain()
/// let token = ItemQuery.genericPassword(service: "api.example.com", account: "ci")
/// try keychain.add(token, secret: Data("s3cr3t".utf8))
/// let secret = try keychain.secret(token)              // Data("s3cr3t")
/// try keychain.update(token, secret: Data("n3w".utf8))
/// try keychain.delete(token)
/// ```
///
/// Failures are `APIError`s whose `osStatus` is Apple's: `-25299` duplicate item, `-25300`
/// item not found, `-25308` interaction not allowed (locked), `-34018` missing entitlement.
/// Only executables registered with `tresor app register` may use the keychain.
public final class Keychain {
    public let client: TresorClient

    /// Connects to the daemon of `paths` (the default home), starting it when needed.
    public init(paths: TresorPaths = TresorPaths()) throws {
        client = try TresorClient.connect(paths: paths)
    }

    public init(client: TresorClient) {
        self.client = client
    }

    /// Adds an item whose class and attributes are those of `item` (as `SecItemAdd` takes
    /// a query-shaped dictionary). `configure` sets more attributes, such as `accessible`.
    @discardableResult
    public func add(_ item: ItemQuery, secret: Data, configure: (inout ItemAttributes) -> Void = { _ in }) throws -> KeychainItem {
        var attributes = item.attributes
        configure(&attributes)
        return try client.addItem(item.itemClass, attributes: attributes, secret: secret)
    }

    /// The secret of the first matching item. `passcode` is needed for `userPresence` items.
    public func secret(_ query: ItemQuery, passcode: String? = nil) throws -> Data {
        try client.secret(matching: query, passcode: passcode)
    }

    /// The attributes of every matching item.
    public func attributes(_ query: ItemQuery) throws -> [ItemAttributes] {
        var query = query
        query.limit = .all
        query.returnData = false
        query.returnAttributes = true
        return try client.items(matching: query).compactMap(\.attributes)
    }

    /// Changes the matching items' attributes and, if given, their secret.
    @discardableResult
    public func update(_ query: ItemQuery, secret: Data? = nil, changes: ItemAttributes = ItemAttributes(), passcode: String? = nil) throws -> Int {
        try client.updateItems(matching: query, changes: changes, secret: secret, passcode: passcode)
    }

    /// Deletes the matching items.
    @discardableResult
    public func delete(_ query: ItemQuery) throws -> Int {
        try client.deleteItems(matching: query)
    }
}

extension ItemQuery {
    /// A generic password by service and account (`kSecClassGenericPassword`).
    public static func genericPassword(service: String, account: String? = nil, accessGroup: String? = nil) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = account
        attributes.accessGroup = accessGroup
        return ItemQuery(.genericPassword, attributes: attributes)
    }

    /// An internet password by server and the other parts of its primary key you know.
    public static func internetPassword(
        server: String, account: String? = nil, protocol: String? = nil, port: Int? = nil, path: String? = nil,
        accessGroup: String? = nil
    ) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.server = server
        attributes.account = account
        attributes.protocol = `protocol`
        attributes.port = port
        attributes.path = path
        attributes.accessGroup = accessGroup
        return ItemQuery(.internetPassword, attributes: attributes)
    }

    /// A key by its application tag (`kSecAttrApplicationTag`).
    public static func key(applicationTag: Data, keyClass: ItemAttributes.KeyClass? = nil, accessGroup: String? = nil) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.applicationTag = applicationTag
        attributes.keyClass = keyClass
        attributes.accessGroup = accessGroup
        return ItemQuery(.key, attributes: attributes)
    }

    /// A certificate by label (its subject's common name unless set otherwise).
    public static func certificate(label: String? = nil, accessGroup: String? = nil) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.label = label
        attributes.accessGroup = accessGroup
        return ItemQuery(.certificate, attributes: attributes)
    }
}
