/// Why the keychain refused a request: a closed set mapped 1:1 to Apple's `OSStatus` values,
/// so code ported from `SecItem…` keeps its checks. No case carries a secret.
public enum KeychainError: Error, Equatable, Sendable {
    /// `errSecDuplicateItem` (−25299): an item with the same primary key exists.
    case duplicateItem
    /// `errSecItemNotFound` (−25300): nothing matched.
    case itemNotFound
    /// `errSecInteractionNotAllowed` (−25308): the item's protection class is unavailable now.
    case interactionNotAllowed(String)
    /// `errSecAuthFailed` (−25293): the passcode this request needed was missing or wrong.
    /// `retryAfterSeconds` is set when this failure started a wait before the next attempt.
    case authFailed(String, retryAfterSeconds: Int? = nil)
    /// `errSecAuthFailed` (−25293) too: the item's secret needs the user's presence (user
    /// presence, or another application's item) and the request proved none. Apart from
    /// `authFailed` so a client can ask for the passcode without reading the message.
    case presenceRequired(String)
    /// `errSecAuthFailed` (−25293) too, but no passcode was checked: too many wrong ones,
    /// the next attempt is allowed in `retryAfterSeconds`.
    case throttled(String, retryAfterSeconds: Int)
    /// `errSecMissingEntitlement` (−34018): the caller may not use this access group or keychain.
    case missingEntitlement(String)
    /// `errSecParam` (−50): an attribute, value or query is invalid.
    case param(String)
    /// `errSecDecode` (−26275): an item's stored data does not decrypt: damaged or altered.
    case decode(String)
    /// `errSecReadOnly` (−25292): the keychain cannot be changed (System Roots).
    case readOnly
    /// `errSecNoSuchKeychain` (−25294).
    case noSuchKeychain(String)
    /// `errSecInternalComponent` (−2070): storage failed; the message says how.
    case storage(String)

    /// Apple's `OSStatus` for this error.
    public var osStatus: Int32 { securityStatus.rawValue }

    /// The Security framework status for this error.
    public var securityStatus: SecurityStatus {
        switch self {
        case .duplicateItem: return .duplicateItem
        case .itemNotFound: return .itemNotFound
        case .interactionNotAllowed: return .interactionNotAllowed
        case .authFailed, .throttled, .presenceRequired: return .authFailed
        case .missingEntitlement: return .missingEntitlement
        case .param: return .param
        case .decode: return .decode
        case .readOnly: return .readOnly
        case .noSuchKeychain: return .noSuchKeychain
        case .storage: return .internalComponent
        }
    }
}

extension KeychainError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .duplicateItem:
            return
                "an item with the same identifying attributes (service or server, account, access group…) exists already: change or delete that item first"
        case .itemNotFound: return "no item matches"
        case .interactionNotAllowed(let why): return "interaction not allowed: \(why)"
        case .authFailed(let why, _): return "authentication failed: \(why)"
        case .throttled(let why, _): return why
        case .presenceRequired(let why): return "user presence required: \(why)"
        case .missingEntitlement(let why): return "missing entitlement: \(why)"
        case .param(let why): return "invalid parameter: \(why)"
        case .decode(let why): return "item data cannot be decoded: \(why)"
        case .readOnly: return "this keychain is read-only"
        case .noSuchKeychain(let name): return "no keychain named \(name)"
        case .storage(let why): return "keychain storage error: \(why)"
        }
    }
}
