// Fuzzes what TresorSecurity reads from a caller: a SecItem dictionary (the `CFDictionary` of
// SecItemAdd, SecItemCopyMatching, SecItemUpdate) read into a keychain request through the
// attribute table, before anything reaches a daemon.
//
// Properties besides "never crash":
//  - a refused dictionary answers only errSecParam, errSecUnimplemented (Security object
//    references) or errSecItemNotFound (a search for identities) — never another status;
//  - an accepted one, written back as a result's attributes through the same table and read
//    again as a query, gives the same attributes (the table reads both ways alike).
//
// Input: one byte choosing the function (add, search, changes), then entries until the input
// ends, each a key and a value: a key byte (one of SecItem's keys, or else a string of the next
// bytes) and a value byte choosing the value's form — Swift `String`, `NSString`, one of Apple's
// constant strings, `Data`, `NSData`, `Int`, `NSNumber` (integer, fraction, boolean), `Bool`,
// `Date`, `NSNull`, an array, a dictionary — followed by what that form needs.
// (Not a property list: Foundation's own binary plist reader crashes on some inputs on Linux.)
import Foundation
import FuzzSupport
@_spi(Fuzzing) import TresorSecurity

/// The keys and constant values a dictionary is made of, so that most inputs mean something.
/// (`nonisolated(unsafe)`: immutable NSStrings, which Linux's Foundation does not mark Sendable.)
nonisolated(unsafe) let keys: [CFString] = [
    kSecClass, kSecAttrAccessible, kSecAttrAccessControl, kSecAttrAccessGroup, kSecAttrSynchronizable, kSecAttrCreationDate,
    kSecAttrModificationDate, kSecAttrDescription, kSecAttrComment, kSecAttrCreator, kSecAttrType, kSecAttrLabel, kSecAttrIsInvisible,
    kSecAttrAccount, kSecAttrService, kSecAttrGeneric, kSecAttrSecurityDomain, kSecAttrServer, kSecAttrProtocol,
    kSecAttrAuthenticationType, kSecAttrPort, kSecAttrPath, kSecAttrSubject, kSecAttrIssuer, kSecAttrSerialNumber,
    kSecAttrSubjectKeyID, kSecAttrPublicKeyHash, kSecAttrCertificateType, kSecAttrCertificateEncoding, kSecAttrKeyClass,
    kSecAttrApplicationLabel, kSecAttrApplicationTag, kSecAttrKeySizeInBits, kSecAttrEffectiveKeySize, kSecMatchLimit,
    kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef, kSecValueData, kSecValueRef,
    kSecValuePersistentRef, kSecUseDataProtectionKeychain, kSecUseOperationPrompt, kSecUseAuthenticationUI,
    kSecUseAuthenticationContext, kSecUseNoAuthenticationUI,
]
nonisolated(unsafe) let constants: [CFString] = [
    kSecClassGenericPassword, kSecClassInternetPassword, kSecClassCertificate, kSecClassKey, kSecClassIdentity,
    kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
    kSecAttrSynchronizableAny, kSecMatchLimitOne, kSecMatchLimitAll, kSecAttrKeyClassPrivate, kSecAttrKeyTypeEC,
    kSecAttrProtocolHTTPS, kSecAttrAuthenticationTypeHTMLForm, kSecUseAuthenticationUIFail, kSecUseAuthenticationUISkip,
    kSecUseAuthenticationUIAllow, "aapl", "tresor:", "tresor:0", kSecAttrProtocolPOP3S, kSecAttrAuthenticationTypeNTLM,
]

/// The value forms, in the order the value byte chooses them.
enum Form: UInt8, CaseIterable {
    case string, nsString, constant, data, nsData, int, nsInteger, nsFraction, nsBoolean, bool, date, null, array, dictionary
}

/// Reads one value of the form the next byte chooses; `depth` bounds nesting.
func value(_ input: inout FuzzInput, depth: Int) -> Any {
    let form = Form(rawValue: input.byte() % UInt8(Form.allCases.count))!
    func bytes() -> Data { input.take(Int(input.byte() % 48)) }
    func integer() -> Int { Int(Int64(bitPattern: input.take(8).reduce(0) { $0 << 8 | UInt64($1) })) }
    switch form {
    case .string: return String(decoding: bytes(), as: UTF8.self)
    case .nsString: return NSString(string: String(decoding: bytes(), as: UTF8.self))
    case .constant: return constants[Int(input.byte()) % constants.count]
    case .data: return bytes()
    case .nsData: return NSData(data: bytes())
    case .int: return integer()
    case .nsInteger: return NSNumber(value: integer())
    case .nsFraction: return NSNumber(value: Double(integer()) / 7)
    case .nsBoolean: return input.byte().isMultiple(of: 2) ? kCFBooleanTrue! : kCFBooleanFalse!
    case .bool: return input.byte().isMultiple(of: 2)
    case .date: return Date(timeIntervalSinceReferenceDate: Double(integer() % 4_000_000_000))
    case .null: return NSNull()
    case .array: return depth > 2 ? NSNull() : [value(&input, depth: depth + 1)]
    case .dictionary: return depth > 2 ? NSNull() : [String(decoding: bytes(), as: UTF8.self): value(&input, depth: depth + 1)]
    }
}

