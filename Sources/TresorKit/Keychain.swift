import FoundationEssentials
import Synchronization
import TresorModel
import TresorSystem

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
///
/// A keychain may be shared by every thread and task of a program. Each method comes twice:
/// blocking, and `async` — the `async` one never blocks a Swift concurrency thread, so a
/// server calls it from its request handlers. Calls that overlap get connections of their own.
public final class Keychain: Sendable {
    /// The first connection, also for the keybag's calls (`unlock`, `status`…).
    public let client: TresorClient
    /// The keychain the calls go to: nil for the login keychain, else one the user created
    /// (`tresor keychain create`).
    public let name: String?
    private let connections: ConnectionPool

    /// Connects to the daemon of `paths` (the default home), starting it when needed.
    /// - Parameters:
    ///   - paths: The home whose daemon to use.
    ///   - name: A keychain the user created, or nil for the login keychain.
    /// - Throws: ``TresorClientError`` when no daemon answers or starts.
    public init(paths: TresorPaths = TresorPaths(), named name: String? = nil) throws {
        client = try TresorClient.connect(paths: paths)
        self.name = name
        connections = ConnectionPool(client)
    }

    /// Uses a connection made already (another home, a test's daemon).
    /// - Parameters:
    ///   - client: The connection to use first.
    ///   - name: A keychain the user created, or nil for the login keychain.
    public init(client: TresorClient, named name: String? = nil) {
        self.client = client
        self.name = name
        connections = ConnectionPool(client)
    }

    /// Adds an item whose class and attributes are those of `item` (as `SecItemAdd` takes
    /// a query-shaped dictionary).
    /// - Parameters:
    ///   - item: The new item's class and primary-key attributes.
    ///   - secret: The secret to store (`kSecValueData`).
    ///   - configure: Sets more attributes, such as `accessible`.
    /// - Returns: The item as stored, with its id.
    /// - Throws: `APIError` (`duplicateItem`, `interactionNotAllowed`…).
    @discardableResult
    public func add(_ item: ItemQuery, secret: Data, configure: (inout ItemAttributes) -> Void = { _ in }) throws -> KeychainItem {
        var attributes = item.attributes
        configure(&attributes)
        return try add(item.itemClass, attributes: attributes, secret: secret)
    }

    /// Adds an item of `itemClass` with exactly `attributes`.
    /// - Parameters:
    ///   - itemClass: The item's class.
    ///   - attributes: Every attribute of the new item.
    ///   - secret: The secret to store.
    /// - Returns: The item as stored, with its id.
    /// - Throws: `APIError` (`duplicateItem`, `interactionNotAllowed`…).
    @discardableResult
    public func add(_ itemClass: ItemClass, attributes: ItemAttributes, secret: Data) throws -> KeychainItem {
        try add(itemClass, attributes: attributes, secret: secret, passcode: nil)
    }

    /// ``add(_:attributes:secret:)`` with the passcode the `tresor` tool gives to add to another
    /// application's group.
    /// - Parameters:
    ///   - itemClass: The item's class.
    ///   - attributes: Every attribute of the new item.
    ///   - secret: The secret to store.
    ///   - passcode: The passcode, when the `tresor` tool adds to another application's group.
    /// - Returns: The item as stored, with its id.
    /// - Throws: `APIError` (`duplicateItem`, `interactionNotAllowed`, `passcodeRequired`…).
    package func add(_ itemClass: ItemClass, attributes: ItemAttributes, secret: Data, passcode: String?) throws -> KeychainItem {
        try connections.use { try $0.addItem(itemClass, attributes: attributes, secret: secret, keychain: name, passcode: passcode) }
    }

    /// The secret of the first matching item.
    /// - Parameters:
    ///   - query: Which item.
    ///   - passcode: Needed for `userPresence` items.
    /// - Returns: The secret.
    /// - Throws: `APIError` (`itemNotFound`, `interactionNotAllowed`, `authFailed`…).
    public func secret(_ query: ItemQuery, passcode: String? = nil) throws -> Data {
        try connections.use { try $0.secret(matching: query, keychain: name, passcode: passcode) }
    }

