import Foundation
import TresorModel

// Apple's `kSec…` dictionary keys and values, with Apple's own string values, so a dictionary
// printed or stored by Apple-platform code reads the same here. `nonisolated(unsafe)`: they are
// immutable NSStrings, which Linux's Foundation does not mark Sendable.

// MARK: Classes
nonisolated(unsafe) public let kSecClass: CFString = "class"
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"
nonisolated(unsafe) public let kSecClassCertificate: CFString = "cert"
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
/// Identities (a certificate with its private key) are not stored by Tresor: searches find
/// none, adds are refused with `errSecParam`.
nonisolated(unsafe) public let kSecClassIdentity: CFString = "idnt"

// MARK: Attributes of every class
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
nonisolated(unsafe) public let kSecAttrAccessControl: CFString = "accc"
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
/// In a search, update or delete: synchronizable and non-synchronizable items alike.
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
/// Not stored by Tresor: a dictionary that sets it answers `errSecParam`; results never carry it.
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
/// Not stored by Tresor: a dictionary that sets it answers `errSecParam`; results never carry it.
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"

// MARK: Passwords
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"

// MARK: Certificates
nonisolated(unsafe) public let kSecAttrSubject: CFString = "subj"
nonisolated(unsafe) public let kSecAttrIssuer: CFString = "issr"
nonisolated(unsafe) public let kSecAttrSerialNumber: CFString = "slnr"
nonisolated(unsafe) public let kSecAttrSubjectKeyID: CFString = "skid"
nonisolated(unsafe) public let kSecAttrPublicKeyHash: CFString = "pkhh"
nonisolated(unsafe) public let kSecAttrCertificateType: CFString = "ctyp"
nonisolated(unsafe) public let kSecAttrCertificateEncoding: CFString = "cenc"

// MARK: Keys
nonisolated(unsafe) public let kSecAttrKeyClass: CFString = "kcls"
nonisolated(unsafe) public let kSecAttrKeyClassPublic: CFString = "0"
nonisolated(unsafe) public let kSecAttrKeyClassPrivate: CFString = "1"
nonisolated(unsafe) public let kSecAttrKeyClassSymmetric: CFString = "2"
nonisolated(unsafe) public let kSecAttrApplicationLabel: CFString = "klbl"
nonisolated(unsafe) public let kSecAttrApplicationTag: CFString = "atag"
/// The same string as ``kSecAttrType``, as on Apple platforms: for keys it names the algorithm.
nonisolated(unsafe) public let kSecAttrKeyType: CFString = "type"
nonisolated(unsafe) public let kSecAttrKeyTypeRSA: CFString = "42"
nonisolated(unsafe) public let kSecAttrKeyTypeEC: CFString = "73"
nonisolated(unsafe) public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"
nonisolated(unsafe) public let kSecAttrKeySizeInBits: CFString = "bsiz"
nonisolated(unsafe) public let kSecAttrEffectiveKeySize: CFString = "esiz"

