import Foundation
import TresorModel

/// One `kSecAttr…` key: the ``ItemAttributes`` property it is, the value forms it takes and the
/// form it comes back in. ``SecItemAttribute/table`` declares every key once; the dictionaries
/// going in (new items, queries, changes) and coming out (results) are both read through it.
struct SecItemAttribute: @unchecked Sendable {  // immutable: a string and a key path
    /// What Apple stores under the key, which decides the value forms it takes.
    enum Kind {
        /// Bytes on Apple platforms, which take a `String` or its UTF-8 `Data` alike; Tresor keeps
        /// text, so a `Data` value must be UTF-8. Returned as `String`.
        case text(WritableKeyPath<ItemAttributes, String?>)
        /// Bytes Tresor keeps as bytes: `Data`, or a `String` as its UTF-8. Returned as `Data`.
        case bytes(WritableKeyPath<ItemAttributes, Data?>)
        /// `Int` or any integral `NSNumber`; never a boolean. Returned as `NSNumber`.
        case number(WritableKeyPath<ItemAttributes, Int?>)
        /// A `FourCharCode`: a number, or its four ASCII characters (`"aapl"`). Returned as `NSNumber`.
        case fourCharCode(WritableKeyPath<ItemAttributes, UInt32?>)
        /// `Bool`, `kCFBooleanTrue`/`False`, or a number (non-zero is true). Returned as `kCFBoolean…`.
        case boolean(WritableKeyPath<ItemAttributes, Bool?>)
        /// Set by the keychain: returned as `Date`, refused in what a caller sends.
        case date(KeyPath<ItemAttributes, Date?>)
        /// One of the `kSecAttrAccessible…` strings.
        case protectionClass
        /// One of the `kSecAttrKeyClass…` strings.
        case keyClass
    }

    /// How a caller gave a value that Apple keeps as bytes: results give it back the same way.
    enum BlobForm {
        case text, bytes
    }

    let key: String
    let kind: Kind

    init(_ key: CFString, _ kind: Kind) {
        self.key = key as String
        self.kind = kind
    }

    /// Every attribute key Tresor stores, for every class but keys (whose `type` is the key type,
    /// not a four-character code: ``keyTable``). `kSecAttrSynchronizable` also takes
    /// `kSecAttrSynchronizableAny` in a search, which ``SecItemRequest`` reads before this table.
    static let table: [String: SecItemAttribute] = index([
        SecItemAttribute(kSecAttrAccessible, .protectionClass),
        SecItemAttribute(kSecAttrAccessGroup, .text(\.accessGroup)),
        SecItemAttribute(kSecAttrSynchronizable, .boolean(\.synchronizable)),
        SecItemAttribute(kSecAttrLabel, .text(\.label)),
        SecItemAttribute(kSecAttrDescription, .text(\.description)),
        SecItemAttribute(kSecAttrComment, .text(\.comment)),
        SecItemAttribute(kSecAttrCreator, .fourCharCode(\.creator)),
        SecItemAttribute(kSecAttrType, .fourCharCode(\.type)),
        SecItemAttribute(kSecAttrCreationDate, .date(\.creationDate)),
        SecItemAttribute(kSecAttrModificationDate, .date(\.modificationDate)),
        SecItemAttribute(kSecAttrAccount, .text(\.account)),
        SecItemAttribute(kSecAttrService, .text(\.service)),
        SecItemAttribute(kSecAttrGeneric, .bytes(\.generic)),
        SecItemAttribute(kSecAttrServer, .text(\.server)),
        SecItemAttribute(kSecAttrProtocol, .text(\.protocol)),
        SecItemAttribute(kSecAttrPort, .number(\.port)),
        SecItemAttribute(kSecAttrPath, .text(\.path)),
        SecItemAttribute(kSecAttrAuthenticationType, .text(\.authenticationType)),
        SecItemAttribute(kSecAttrSecurityDomain, .text(\.securityDomain)),
        SecItemAttribute(kSecAttrCertificateType, .number(\.certificateType)),
        SecItemAttribute(kSecAttrCertificateEncoding, .number(\.certificateEncoding)),
        SecItemAttribute(kSecAttrSubject, .bytes(\.subject)),
        SecItemAttribute(kSecAttrIssuer, .bytes(\.issuer)),
        SecItemAttribute(kSecAttrSerialNumber, .bytes(\.serialNumber)),
        SecItemAttribute(kSecAttrSubjectKeyID, .bytes(\.subjectKeyID)),
        SecItemAttribute(kSecAttrPublicKeyHash, .bytes(\.publicKeyHash)),
        SecItemAttribute(kSecAttrKeyClass, .keyClass),
        SecItemAttribute(kSecAttrApplicationLabel, .bytes(\.applicationLabel)),
        SecItemAttribute(kSecAttrApplicationTag, .bytes(\.applicationTag)),
        SecItemAttribute(kSecAttrKeySizeInBits, .number(\.keySizeInBits)),
        SecItemAttribute(kSecAttrEffectiveKeySize, .number(\.effectiveKeySize)),
    ])

    /// For `kSecClassKey` items `type` is the key type (`kSecAttrKeyTypeRSA`…), a string.
    static let keyTable: [String: SecItemAttribute] = table.merging(index([SecItemAttribute(kSecAttrKeyType, .text(\.keyType))])) { $1 }

    static func table(for itemClass: ItemClass) -> [String: SecItemAttribute] {
        itemClass == .key ? keyTable : table
    }

    private static func index(_ attributes: [SecItemAttribute]) -> [String: SecItemAttribute] {
        Dictionary(attributes.map { ($0.key, $0) }) { first, _ in first }
    }

    // MARK: Going in

