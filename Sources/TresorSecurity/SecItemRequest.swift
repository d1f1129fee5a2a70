import Foundation
import TresorModel

/// A SecItem dictionary read into Tresor's types, or the `OSStatus` that says why it cannot be.
struct SecItemRequest {
    /// What the dictionary is for: the keys each accepts differ.
    enum Purpose {
        /// `SecItemAdd`'s attributes.
        case add
        /// The query of `SecItemCopyMatching`, `SecItemUpdate` or `SecItemDelete`.
        case search
        /// `SecItemUpdate`'s attributes to change.
        case changes
    }

    enum Limit: Equatable {
        case one, all, count(Int)
    }

    var itemClass: ItemClass?
    var isIdentity = false
    var attributes = ItemAttributes()
    /// `kSecAttrSynchronizable: kSecAttrSynchronizableAny`.
    var matchesAnySynchronizable = false
    var secret: Data?
    var id: String?
    var limit = Limit.one
    var returnData = false
    var returnAttributes = false
    var returnPersistentReference = false
    var accessControl: SecAccessControl?

    /// - Throws: ``SecItemFailure`` with `errSecParam` (a key or value Tresor does not take
    ///   here) or `errSecUnimplemented` (references to Security objects).
    init(_ dictionary: NSDictionary, purpose: Purpose) throws {
        var pending: [(String, Any)] = []
        for (key, value) in dictionary {
            guard let key = key as? String else { throw SecItemFailure(errSecParam) }
            switch key {
            case Key.kSecClass:
                guard purpose != .changes, let name = value as? String else { throw SecItemFailure(errSecParam) }
                if name == kSecClassIdentity as String {
                    isIdentity = true
                } else {
                    guard let itemClass = SecItemValues.classes[name] else { throw SecItemFailure(errSecParam) }
                    self.itemClass = itemClass
                }
            case Key.kSecValueData:
                // In a search the data is not a criterion (Apple ignores it there too).
                guard purpose != .search else { continue }
                guard let data = value as? Data else { throw SecItemFailure(errSecParam) }
                secret = data
            case Key.kSecValueRef, Key.kSecReturnRef:
                throw SecItemFailure(errSecUnimplemented)
            case Key.kSecValuePersistentRef:
                guard purpose == .search, let reference = value as? Data,
                    let id = SecItemValues.id(fromPersistentReference: reference)
                else { throw SecItemFailure(errSecParam) }
                self.id = id
            case Key.kSecReturnData, Key.kSecReturnAttributes, Key.kSecReturnPersistentRef:
                guard purpose != .changes, let flag = SecItemValues.boolean(value) else { throw SecItemFailure(errSecParam) }
                if key == kSecReturnData as String { returnData = flag }
                if key == kSecReturnAttributes as String { returnAttributes = flag }
                if key == kSecReturnPersistentRef as String { returnPersistentReference = flag }
            case Key.kSecMatchLimit:
                guard purpose != .changes else { throw SecItemFailure(errSecParam) }
                if let name = value as? String, name == kSecMatchLimitOne as String {
                    limit = .one
                } else if let name = value as? String, name == kSecMatchLimitAll as String {
                    limit = .all
                } else if !(value is Bool), let count = value as? Int, count > 0 {
                    limit = count == 1 ? .one : .count(count)
                } else {
                    throw SecItemFailure(errSecParam)
                }
            case Key.kSecAttrSynchronizable:
                if let name = value as? String, name == kSecAttrSynchronizableAny as String {
                    guard purpose == .search else { throw SecItemFailure(errSecParam) }
                    matchesAnySynchronizable = true
                } else if let flag = SecItemValues.boolean(value) {
                    attributes.synchronizable = flag
                } else {
                    throw SecItemFailure(errSecParam)
                }
            case Key.kSecAttrAccessible:
                guard let name = value as? String, let protection = SecItemValues.protectionClass(name) else {
                    throw SecItemFailure(errSecParam)
                }
                attributes.accessible = protection
            case Key.kSecAttrAccessControl:
                guard purpose != .search, let control = value as? SecAccessControl else { throw SecItemFailure(errSecParam) }
                accessControl = control
            case Key.kSecUseDataProtectionKeychain, Key.kSecUseOperationPrompt, Key.kSecUseAuthenticationUI,
                Key.kSecUseAuthenticationContext:
                continue
            default:
                // Attributes wait until the class is known: for keys, `type` is the key type.
                pending.append((key, value))
            }
        }
        let table = SecItemValues.attributes(for: itemClass ?? .genericPassword)
        for (key, value) in pending {
            guard let attribute = table[key], attribute.set(&attributes, value) else { throw SecItemFailure(errSecParam) }
        }
        if let accessControl {
            // Apple refuses both ways of saying the protection class in one dictionary.
            guard attributes.accessible == nil else { throw SecItemFailure(errSecParam) }
            attributes.accessible = accessControl.protection
            attributes.accessControl = accessControl.accessControl
        }
    }

    /// Refuses a search without a class Tresor stores, with Apple's status: identities are
    /// never found (`errSecItemNotFound`), no class at all is `errSecParam`.
    func requireSearchableClass() throws {
        guard itemClass == nil else { return }
        throw SecItemFailure(isIdentity ? errSecItemNotFound : errSecParam)
    }

    /// The searches this request stands for: two when it matches synchronizable and
    /// non-synchronizable items alike.
    func queries(returnData: Bool, returnAttributes: Bool) -> [ItemQuery] {
        guard let itemClass else { return [] }
        let variants: [Bool?] = matchesAnySynchronizable ? [nil, true] : [attributes.synchronizable]
        return variants.map { synchronizable in
            var attributes = attributes
            attributes.synchronizable = synchronizable
            return ItemQuery(
                itemClass, attributes: attributes, id: id, limit: limit == .one ? .one : .all, returnData: returnData,
                returnAttributes: returnAttributes)
        }
    }
}

/// A SecItem call ends with this status.
struct SecItemFailure: Error {
    let status: OSStatus
    init(_ status: OSStatus) { self.status = status }
}

/// The keys as Swift strings, for `switch`: a `case kSecClass as String` would be a cast pattern.
private enum Key {
    static let kSecAttrAccessControl = TresorSecurity.kSecAttrAccessControl as String
    static let kSecAttrAccessible = TresorSecurity.kSecAttrAccessible as String
    static let kSecAttrSynchronizable = TresorSecurity.kSecAttrSynchronizable as String
    static let kSecClass = TresorSecurity.kSecClass as String
    static let kSecMatchLimit = TresorSecurity.kSecMatchLimit as String
    static let kSecReturnAttributes = TresorSecurity.kSecReturnAttributes as String
    static let kSecReturnData = TresorSecurity.kSecReturnData as String
    static let kSecReturnPersistentRef = TresorSecurity.kSecReturnPersistentRef as String
    static let kSecReturnRef = TresorSecurity.kSecReturnRef as String
    static let kSecUseAuthenticationContext = TresorSecurity.kSecUseAuthenticationContext as String
    static let kSecUseAuthenticationUI = TresorSecurity.kSecUseAuthenticationUI as String
    static let kSecUseDataProtectionKeychain = TresorSecurity.kSecUseDataProtectionKeychain as String
    static let kSecUseOperationPrompt = TresorSecurity.kSecUseOperationPrompt as String
    static let kSecValueData = TresorSecurity.kSecValueData as String
    static let kSecValuePersistentRef = TresorSecurity.kSecValuePersistentRef as String
    static let kSecValueRef = TresorSecurity.kSecValueRef as String
}