// MARK: Protocol and authentication type values (stored and matched as given; Apple's four-character strings)
nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
nonisolated(unsafe) public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
nonisolated(unsafe) public let kSecAttrProtocolIRC: CFString = "irc "
nonisolated(unsafe) public let kSecAttrProtocolNNTP: CFString = "nntp"
nonisolated(unsafe) public let kSecAttrProtocolPOP3: CFString = "pop3"
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
nonisolated(unsafe) public let kSecAttrProtocolSOCKS: CFString = "sox "
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
nonisolated(unsafe) public let kSecAttrProtocolLDAP: CFString = "ldap"
nonisolated(unsafe) public let kSecAttrProtocolAppleTalk: CFString = "atlk"
nonisolated(unsafe) public let kSecAttrProtocolAFP: CFString = "afp "
nonisolated(unsafe) public let kSecAttrProtocolTelnet: CFString = "teln"
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
nonisolated(unsafe) public let kSecAttrProtocolFTPS: CFString = "ftps"
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
nonisolated(unsafe) public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
nonisolated(unsafe) public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
nonisolated(unsafe) public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
nonisolated(unsafe) public let kSecAttrProtocolSMB: CFString = "smb "
nonisolated(unsafe) public let kSecAttrProtocolRTSP: CFString = "rtsp"
nonisolated(unsafe) public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
nonisolated(unsafe) public let kSecAttrProtocolDAAP: CFString = "daap"
nonisolated(unsafe) public let kSecAttrProtocolEPPC: CFString = "eppc"
nonisolated(unsafe) public let kSecAttrProtocolIPP: CFString = "ipp "
nonisolated(unsafe) public let kSecAttrProtocolNNTPS: CFString = "ntps"
nonisolated(unsafe) public let kSecAttrProtocolLDAPS: CFString = "ldps"
nonisolated(unsafe) public let kSecAttrProtocolTelnetS: CFString = "tels"
nonisolated(unsafe) public let kSecAttrProtocolIMAPS: CFString = "imps"
nonisolated(unsafe) public let kSecAttrProtocolIRCS: CFString = "ircs"
nonisolated(unsafe) public let kSecAttrProtocolPOP3S: CFString = "pops"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"

// MARK: Protection classes (`kSecAttrAccessible` values)
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
nonisolated(unsafe) public let kSecAttrAccessibleAlways: CFString = "dk"
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
nonisolated(unsafe) public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"

// MARK: Search, return and value keys
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
/// `SecKeychainItem`, `SecKey` and `SecCertificate` objects do not exist here: asking for
/// one answers `errSecUnimplemented`.
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"

// MARK: Keys that compile but are refused (`errSecParam`): tokens, key generation and import
// options, matching Tresor does not do. Code naming them builds; a dictionary holding them is refused.
nonisolated(unsafe) public let kSecAttrIsPermanent: CFString = "perm"
nonisolated(unsafe) public let kSecAttrIsSensitive: CFString = "sens"
nonisolated(unsafe) public let kSecAttrIsExtractable: CFString = "extr"
nonisolated(unsafe) public let kSecAttrCanEncrypt: CFString = "encr"
nonisolated(unsafe) public let kSecAttrCanDecrypt: CFString = "decr"
nonisolated(unsafe) public let kSecAttrCanDerive: CFString = "drve"
nonisolated(unsafe) public let kSecAttrCanSign: CFString = "sign"
nonisolated(unsafe) public let kSecAttrCanVerify: CFString = "vrfy"
nonisolated(unsafe) public let kSecAttrCanWrap: CFString = "wrap"
nonisolated(unsafe) public let kSecAttrCanUnwrap: CFString = "unwp"
nonisolated(unsafe) public let kSecAttrTokenID: CFString = "tkid"
nonisolated(unsafe) public let kSecAttrTokenIDSecureEnclave: CFString = "com.apple.setoken"
nonisolated(unsafe) public let kSecAttrAccessGroupToken: CFString = "com.apple.token"
nonisolated(unsafe) public let kSecPrivateKeyAttrs: CFString = "private"
nonisolated(unsafe) public let kSecPublicKeyAttrs: CFString = "public"
nonisolated(unsafe) public let kSecMatchCaseInsensitive: CFString = "m_CaseInsensitive"
nonisolated(unsafe) public let kSecMatchItemList: CFString = "m_ItemList"
nonisolated(unsafe) public let kSecImportExportPassphrase: CFString = "passphrase"

// MARK: Use keys (accepted; Tresor is always the data protection keychain)
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
nonisolated(unsafe) public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
nonisolated(unsafe) public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
nonisolated(unsafe) public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
nonisolated(unsafe) public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
nonisolated(unsafe) public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
nonisolated(unsafe) public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"
/// Apple's older spelling of `kSecUseAuthenticationUI: kSecUseAuthenticationUIFail`.
nonisolated(unsafe) public let kSecUseNoAuthenticationUI: CFString = "u_NoAuthUI"