    /// ``secret(_:passcode:)`` of the one item `query` names: `param` when several match (the
    /// `tresor` tool's `item get`, in one request).
    /// - Parameters:
    ///   - query: Which item.
    ///   - passcode: Needed for `userPresence` items.
    /// - Returns: The secret.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `param` when several do,
    ///   `interactionNotAllowed`, `authFailed`…).
    package func onlySecret(_ query: ItemQuery, passcode: String? = nil) throws -> Data {
        try connections.use { try $0.secret(matching: query, keychain: name, passcode: passcode, unique: true) }
    }

    /// The attributes of every matching item.
    /// - Parameter query: Which items.
    /// - Returns: Their attributes.
    /// - Throws: `APIError`: `itemNotFound` when none matches (as `SecItemCopyMatching`),
    ///   `interactionNotAllowed`…
    public func attributes(_ query: ItemQuery) throws -> [ItemAttributes] {
        try connections.use { try $0.attributes(matching: query, keychain: name) }
    }

    /// The matching items, with what `query` asks for (`returnData`, `returnAttributes`,
    /// `limit`), as `SecItemCopyMatching` answers.
    /// - Parameters:
    ///   - query: Which items, and what of them.
    ///   - passcode: Needed for the secrets of `userPresence` items.
    /// - Returns: The items.
    /// - Throws: `APIError`: `itemNotFound` when none matches (as `SecItemCopyMatching`),
    ///   `interactionNotAllowed`, `authFailed`…
    public func items(_ query: ItemQuery, passcode: String? = nil) throws -> [KeychainItem] {
        try connections.use { try $0.items(matching: query, keychain: name, passcode: passcode) }
    }

    /// Changes the matching items' attributes and, if given, their secret.
    /// - Parameters:
    ///   - query: Which items.
    ///   - secret: The new secret, or nil to keep each item's.
    ///   - changes: The attributes to change (those set).
    ///   - passcode: Needed for `userPresence` items.
    /// - Returns: How many items changed.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `duplicateItem` when two items would become alike…).
    @discardableResult
    public func update(_ query: ItemQuery, secret: Data? = nil, changes: ItemAttributes = ItemAttributes(), passcode: String? = nil) throws -> Int {
        try connections.use { try $0.updateItems(matching: query, changes: changes, secret: secret, keychain: name, passcode: passcode) }
    }

    /// Deletes the matching items.
    /// - Parameter query: Which items.
    /// - Returns: How many were deleted.
    /// - Throws: `APIError` (`interactionNotAllowed`…).
    @discardableResult
    public func delete(_ query: ItemQuery) throws -> Int {
        try delete(query, passcode: nil)
    }

    /// ``delete(_:)`` with the passcode the `tresor` tool gives to delete another application's items.
    /// - Parameters:
    ///   - query: Which items.
    ///   - passcode: The passcode, or nil.
    /// - Returns: How many were deleted.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `passcodeRequired`,
    ///   `interactionNotAllowed`…).
    @discardableResult
    package func delete(_ query: ItemQuery, passcode: String?) throws -> Int {
        try connections.use { try $0.deleteItems(matching: query, keychain: name, passcode: passcode) }
    }
}

// MARK: - async

extension Keychain {
    /// ``add(_:secret:configure:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - item: The new item's class and primary-key attributes.
    ///   - secret: The secret to store (`kSecValueData`).
    ///   - configure: Sets more attributes, such as `accessible`; called at once, on the
    ///     caller's task.
    /// - Returns: The item as stored, with its id.
    /// - Throws: `APIError` (`duplicateItem`, `interactionNotAllowed`…).
    @discardableResult
    public func add(_ item: ItemQuery, secret: Data, configure: @Sendable (inout ItemAttributes) -> Void = { _ in }) async throws -> KeychainItem {
        var attributes = item.attributes
        configure(&attributes)
        return try await add(item.itemClass, attributes: attributes, secret: secret)
    }

    /// ``add(_:attributes:secret:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - itemClass: The item's class.
    ///   - attributes: Every attribute of the new item.
    ///   - secret: The secret to store.
    /// - Returns: The item as stored, with its id.
    /// - Throws: `APIError` (`duplicateItem`, `interactionNotAllowed`…).
    @discardableResult
    public func add(_ itemClass: ItemClass, attributes: ItemAttributes, secret: Data) async throws -> KeychainItem {
        try await offloaded { try self.add(itemClass, attributes: attributes, secret: secret) }
    }

