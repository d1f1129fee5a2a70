import FoundationEssentials

/// An item's attributes, named as Apple names them (`kSecAttrService` is `service`).
///
/// Every property is optional: in an item it is what was stored, in a query what must match,
/// in an update what changes. Which attributes apply to which ``ItemClass`` is checked by
/// ``validate(for:purpose:)``; `creationDate` and `modificationDate` are set by the keychain.
/// Each property has its line in ``ItemAttribute/all``, which everything that names attributes reads.
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
    /// Tresor's own, not Apple's: the `tresor` command-line tool may print this item's secret
    /// without the user present (no passcode, no terminal session) — for scripts. Marking an
    /// existing item needs the user's presence; `userPresence` items cannot be marked.
    public var readableByScripts: Bool?

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

extension ItemAttributes {
    /// Set to `true` in a decoder's `userInfo` to refuse attribute names this version does not
    /// know (``UnknownAttributeError``): Codable alone would silently drop a misspelt `acount`,
    /// and a query would then match more than asked. The daemon sets it for requests; stored
    /// items and a daemon's answers decode leniently.
    public static let refusesUnknownNames = CodingUserInfoKey(rawValue: "tresor.itemAttributes.refusesUnknownNames")!

    // Written out rather than synthesized: the synthesized decoder asks the JSON object for each
    // of the 35 names in turn, on every lookup (BENCHMARKS.md, "Measured design choices"). This reads the
    // names the object has, and checks them in the same pass, through ``ItemAttribute/named``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyAttributeName.self)
        let names = container.allKeys
        if decoder.userInfo[Self.refusesUnknownNames] as? Bool == true,
            let unknown = names.map(\.stringValue).filter({ ItemAttribute.named[$0] == nil }).min()
        {
            throw UnknownAttributeError(name: unknown)
        }
        for name in names {
            guard let attribute = ItemAttribute.named[name.stringValue] else { continue }
            switch attribute.value {
            case .text(_, let set): set(&self, try container.decodeIfPresent(String.self, forKey: name))
            case .integer(_, let set): set(&self, try container.decodeIfPresent(Int.self, forKey: name))
            case .fourCharCode(_, let set): set(&self, try container.decodeIfPresent(UInt32.self, forKey: name))
            case .boolean(_, let set): set(&self, try container.decodeIfPresent(Bool.self, forKey: name))
            case .bytes(_, let set): set(&self, try container.decodeIfPresent(Data.self, forKey: name))
            case .date(_, let set): set(&self, try container.decodeIfPresent(Date.self, forKey: name))
            case .protectionClass(_, let set): set(&self, try container.decodeIfPresent(ProtectionClass.self, forKey: name))
            case .accessControl(_, let set): set(&self, try container.decodeIfPresent(AccessControl.self, forKey: name))
            case .keyClass(_, let set): set(&self, try container.decodeIfPresent(KeyClass.self, forKey: name))
            case .stringMap(_, let set): set(&self, try container.decodeIfPresent([String: String].self, forKey: name))
            }
        }
    }
}

/// Any JSON object key, so that names the decoder does not know are seen too.
private struct AnyAttributeName: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

/// A request named an attribute the keychain does not know.
public struct UnknownAttributeError: Error, Equatable, CustomStringConvertible {
    public let name: String

    public init(name: String) {
        self.name = name
    }

    public var description: String { "unknown attribute \(String(name.prefix(64)).debugDescription)" }
}

extension ItemAttributes {
    /// The attributes that tell one item from another, as people read them (`service=…`): the
    /// access group, service, server, account and label that are set — never a secret. What
    /// `tresor approve` shows of an item and `tresor item get` of its candidates.
    public var identifying: [String] {
        [("group", accessGroup), ("service", service), ("server", server), ("account", account), ("label", label)]
            .compactMap { name, value in value.map { "\(name)=\($0)" } }
    }
}
