import FoundationEssentials
import TresorModel
import TresorProtocol

extension TresorClient {
    /// `SecItemAdd`: stores a new item in the login keychain, or the keychain called `keychain`.
    /// - Parameters:
    ///   - itemClass: the item's class.
    ///   - attributes: its attributes; those left unset take their defaults (the caller's
    ///     default group, `whenUnlocked`).
    ///   - secret: the secret, at most 256 KiB.
    ///   - keychain: a keychain the user created, or nil for the login keychain.
    ///   - passcode: the passcode, when the `tresor` tool adds to another application's group.
    /// - Returns: the item as stored, with its id and every attribute, never its secret.
    /// - Throws: `APIError` (`duplicateItem`, `interactionNotAllowed` while its class is locked,
    ///   `param` for a bad attribute, `readOnly` for System Roots, `noSuchKeychain`).
    package func addItem(_ itemClass: ItemClass, attributes: ItemAttributes, secret: Data, keychain: String? = nil, passcode: String? = nil) throws
        -> KeychainItem
    {
        try call(
            "POST", Route.addItem,
            AddItemRequest(keychain: keychain, itemClass: itemClass, attributes: attributes, secret: secret, passcode: passcode))
    }

    /// `SecItemCopyMatching`. `passcode` reveals secrets that need user presence.
    /// - Parameters:
    ///   - query: which items, and what of them (`limit`, `returnData`, `returnAttributes`).
    ///   - keychain: a keychain the user created, or nil for the login keychain.
    ///   - passcode: the passcode, for the secrets of `userPresence` items.
    /// - Returns: the matching items.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `interactionNotAllowed` while
    ///   their class is locked, `passcodeRequired` or `authFailed` for a secret that needs the
    ///   user present).
    package func items(matching query: ItemQuery, keychain: String? = nil, passcode: String? = nil) throws -> [KeychainItem] {
        let response: ItemsResponse = try call(
            "POST", Route.searchItems, SearchItemsRequest(keychain: keychain, query: query, passcode: passcode))
        return response.items
    }

    /// `SecItemCopyMatching` for one item's data: the secret of the first item matching `query`
    /// (its `limit`, `returnData` and `returnAttributes` are ignored). Asked as
    /// `GET /v1/items/secret`, without JSON, when the query's attributes are all text or integers
    /// (`ItemSecretQuery`); otherwise, or with a `passcode`, through `POST /v1/items/search`.
    /// - Parameters:
    ///   - query: which item.
    ///   - keychain: a keychain the user created, or nil for the login keychain.
    ///   - passcode: the passcode, for a `userPresence` item's secret.
    ///   - unique: the secret only if exactly one item matches, so a script never gets the
    ///     wrong one.
    /// - Returns: the secret.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `param` when several match and
    ///   `unique` is set, `interactionNotAllowed`, `passcodeRequired`, `authFailed`).
    package func secret(matching query: ItemQuery, keychain: String? = nil, passcode: String? = nil, unique: Bool = false) throws -> Data {
        if passcode == nil, let path = ItemSecretQuery.path(for: query, keychain: keychain, unique: unique) {
            return try callRaw("GET", path).body
        }
        var query = query
        (query.limit, query.returnData, query.returnAttributes) = (unique ? .all : .one, true, false)
        return try ItemSecretQuery.onlySecret(of: try items(matching: query, keychain: keychain, passcode: passcode))
    }

    /// `SecItemCopyMatching` for attributes: the attributes of every item matching `query` (its
    /// `limit`, `returnData` and `returnAttributes` are ignored). Asked as
    /// `GET /v1/items/attributes`, without JSON, when the query's attributes are all text or
    /// integers (`ItemSecretQuery`); otherwise through `POST /v1/items/search`.
    /// - Parameters:
    ///   - query: which items.
    ///   - keychain: a keychain the user created, or nil for the login keychain.
    /// - Returns: their attributes.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `interactionNotAllowed`), or
    ///   ``TresorClientError/protocolError(_:)`` when the answer is not the documented bytes.
    package func attributes(matching query: ItemQuery, keychain: String? = nil) throws -> [ItemAttributes] {
        if let path = ItemSecretQuery.attributesPath(for: query, keychain: keychain) {
            let body = try callRaw("GET", path).body
            do {
                return try ItemAttributesList.decode(body)
            } catch {
                throw TresorClientError.protocolError("the answer to \(Route.itemAttributes) is not the documented bytes: \(error)")
            }
        }
        var query = query
        (query.limit, query.returnData, query.returnAttributes) = (.all, false, true)
        return try items(matching: query, keychain: keychain).compactMap(\.attributes)
    }

