import Foundation

/// An item's attributes, named as Apple names them (`kSecAttrService` is `service`).
///
/// Every property is optional: in an item it is what was stored, in a query what must match,
/// in an update what changes. Which attributes apply to which ``ItemClass`` is checked by
/// ``validate(for:purpose:)``; `creationDate` and `modificationDate` are set by the keychain.
public struct ItemAttributes: Codable, Equatable, Sendable {
    // Every class
    public var accessGroup: String?
    public var accessible: ProtectionClass?
    public var accessControl: AccessControl?
    public var synchronizable: Bool?
    public var label: String?
    public var description: String?
    public var comment: String?
    public var creator: UInt32?
    public var type: UInt32?
    public var creationDate: Date?
    public var modificationDate: Date?
    /// Free-form string attributes, matched exactly (the Secret Service API's attribute map).
    public var custom: [String: String]?

    // Generic and internet passwords
    public var account: String?
    // Generic passwords
    public var service: String?
    public var generic: Data?
    // Internet passwords
    public var server: String?
    public var `protocol`: String?
    public var port: Int?
    public var path: String?
    public var authenticationType: String?
    public var securityDomain: String?

    // Certificates (filled from the DER when the item is added)
    public var certificateType: Int?
    public var certificateEncoding: Int?
    public var subject: Data?
    public var issuer: Data?
    public var serialNumber: Data?
    public var subjectKeyID: Data?
    public var publicKeyHash: Data?
    /// The subject as text, for people (`CN=…, O=…`).
    public var subjectSummary: String?

    // Keys
    public var keyClass: KeyClass?
    public var applicationLabel: Data?
    public var applicationTag: Data?
    public var keyType: String?
    public var keySizeInBits: Int?
    public var effectiveKeySize: Int?

    public init() {}

    /// `kSecAttrKeyClass`.
    public enum KeyClass: String, Codable, Sendable {
        case `public`, `private`, symmetric
    }
}
