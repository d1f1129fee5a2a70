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
    /// Whether the dictionary gave `kSecMatchLimit` (a delete refuses one, as Apple's does).
    var limitGiven = false
    var returnData = false
    var returnAttributes = false
    var returnPersistentReference = false
    /// Whether a `kSecReturn…` key asks for what Tresor returns: data, attributes or a persistent
    /// reference (`kSecReturnRef`, a Security object, is not among them).
    var returnsValues: Bool { returnData || returnAttributes || returnPersistentReference }
    /// `kSecReturnRef`: there are no Security objects here (see ``requireSearchableClass()``).
    var returnReference = false
    var accessControl: SecAccessControl?
    /// The bytes-or-text attributes the caller gave in the other form than the attribute's own
    /// (`Data` for text, a string for bytes): results answer in the same form.
    var blobForms: [String: SecItemAttribute.BlobForm] = [:]
    var authenticationUI = AuthenticationUI.allow

    /// `kSecUseAuthenticationUI`: what to do with an item whose secret needs the user.
    enum AuthenticationUI {
        /// Ask (Tresor: the passcode or an approval through `tresor approve`).
        case allow
        /// Do not ask: `errSecInteractionNotAllowed`.
        case fail
        /// Do not ask: leave such items out of the results.
        case skip
    }

    /// - Throws: ``SecItemFailure`` with `errSecParam` (a key or value Tresor does not take
    ///   here) or `errSecUnimplemented` (references to Security objects).
    init(_ dictionary: NSDictionary, purpose: Purpose) throws {
        var pending: [(String, Any)] = []
        // One pass over the dictionary's pairs: its iterator looks each key up again, which
        // took twice as long (BENCHMARKS.md, "Apple's SecItem API").
        var keys: [Any] = [], values: [Any] = []
        dictionary.getObjects(&values, andKeys: &keys, count: dictionary.count)
        for (key, value) in zip(keys, values) {
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
            case Key.kSecValueRef:
                throw SecItemFailure(errSecUnimplemented)
            case Key.kSecValuePersistentRef:
                guard purpose == .search, let reference = value as? Data,
                    let id = SecItemValues.id(fromPersistentReference: reference)
                else { throw SecItemFailure(errSecParam) }
                self.id = id
            case Key.kSecReturnData, Key.kSecReturnAttributes, Key.kSecReturnPersistentRef, Key.kSecReturnRef:
                guard purpose != .changes, let flag = SecItemValueForms.boolean(value) else { throw SecItemFailure(errSecParam) }
                switch key {
                case Key.kSecReturnData: returnData = flag
                case Key.kSecReturnAttributes: returnAttributes = flag
                case Key.kSecReturnPersistentRef: returnPersistentReference = flag
                default: returnReference = flag
                }
            case Key.kSecMatchLimit:
                guard purpose != .changes else { throw SecItemFailure(errSecParam) }
                limitGiven = true
                if let name = value as? String, name == kSecMatchLimitOne as String {
                    limit = .one
                } else if let name = value as? String, name == kSecMatchLimitAll as String {
                    limit = .all
                } else if let count = SecItemValueForms.integer(value), count > 0 {
                    limit = count == 1 ? .one : .count(count)
                } else {
                    throw SecItemFailure(errSecParam)
                }
            case Key.kSecAttrSynchronizable where (value as? String) == kSecAttrSynchronizableAny as String:
                guard purpose == .search else { throw SecItemFailure(errSecParam) }
                matchesAnySynchronizable = true
            case Key.kSecAttrAccessControl:
                guard purpose != .search, let control = value as? SecAccessControl else { throw SecItemFailure(errSecParam) }
                accessControl = control
            case Key.kSecUseAuthenticationUI:
                let choices: [String: AuthenticationUI] = [
                    kSecUseAuthenticationUIAllow as String: .allow, kSecUseAuthenticationUIFail as String: .fail,
                    kSecUseAuthenticationUISkip as String: .skip,
                ]
                guard let name = value as? String, let choice = choices[name] else { throw SecItemFailure(errSecParam) }
                authenticationUI = choice
            case Key.kSecUseNoAuthenticationUI:
                guard let flag = SecItemValueForms.boolean(value) else { throw SecItemFailure(errSecParam) }
                if flag { authenticationUI = .fail }
            case Key.kSecUseOperationPrompt:
                // Shown by Apple's authentication sheet; Tresor's approvals show the item instead.
                guard value as? String != nil else { throw SecItemFailure(errSecParam) }
            case Key.kSecUseDataProtectionKeychain:
                guard SecItemValueForms.boolean(value) != nil else { throw SecItemFailure(errSecParam) }
            case Key.kSecUseAuthenticationContext:
                // An `LAContext` on Apple platforms; LocalAuthentication does not exist here, so
                // whatever object stands in for it is taken and not used.
                guard !(value is NSNull) else { throw SecItemFailure(errSecParam) }
            default:
                // Attributes wait until the class is known: for keys, `type` is the key type.
                pending.append((key, value))
            }
        }
        let table = SecItemAttribute.table(for: itemClass ?? .genericPassword)
        for (key, value) in pending {
            guard let attribute = table[key] else { throw SecItemFailure(errSecParam) }
            if let form = try attribute.store(value, in: &attributes, searching: purpose == .search) { blobForms[key] = form }
        }
        if let accessControl {
            // Apple refuses both ways of saying the protection class in one dictionary.
            guard attributes.accessible == nil else { throw SecItemFailure(errSecParam) }
            attributes.accessible = accessControl.protection
            attributes.accessControl = accessControl.accessControl
        }
    }

    /// Refuses a search without a class Tresor stores, with Apple's status: identities are
    /// never found (`errSecItemNotFound`), no class at all is `errSecParam`. `kSecReturnRef`
    /// asks for a Security object (`SecKey`, `SecCertificate`), which does not exist here:
    /// `errSecUnimplemented` — but for passwords asked for something else too, which have none
    /// on Apple platforms either (wrappers ask for everything at once).
    func requireSearchableClass() throws {
        guard let itemClass else { throw SecItemFailure(isIdentity ? errSecItemNotFound : errSecParam) }
        let isPassword = itemClass == .genericPassword || itemClass == .internetPassword
        if returnReference && !(isPassword && returnsValues) {
            throw SecItemFailure(errSecUnimplemented)
        }
    }

    /// The searches this request stands for: two when it matches synchronizable and
    /// non-synchronizable items alike.
    func queries(returnData: Bool, returnAttributes: Bool) -> [ItemQuery] {
        guard let itemClass else { return [] }
        guard matchesAnySynchronizable else { return [query(of: itemClass, returnData: returnData, returnAttributes: returnAttributes)] }
        return [nil, true].map { synchronizable in
            var query = query(of: itemClass, returnData: returnData, returnAttributes: returnAttributes)
            query.attributes.synchronizable = synchronizable
            return query
        }
    }

    /// The one search of a request that does not match any synchronizable state, or nil.
    func onlyQuery(returnData: Bool, returnAttributes: Bool) -> ItemQuery? {
        guard let itemClass, !matchesAnySynchronizable else { return nil }
        return query(of: itemClass, returnData: returnData, returnAttributes: returnAttributes)
    }

    private func query(of itemClass: ItemClass, returnData: Bool, returnAttributes: Bool) -> ItemQuery {
        ItemQuery(
            itemClass, attributes: attributes, id: id, limit: limit == .one ? .one : .all, returnData: returnData,
            returnAttributes: returnAttributes)
    }
}

