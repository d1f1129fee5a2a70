/// The `OSStatus` codes of Apple's Security framework that Tresor answers with, and Apple's
/// own message for each — the one table the daemon's errors, the client's errors and
/// TresorSecurity's `errSec…` constants all read.
public enum SecurityStatus: Int32, CaseIterable, Sendable {
    case success = 0
    case unimplemented = -4
    case diskFull = -34
    case param = -50
    case userCanceled = -128
    case notAvailable = -25291
    case readOnly = -25292
    case authFailed = -25293
    case noSuchKeychain = -25294
    case duplicateItem = -25299
    case itemNotFound = -25300
    case noSuchAttribute = -25303
    case interactionNotAllowed = -25308
    case decode = -26275
    case internalComponent = -2070
    case missingEntitlement = -34018

    /// What Apple's `SecCopyErrorMessageString` says for this status — but for
    /// ``notAvailable``, which here means the daemon could not be reached, not what Apple's
    /// message guesses ("You may need to restart your computer").
    public var message: String {
        switch self {
        case .success: return "No error."
        case .unimplemented: return "Function or operation not implemented."
        case .diskFull: return "The disk is full."
        case .param: return "One or more parameters passed to a function were not valid."
        case .userCanceled: return "User canceled the operation."
        case .notAvailable:
            return "No keychain is available: Tresor's daemon could not be reached (is tresord running, and Tresor set up with tresor init?)."
        case .readOnly: return "This keychain cannot be modified."
        case .authFailed: return "The user name or passphrase you entered is not correct."
        case .noSuchKeychain: return "The specified keychain could not be found."
        case .duplicateItem: return "The specified item already exists in the keychain."
        case .itemNotFound: return "The specified item could not be found in the keychain."
        case .noSuchAttribute: return "The specified attribute does not exist."
        case .interactionNotAllowed: return "User interaction is not allowed."
        case .decode: return "Unable to decode the provided data."
        case .internalComponent: return "An internal component failed."
        case .missingEntitlement: return "A required entitlement isn't present."
        }
    }
}