/// The dictionary the input describes.
func dictionary(_ input: inout FuzzInput) -> NSDictionary {
    let dictionary = NSMutableDictionary()
    while !input.isEmpty {
        let selector = Int(input.byte())
        let key = selector < keys.count ? keys[selector] as String : String(decoding: input.take(selector % 8), as: UTF8.self)
        dictionary[key] = value(&input, depth: 0)
    }
    return dictionary
}

fuzz(seeds: {
    // purpose, then (key index, form, payload) triples written as the reader reads them.
    func entry(_ key: CFString, _ form: Form, _ payload: [UInt8] = []) -> [UInt8] {
        [UInt8(keys.firstIndex(of: key)!), form.rawValue] + payload
    }
    func text(_ string: String) -> [UInt8] { [UInt8(string.utf8.count)] + Array(string.utf8) }
    func constant(_ value: CFString) -> [UInt8] { [UInt8(constants.firstIndex(of: value)!)] }
    let samples: [String: [UInt8]] = [
        "add-generic": [0] + entry(kSecClass, .constant, constant(kSecClassGenericPassword)) + entry(kSecAttrService, .string, text("api"))
            + entry(kSecAttrAccount, .data, text("ada")) + entry(kSecValueData, .data, text("s3cret")) + entry(kSecAttrSynchronizable, .bool, [0]),
        "add-internet": [0] + entry(kSecClass, .constant, constant(kSecClassInternetPassword)) + entry(kSecAttrServer, .nsString, text("example.org"))
            + entry(kSecAttrPort, .nsInteger, [0, 0, 0, 0, 0, 0, 0x20, 0xFB]) + entry(kSecAttrCreator, .constant, constant("aapl"))
            + entry(kSecAttrAccessible, .constant, constant(kSecAttrAccessibleAfterFirstUnlock)),
        "search-all": [1] + entry(kSecClass, .constant, constant(kSecClassGenericPassword))
            + entry(kSecMatchLimit, .constant, constant(kSecMatchLimitAll))
            + entry(kSecReturnAttributes, .nsBoolean, [0]) + entry(kSecReturnData, .int, [0, 0, 0, 0, 0, 0, 0, 1])
            + entry(kSecAttrSynchronizable, .constant, constant(kSecAttrSynchronizableAny)),
        "search-ui": [1] + entry(kSecClass, .constant, constant(kSecClassGenericPassword)) + entry(kSecAttrAccount, .string, text("ada"))
            + entry(kSecUseAuthenticationUI, .constant, constant(kSecUseAuthenticationUIFail)) + entry(kSecReturnRef, .bool, [0])
            + entry(kSecReturnData, .bool, [0]),
        "search-dates": [1] + entry(kSecClass, .constant, constant(kSecClassInternetPassword))
            + entry(kSecAttrProtocol, .constant, constant(kSecAttrProtocolPOP3S))
            + entry(kSecAttrAuthenticationType, .constant, constant(kSecAttrAuthenticationTypeNTLM))
            + entry(kSecAttrCreationDate, .date, [0, 0, 0, 0, 0x2F, 0, 0, 0]),
        "changes": [2] + entry(kSecAttrLabel, .nsData, text("New")) + entry(kSecAttrGeneric, .string, text("bytes"))
            + entry(kSecAttrType, .nsInteger, [0, 0, 0, 0, 0x74, 0x65, 0x73, 0x74]),
    ]
    return samples.mapValues { Data($0) }
}) { data in
    var input = FuzzInput(data)
    let purposes = SecItemDictionaryCheck.Purpose.allCases
    let purpose = purposes[Int(input.byte()) % purposes.count]
    let request = dictionary(&input)
    let status = SecItemDictionaryCheck.status(of: request, as: purpose)
    guard status == errSecSuccess else {
        if ![errSecParam, errSecUnimplemented, errSecItemNotFound].contains(status) { fuzzFailure("a dictionary was refused with status \(status)") }
        return
    }
    if SecItemDictionaryCheck.roundTripHolds(request, as: purpose) != true {
        fuzzFailure("the attributes read, written back as a result and read again differ")
    }
}