    /// Stores a caller's `value` into `attributes`.
    /// - Returns: How a bytes-or-text value was given (nil for other kinds).
    /// - Throws: ``SecItemFailure`` with `errSecParam` for a value of a form Apple refuses for
    ///   this key, or one Tresor cannot keep (text that is not UTF-8, a date set by hand).
    func store(_ value: Any, in attributes: inout ItemAttributes) throws -> BlobForm? {
        switch kind {
        case .text(let path):
            guard let (text, form) = SecItemValueForms.text(value) else { throw SecItemFailure(errSecParam) }
            attributes[keyPath: path] = text
            return form
        case .bytes(let path):
            guard let (bytes, form) = SecItemValueForms.bytes(value) else { throw SecItemFailure(errSecParam) }
            attributes[keyPath: path] = bytes
            return form
        case .number(let path):
            guard let number = SecItemValueForms.integer(value) else { throw SecItemFailure(errSecParam) }
            attributes[keyPath: path] = number
        case .fourCharCode(let path):
            guard let code = SecItemValueForms.fourCharCode(value) else { throw SecItemFailure(errSecParam) }
            attributes[keyPath: path] = code
        case .boolean(let path):
            guard let flag = SecItemValueForms.boolean(value) else { throw SecItemFailure(errSecParam) }
            attributes[keyPath: path] = flag
        case .date:
            throw SecItemFailure(errSecParam)
        case .protectionClass:
            guard let name = value as? String, let protection = SecItemValues.protectionClasses[name] else {
                throw SecItemFailure(errSecParam)
            }
            attributes.accessible = protection
        case .keyClass:
            guard let name = value as? String, let keyClass = SecItemValues.keyClasses[name] else { throw SecItemFailure(errSecParam) }
            attributes.keyClass = keyClass
        }
        return nil
    }

    // MARK: Coming out

    /// The attribute's value in `attributes` as Apple returns it — a Foundation object, as a
    /// CFDictionary holds — or nil when the item has none.
    /// - Parameter form: How the caller gave this key in the request, if it did: a bytes-or-text
    ///   value comes back in the same form, as Apple keeps the form it was stored with.
    func value(in attributes: ItemAttributes, form: BlobForm? = nil) -> AnyObject? {
        switch kind {
        case .text(let path):
            guard let text = attributes[keyPath: path] else { return nil }
            return form == .bytes ? NSData(data: Data(text.utf8)) : NSString(string: text)
        case .bytes(let path):
            guard let bytes = attributes[keyPath: path] else { return nil }
            if form == .text, let text = String(data: bytes, encoding: .utf8) { return NSString(string: text) }
            return NSData(data: bytes)
        case .number(let path):
            return attributes[keyPath: path].map { NSNumber(value: $0) }
        case .fourCharCode(let path):
            return attributes[keyPath: path].map { NSNumber(value: $0) }
        case .boolean(let path):
            return attributes[keyPath: path].map { NSNumber(value: $0) }
        case .date(let path):
            return attributes[keyPath: path].map { NSDate(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate) }
        case .protectionClass:
            return attributes.accessible.flatMap(SecItemValues.accessibleValue).map { NSString(string: $0) }
        case .keyClass:
            return attributes.keyClass.flatMap { keyClass in SecItemValues.keyClasses.first { $0.value == keyClass }?.key }
                .map { NSString(string: $0) }
        }
    }
}

/// The value forms Apple accepts, read into Swift values. On Linux a `[String: Any]` bridged
/// to `NSDictionary` keeps `String`, `Data`, `Bool` and `Date` as they are and makes numbers
/// `NSNumber`; an `NSDictionary` built by hand may hold `NSString`, `NSData`, `NSNumber`. Each
/// reader takes all of them, and nothing else (a nil `Optional` arrives as `NSNull`: refused).
enum SecItemValueForms {
    /// `String`/`NSString`/`CFString`, or UTF-8 `Data`/`NSData`/`CFData`.
    static func text(_ value: Any) -> (String, SecItemAttribute.BlobForm)? {
        if let text = value as? String { return (text, .text) }
        if let bytes = value as? Data, let text = String(data: bytes, encoding: .utf8) { return (text, .bytes) }
        return nil
    }

    /// `Data`/`NSData`/`CFData`, or a string as its UTF-8.
    static func bytes(_ value: Any) -> (Data, SecItemAttribute.BlobForm)? {
        if let bytes = value as? Data { return (bytes, .bytes) }
        if let text = value as? String { return (Data(text.utf8), .text) }
        return nil
    }

    /// An integral number (`Int`, any fixed-width integer, `NSNumber`/`CFNumber`), not a boolean.
    static func integer(_ value: Any) -> Int? {
        guard !isBoolean(value) else { return nil }
        return value as? Int
    }

    /// A `FourCharCode`: a number that fits 32 bits unsigned, or exactly four ASCII characters.
    static func fourCharCode(_ value: Any) -> UInt32? {
        if let text = value as? String {
            let bytes = Array(text.utf8)
            guard bytes.count == 4, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            return bytes.reduce(0) { $0 << 8 | UInt32($1) }
        }
        return integer(value).flatMap { UInt32(exactly: $0) }
    }

    /// `true`/`false`, `kCFBooleanTrue`/`False`, or an integral number (non-zero is true).
    static func boolean(_ value: Any) -> Bool? {
        if isBoolean(value) { return value as? Bool }
        return integer(value).map { $0 != 0 }
    }

    /// Whether `value` is a boolean rather than a number. Linux's Foundation says `is Bool` of
    /// every `NSNumber`; a boolean one is of a subclass (`kCFBooleanTrue`'s).
    static func isBoolean(_ value: Any) -> Bool {
        if type(of: value) == Bool.self { return true }
        if let number = value as? NSNumber { return type(of: number) != NSNumber.self }
        return false
    }
}