    /// ``secret(_:passcode:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - query: Which item.
    ///   - passcode: Needed for `userPresence` items.
    /// - Returns: The secret of the first matching item.
    /// - Throws: `APIError` (`itemNotFound`, `interactionNotAllowed`, `authFailed`…).
    public func secret(_ query: ItemQuery, passcode: String? = nil) async throws -> Data {
        try await offloaded { try self.secret(query, passcode: passcode) }
    }

    /// ``attributes(_:)`` without blocking a Swift concurrency thread.
    /// - Parameter query: Which items.
    /// - Returns: Their attributes.
    /// - Throws: `APIError`: `itemNotFound` when none matches, `interactionNotAllowed`…
    public func attributes(_ query: ItemQuery) async throws -> [ItemAttributes] {
        try await offloaded { try self.attributes(query) }
    }

    /// ``items(_:passcode:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - query: Which items, and what of them.
    ///   - passcode: Needed for the secrets of `userPresence` items.
    /// - Returns: The items.
    /// - Throws: `APIError`: `itemNotFound` when none matches, `interactionNotAllowed`,
    ///   `authFailed`…
    public func items(_ query: ItemQuery, passcode: String? = nil) async throws -> [KeychainItem] {
        try await offloaded { try self.items(query, passcode: passcode) }
    }

    /// ``update(_:secret:changes:passcode:)`` without blocking a Swift concurrency thread.
    /// - Parameters:
    ///   - query: Which items.
    ///   - secret: The new secret, or nil to keep each item's.
    ///   - changes: The attributes to change (those set).
    ///   - passcode: Needed for `userPresence` items.
    /// - Returns: How many items changed.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `duplicateItem` when two items
    ///   would become alike…).
    @discardableResult
    public func update(_ query: ItemQuery, secret: Data? = nil, changes: ItemAttributes = ItemAttributes(), passcode: String? = nil) async throws
        -> Int
    {
        try await offloaded { try self.update(query, secret: secret, changes: changes, passcode: passcode) }
    }

    /// ``delete(_:)`` without blocking a Swift concurrency thread.
    /// - Parameter query: Which items.
    /// - Returns: How many were deleted.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `interactionNotAllowed`…).
    @discardableResult
    public func delete(_ query: ItemQuery) async throws -> Int {
        try await offloaded { try self.delete(query) }
    }
}

extension ItemQuery {
    /// A generic password by service and account (`kSecClassGenericPassword`).
    /// - Parameters:
    ///   - service: The service (`kSecAttrService`).
    ///   - account: The account, or nil for any.
    ///   - accessGroup: The access group, or nil for every group the caller may use (when
    ///     adding: its default group).
    /// - Returns: A query for items of that service and account.
    public static func genericPassword(service: String, account: String? = nil, accessGroup: String? = nil) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = account
        attributes.accessGroup = accessGroup
        return ItemQuery(.genericPassword, attributes: attributes)
    }

    /// An internet password by server and the other parts of its primary key you know.
    /// - Parameters:
    ///   - server: The server's host name (`kSecAttrServer`).
    ///   - account: The account, or nil for any.
    ///   - protocol: The protocol (`kSecAttrProtocol`), or nil for any.
    ///   - port: The port, or nil for any.
    ///   - path: The path on the server, or nil for any.
    ///   - accessGroup: The access group, or nil for every group the caller may use (when
    ///     adding: its default group).
    /// - Returns: A query for items with those attributes.
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
    /// - Parameters:
    ///   - applicationTag: The tag.
    ///   - keyClass: Public, private or symmetric, or nil for any.
    ///   - accessGroup: The access group, or nil for every group the caller may use (when
    ///     adding: its default group).
    /// - Returns: A query for keys with that tag.
    public static func key(applicationTag: Data, keyClass: ItemAttributes.KeyClass? = nil, accessGroup: String? = nil) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.applicationTag = applicationTag
        attributes.keyClass = keyClass
        attributes.accessGroup = accessGroup
        return ItemQuery(.key, attributes: attributes)
    }

    /// A certificate by label (its subject's common name unless set otherwise).
    /// - Parameters:
    ///   - label: The label, or nil for any certificate.
    ///   - accessGroup: The access group, or nil for every group the caller may use (when
    ///     adding: its default group).
    /// - Returns: A query for certificates with that label.
    public static func certificate(label: String? = nil, accessGroup: String? = nil) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.label = label
        attributes.accessGroup = accessGroup
        return ItemQuery(.certificate, attributes: attributes)
    }
}
