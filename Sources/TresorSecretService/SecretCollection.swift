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
    /// Adds an item to the caller's own group; with `replace`, an item of that group with exactly
    /// these attributes is changed instead. Returns its id and whether it was new.
    func create(label: String, attributes: [String: String], secret: SecretValue, replace: Bool, client: SecretServiceClient) throws -> (
        id: String, isNew: Bool
    )
    func update(_ id: String, label: String?, attributes: [String: String]?, client: SecretServiceClient) throws
    func setSecret(_ id: String, _ secret: SecretValue, client: SecretServiceClient) throws
    func delete(_ id: String, client: SecretServiceClient) throws
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