/// A SecItem call ends with this status.
struct SecItemFailure: Error {
    let status: OSStatus
    /// Why, in words — the daemon's own, or this library's — when there are any (never a secret).
    var detail: String?
    init(_ status: OSStatus, detail: String? = nil) {
        self.status = status
        self.detail = detail
    }
}

/// The last failure of a `SecItem…` call on each thread, with the daemon's words about it:
/// `SecCopyErrorMessageString` adds them to Apple's message for that status, so that an
/// `errSecParam` says which parameter (a secret over the keychain's limit, say). Only for the
/// statuses whose message says nothing of why; the others keep Apple's words exactly.
enum LastSecItemFailure {
    private static let key = "TresorSecurity.lastFailure"
    private static let explained: Set<OSStatus> = [errSecParam, errSecMissingEntitlement, errSecInternalComponent]

    static func record(_ failure: SecItemFailure?) {
        Thread.current.threadDictionary[key] = failure.flatMap { failure in
            explained.contains(failure.status) ? failure.detail.map { (failure.status, $0) } : nil
        }
    }

    /// The words about this thread's last failure, when it had `status`.
    static func detail(for status: OSStatus) -> String? {
        guard let (last, detail) = Thread.current.threadDictionary[key] as? (OSStatus, String), last == status else { return nil }
        return detail
    }
}

/// The keys as Swift strings, for `switch`: a `case kSecClass as String` would be a cast pattern.
private enum Key {
    static let kSecAttrAccessControl = TresorSecurity.kSecAttrAccessControl as String
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
    static let kSecUseNoAuthenticationUI = TresorSecurity.kSecUseNoAuthenticationUI as String
    static let kSecUseOperationPrompt = TresorSecurity.kSecUseOperationPrompt as String
    static let kSecValueData = TresorSecurity.kSecValueData as String
    static let kSecValuePersistentRef = TresorSecurity.kSecValuePersistentRef as String
    static let kSecValueRef = TresorSecurity.kSecValueRef as String
}