// MARK: Status codes (`OSStatus`)
/// MacTypes' success code, which SecItem code written before `errSecSuccess` compares with.
public let noErr: OSStatus = 0
public let errSecSuccess: OSStatus = SecurityStatus.success.rawValue
public let errSecUnimplemented: OSStatus = SecurityStatus.unimplemented.rawValue
public let errSecDiskFull: OSStatus = SecurityStatus.diskFull.rawValue
public let errSecParam: OSStatus = SecurityStatus.param.rawValue
public let errSecUserCanceled: OSStatus = SecurityStatus.userCanceled.rawValue
public let errSecNotAvailable: OSStatus = SecurityStatus.notAvailable.rawValue
public let errSecReadOnly: OSStatus = SecurityStatus.readOnly.rawValue
public let errSecAuthFailed: OSStatus = SecurityStatus.authFailed.rawValue
public let errSecNoSuchKeychain: OSStatus = SecurityStatus.noSuchKeychain.rawValue
public let errSecDuplicateItem: OSStatus = SecurityStatus.duplicateItem.rawValue
public let errSecItemNotFound: OSStatus = SecurityStatus.itemNotFound.rawValue
public let errSecNoSuchAttr: OSStatus = SecurityStatus.noSuchAttribute.rawValue
public let errSecInteractionNotAllowed: OSStatus = SecurityStatus.interactionNotAllowed.rawValue
public let errSecDecode: OSStatus = SecurityStatus.decode.rawValue
public let errSecInternalComponent: OSStatus = SecurityStatus.internalComponent.rawValue
public let errSecMissingEntitlement: OSStatus = SecurityStatus.missingEntitlement.rawValue
// Apple's codes that Tresor never returns, for code that compares with them.
public let errSecIO: OSStatus = -36
public let errSecWrPerm: OSStatus = -61
public let errSecAllocate: OSStatus = -108
public let errSecBadReq: OSStatus = -909
public let errSecNoAccessForItem: OSStatus = -25243
public let errSecInvalidOwnerEdit: OSStatus = -25244
public let errSecInvalidKeychain: OSStatus = -25295
public let errSecNoDefaultKeychain: OSStatus = -25307
public let errSecVerifyFailed: OSStatus = -67808
public let errSecNotTrusted: OSStatus = -67843

/// Apple's messages for the codes above that Tresor never returns.
private let otherMessages: [OSStatus: String] = [
    errSecIO: "I/O error.", errSecWrPerm: "Write permissions error.", errSecAllocate: "Failed to allocate memory.",
    errSecBadReq: "Bad parameter or invalid state for operation.", errSecNoAccessForItem: "The specified item has no access control.",
    errSecInvalidOwnerEdit: "Invalid attempt to change the owner of this item.",
    errSecInvalidKeychain: "The specified keychain is not a valid keychain file.",
    errSecNoDefaultKeychain: "A default keychain could not be found.",
    errSecVerifyFailed: "A cryptographic verification failure has occurred.", errSecNotTrusted: "The certificate was not trusted.",
]

/// The message for `status`: Apple's words (for `errSecNotAvailable`, what it means here: the
/// daemon could not be reached), or nil for a code this library does not define. When the last
/// `SecItem…` call on this thread failed with `status` — `errSecParam`,
/// `errSecMissingEntitlement` or `errSecInternalComponent`, whose words say nothing of why —
/// the daemon's words about that failure follow Apple's ("One or more parameters passed to a
/// function were not valid. (…over 262144 bytes)").
/// - Parameters:
///   - status: An `OSStatus` from a `SecItem…` function.
///   - reserved: Unused, as on Apple platforms; pass `nil`.
/// - Returns: The message.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    guard let message = SecurityStatus(rawValue: status)?.message ?? otherMessages[status] else { return nil }
    return NSString(string: LastSecItemFailure.detail(for: status).map { "\(message) (\($0))" } ?? message)
}
