import FoundationEssentials
import TresorKeychain

/// How a Secret Service item is kept in a keychain — one place for the provider's
/// `CreateItem` and the daemon's `tresor import secret-service`: a generic password whose
/// `service` is `org.freedesktop.secrets`, whose `account` is a random name (only there to keep
/// the keychain's primary key unique: the Secret Service allows equal attribute maps), whose
/// free-form attributes (`custom`) are the attribute map and whose `generic` attribute is the
/// content type in UTF-8.
public enum SecretServiceItems {
    public static let service = KeychainStore.secretServiceItemService

    /// Adds a new Secret Service item to `keychain`, in the caller's default access group.
    /// - Parameters:
    ///   - label: the item's label (at most 4 KiB).
    ///   - attributes: its attribute map (at most 64 pairs, names of 256 bytes, values of 4 KiB).
    ///   - secret: the secret's bytes.
    ///   - contentType: the secret's content type (at most 256 bytes).
    ///   - dates: the creation and modification dates to keep, for an item copied from another
    ///     provider; nil for now.
    ///   - keychain: where to keep it.
    ///   - caller: who adds it; the item goes to its ``Caller/defaultAccessGroup``.
    /// - Returns: the new item, without its secret.
    /// - Throws: ``KeychainError/param(_:)`` past a limit; any other ``KeychainError`` of the add.
    @discardableResult
    public static func add(
        label: String, attributes: [String: String], secret: Data, contentType: String,
        dates: (created: Date, modified: Date)? = nil, to keychain: KeychainStore, caller: Caller
    ) throws -> KeychainItem {
        try SecretLimits.check(label: label, attributes: attributes)
        guard contentType.utf8.count <= SecretLimits.contentTypeBytes else {
            throw KeychainError.param("a content type is at most \(SecretLimits.contentTypeBytes) bytes")
        }
        var values = ItemAttributes()
        values.service = service
        values.account = UUID().uuidString.lowercased()
        values.label = label
        values.custom = attributes
        values.generic = Data(contentType.utf8)
        return try keychain.add(.genericPassword, attributes: values, secret: secret, caller: caller, dates: dates)
    }

    /// The content type of a stored item (`text/plain` when none was kept).
    /// - Parameter attributes: the item's attributes.
    /// - Returns: its `generic` attribute as UTF-8.
    public static func contentType(of attributes: ItemAttributes?) -> String {
        attributes?.generic.flatMap { String(data: $0, encoding: .utf8) } ?? "text/plain"
    }

    /// Whether the caller's groups already hold an item with exactly this label, attribute map
    /// and secret (a copy made before).
    /// - Parameters:
    ///   - label: the label to match.
    ///   - attributes: the whole attribute map to match (not a subset).
    ///   - secret: the secret to match.
    ///   - keychain: where to look.
    ///   - caller: whose groups to look in; it must be allowed to read their secrets.
    /// - Returns: whether such an item is there.
    /// - Throws: ``KeychainError`` other than `itemNotFound`.
    public static func contains(
        label: String, attributes: [String: String], secret: Data, in keychain: KeychainStore, caller: Caller
    ) throws -> Bool {
        var query = ItemQuery(.genericPassword, limit: .all, returnData: true, returnAttributes: true)
        if !attributes.isEmpty { query.attributes.custom = attributes }
        let candidates: [KeychainItem]
        do {
            candidates = try keychain.copyMatching(query, caller: caller)
        } catch KeychainError.itemNotFound {
            return false
        }
        return candidates.contains { candidate in
            candidate.attributes?.label ?? "" == label && (candidate.attributes?.custom ?? [:]) == attributes
                && candidate.secret == secret
        }
    }
}