    /// `SecItemUpdate`: returns how many items changed. All or nothing.
    /// - Parameters:
    ///   - query: which items (every match, whatever its `limit`).
    ///   - changes: the attributes to change (those set).
    ///   - secret: the new secret, or nil to keep each item's.
    ///   - keychain: a keychain the user created, or nil for the login keychain.
    ///   - passcode: the passcode, where the change needs the user present.
    /// - Returns: how many items changed.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `duplicateItem` when two items
    ///   would become alike, `interactionNotAllowed`, `passcodeRequired`, `readOnly`).
    @discardableResult
    package func updateItems(
        matching query: ItemQuery, changes: ItemAttributes, secret: Data? = nil, keychain: String? = nil, passcode: String? = nil
    ) throws -> Int {
        let response: CountResponse = try call(
            "POST", Route.updateItems,
            UpdateItemsRequest(keychain: keychain, query: query, changes: changes, secret: secret, passcode: passcode))
        return response.count
    }

    /// `SecItemDelete`: returns how many items were deleted.
    /// - Parameters:
    ///   - query: which items (every match, whatever its `limit`).
    ///   - keychain: a keychain the user created, or nil for the login keychain.
    ///   - passcode: the passcode, when the `tresor` tool deletes another application's items.
    /// - Returns: how many items were deleted.
    /// - Throws: `APIError` (`itemNotFound` when none matches, `interactionNotAllowed`,
    ///   `passcodeRequired`, `readOnly` for System Roots).
    @discardableResult
    package func deleteItems(matching query: ItemQuery, keychain: String? = nil, passcode: String? = nil) throws -> Int {
        let response: CountResponse = try call("POST", Route.deleteItems, DeleteItemsRequest(keychain: keychain, query: query, passcode: passcode))
        return response.count
    }

    // MARK: Applications (the tresor CLI only)

    /// Registers an executable as an application (the `tresor` CLI only; needs the passcode
    /// when one is set).
    /// - Parameters:
    ///   - id: The application id, `TEAM.name`.
    ///   - team: The team id.
    ///   - executablePath: The executable the daemon will recognise (by its hash).
    ///   - accessGroups: Shared access groups of the team, beyond the application's own.
    ///   - passcode: The keybag's passcode.
    ///   - usesSecretService: Whether its items are served to it on the Secret Service (D-Bus) too.
    ///   - isDevelopmentBuild: Identify it by its path, not its content, so rebuilds keep its
    ///     items (socket API only; weaker: `Application.isDevelopmentBuild`).
    /// - Returns: The application as registered.
    /// - Throws: `APIError` (`authFailed` for a wrong passcode, `param` for a bad id…).
    public func registerApplication(
        id: String, team: String, executablePath: String, accessGroups: [String], passcode: String?, usesSecretService: Bool = false,
        isDevelopmentBuild: Bool = false
    ) throws -> Application {
        try call(
            "POST", Route.applications,
            RegisterApplicationRequest(
                applicationID: id, teamID: team, executablePath: executablePath, accessGroups: accessGroups, passcode: passcode,
                usesSecretService: usesSecretService, isDevelopmentBuild: isDevelopmentBuild))
    }

    /// The registered applications (the `tresor` CLI only).
    /// - Returns: Every application, with its groups and executable hash.
    /// - Throws: `APIError` (`missingEntitlement` for any other caller).
    public func applications() throws -> [Application] {
        let response: ApplicationsResponse = try call("GET", Route.applications)
        return response.applications
    }

    /// Unregisters an application (the `tresor` CLI only); its items stay.
    /// - Parameters:
    ///   - id: The application id.
    ///   - passcode: The keybag's passcode (needed when it has one).
    /// - Throws: `APIError` (`notFound` for an unknown id, `authFailed` for a wrong or missing
    ///   passcode).
    public func removeApplication(id: String, passcode: String?) throws {
        try callExpectingNoContent("POST", Route.removeApplication, RemoveApplicationRequest(applicationID: id, passcode: passcode))
    }
}
