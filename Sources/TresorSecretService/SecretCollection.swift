import FoundationEssentials
import TresorKeychain

/// One Secret Service item as a client sees it.
struct SecretItem: Sendable {
    var id: String
    var label: String
    var attributes: [String: String]
    var created: Date
    var modified: Date
    /// The item's secret needs the user present (`userPresence`) and this client holds no
    /// approval for it: the item is *locked* for it until an `Unlock` prompt is approved.
    var needsPresence = false
}

/// A secret with its content type (`text/plain` when a client gave none).
struct SecretValue: Sendable {
    var bytes: [UInt8]
    var contentType: String
}

/// Where a collection's items live: the login keychain, or memory. Every method sees only the
/// items of the caller's access groups — another application's items are not there for it.
protocol SecretCollection: Sendable {
    var name: String { get }
    var created: Date { get }
    /// Whether the collection's items are unreadable now (the keybag is locked).
    var isLocked: Bool { get }
    /// Items whose attributes contain every pair of `attributes`: readable ones, and the ids of
    /// those that match but are locked.
    func search(_ attributes: [String: String], client: SecretServiceClient) throws -> (unlocked: [SecretItem], locked: [String])
    /// - Throws: `KeychainError.itemNotFound` for an item that is not there *for this caller*.
    func item(_ id: String, client: SecretServiceClient) throws -> SecretItem
    func secret(_ id: String, client: SecretServiceClient) throws -> SecretValue
    /// Adds an item to the caller's own group. Returns its id.
    func create(label: String, attributes: [String: String], secret: SecretValue, client: SecretServiceClient) throws -> String
    /// The item of the caller's own group with exactly `attributes`, which `CreateItem` with
    /// `replace` changes instead of adding one; nil when there is none.
    func existing(matching attributes: [String: String], client: SecretServiceClient) throws -> String?
    func update(_ id: String, label: String?, attributes: [String: String]?, client: SecretServiceClient) throws
    func setSecret(_ id: String, _ secret: SecretValue, client: SecretServiceClient) throws
    func delete(_ id: String, client: SecretServiceClient) throws
}

/// What came of `CreateItem` (``SecretCollection/store(label:attributes:secret:replace:client:)``).
enum StoredItem: Equatable {
    /// A new item, with this id.
    case created(String)
    /// The caller's item with the same attributes, changed.
    case replaced(String)
    /// The caller's item with the same attributes would be replaced, but the client may change
    /// it only with the user's approval (``SecretServiceClient/mustAsk(for:)``): nothing was stored.
    case waitsForApproval(String)

    /// The item's id, whichever came of it.
    var id: String {
        switch self {
        case .created(let id), .replaced(let id), .waitsForApproval(let id): id
        }
    }
}

extension SecretCollection {
    /// `CreateItem`: adds an item to the caller's own group; with `replace`, the item of that group
    /// with exactly these attributes is changed instead — unless the client must ask the user
    /// first (a generic client the user does not trust now), in which case nothing is stored.
    func store(label: String, attributes: [String: String], secret: SecretValue, replace: Bool, client: SecretServiceClient) throws -> StoredItem {
        try SecretLimits.check(label: label, attributes: attributes)
        if replace, let id = try existing(matching: attributes, client: client) {
            guard !client.mustAsk(for: id) else { return .waitsForApproval(id) }
            try self.replace(id, label: label, secret: secret, client: client)
            return .replaced(id)
        }
        return .created(try create(label: label, attributes: attributes, secret: secret, client: client))
    }

    /// Gives item `id` a new label and secret, as a replacing `CreateItem` does.
    func replace(_ id: String, label: String, secret: SecretValue, client: SecretServiceClient) throws {
        try update(id, label: label, attributes: nil, client: client)
        try setSecret(id, secret, client: client)
    }
}

/// Limits on what a client may store through the Secret Service (the keychain has its own too).
enum SecretLimits {
    static let labelBytes = 4 * 1024
    static let attributeCount = 64
    static let attributeBytes = 4 * 1024
    static let contentTypeBytes = 256

    static func check(label: String?, attributes: [String: String]?) throws {
        if let label, label.utf8.count > labelBytes {
            throw KeychainError.param("a label is at most \(labelBytes) bytes")
        }
        if let attributes {
            guard attributes.count <= attributeCount else { throw KeychainError.param("at most \(attributeCount) attributes") }
            guard attributes.allSatisfy({ $0.key.utf8.count <= 256 && $0.value.utf8.count <= attributeBytes }) else {
                throw KeychainError.param("attribute names are at most 256 bytes, values at most \(attributeBytes)")
            }
        }
    }
}
