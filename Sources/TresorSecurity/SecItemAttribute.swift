import Foundation
import TresorModel

/// One `kSecAttr…` key: the ``ItemAttribute`` it stands for (its ``ItemAttribute/secItemKey``),
/// the value forms it takes and the form it comes back in. The dictionaries going in (new
/// items, queries, changes) and coming out (results) are both read through ``table(for:)``.
///
/// The value forms, by what Apple stores under the key:
/// - text: bytes on Apple platforms, which take a `String` or its UTF-8 `Data` alike; Tresor keeps
///   text, so a `Data` value must be UTF-8. Returned as `String`.
/// - bytes: `Data`, or a `String` as its UTF-8. Returned as `Data`.
/// - integer: `Int` or any integral `NSNumber`; never a boolean. Returned as `NSNumber`.
/// - four-character code: a number, or its four ASCII characters (`"aapl"`). Returned as `NSNumber`.
/// - boolean: `Bool`, `kCFBooleanTrue`/`False`, or a number (non-zero is true). Returned as `kCFBoolean…`.
/// - date: `Date`/`NSDate`/`CFDate` in a search; set by the keychain, so refused in what an add
///   or an update sends. Returned as `Date`.
/// - protection class, key class: one of the `kSecAttrAccessible…` or `kSecAttrKeyClass…` strings.
struct SecItemAttribute: Sendable {
    /// How a caller gave a value that Apple keeps as bytes: results give it back the same way.
    enum BlobForm {
        case text, bytes
    }

    let key: String
    let attribute: ItemAttribute

    /// Every attribute key Tresor stores for `itemClass`: each ``ItemAttribute`` with a `kSec…`
    /// key but `kSecAttrAccessControl` (a `SecAccessControl`, which ``SecItemRequest`` reads
    /// itself). Keys of other classes are in it too, so that the keychain refuses them by name.
    /// Where two attributes share a key (`type`: a four-character code, but for keys the key
    /// type), the one of fewer classes wins for its classes. `kSecAttrSynchronizable` also takes
    /// `kSecAttrSynchronizableAny` in a search, which ``SecItemRequest`` reads before this table.
    static func table(for itemClass: ItemClass) -> [String: SecItemAttribute] {
        // A switch, not a dictionary by class, which hashed the class's name on every call
        // (BENCHMARKS.md, "Apple's SecItem API").
        switch itemClass {
        case .genericPassword: genericPasswordTable
        case .internetPassword: internetPasswordTable
        case .certificate: certificateTable
        case .key: keyTable
        }
    }

    private static let genericPasswordTable = index(for: .genericPassword)
    private static let internetPasswordTable = index(for: .internetPassword)
    private static let certificateTable = index(for: .certificate)
    private static let keyTable = index(for: .key)

    private static func index(for itemClass: ItemClass) -> [String: SecItemAttribute] {
        var table: [String: SecItemAttribute] = [:]
        for attribute in ItemAttribute.all {
            guard let key = attribute.secItemKey else { continue }
            if case .accessControl = attribute.value { continue }
            if let other = table[key]?.attribute {
                let closer =
                    attribute.classes.contains(itemClass)
                    && (!other.classes.contains(itemClass) || attribute.classes.count < other.classes.count)
                guard closer else { continue }
            }
            table[key] = SecItemAttribute(key: key, attribute: attribute)
        }
        return table
    }

    // MARK: Going in

    /// Stores a caller's `value` into `attributes`.
    /// - Parameter searching: Whether `attributes` are a search's: only a search names a date.
    /// - Returns: How a bytes-or-text value was given when that is not the attribute's own form
    ///   (`Data` for text, a string for bytes); nil otherwise, so that the common request records
    ///   nothing.
    /// - Throws: ``SecItemFailure`` with `errSecParam` for a value of a form Apple refuses for
    ///   this key, or one Tresor cannot keep (text that is not UTF-8, a date set by hand).
    func store(_ value: Any, in attributes: inout ItemAttributes, searching: Bool) throws -> BlobForm? {
        switch attribute.value {
        case .text(_, let set):
            guard let (text, form) = SecItemValueForms.text(value) else { throw SecItemFailure(errSecParam) }
            set(&attributes, text)
            return form == .bytes ? .bytes : nil
        case .bytes(_, let set):
            guard let (bytes, form) = SecItemValueForms.bytes(value) else { throw SecItemFailure(errSecParam) }
            set(&attributes, bytes)
            return form == .text ? .text : nil
        case .integer(_, let set):
            guard let number = SecItemValueForms.integer(value) else { throw SecItemFailure(errSecParam) }
            set(&attributes, number)
        case .fourCharCode(_, let set):
            guard let code = SecItemValueForms.fourCharCode(value) else { throw SecItemFailure(errSecParam) }
            set(&attributes, code)
        case .boolean(_, let set):
            guard let flag = SecItemValueForms.boolean(value) else { throw SecItemFailure(errSecParam) }
            set(&attributes, flag)
        case .protectionClass(_, let set):
            guard let name = value as? String, let protection = SecItemValues.protectionClasses[name] else {
                throw SecItemFailure(errSecParam)
            }
            set(&attributes, protection)
        case .keyClass(_, let set):
            guard let name = value as? String, let keyClass = SecItemValues.keyClasses[name] else { throw SecItemFailure(errSecParam) }
            set(&attributes, keyClass)
        case .date(_, let set):
            guard searching, let date = value as? Date else { throw SecItemFailure(errSecParam) }
            set(&attributes, date)
        case .accessControl, .stringMap:
            throw SecItemFailure(errSecParam)
        }
        return nil
    }

    // MARK: Coming out

    /// The attribute's value in `attributes` as Apple returns it — a Foundation object, as a
    /// CFDictionary holds — or nil when the item has none.
    /// - Parameter form: How the caller gave this key in the request, if it did: a bytes-or-text
    ///   value comes back in the same form, as Apple keeps the form it was stored with.
    func value(in attributes: ItemAttributes, form: BlobForm? = nil) -> AnyObject? {
        switch attribute.value {
        case .text(let get, _):
            guard let text = get(attributes) else { return nil }
            return form == .bytes ? NSData(data: Data(text.utf8)) : NSString(string: text)
        case .bytes(let get, _):
            guard let bytes = get(attributes) else { return nil }
            if form == .text, let text = String(data: bytes, encoding: .utf8) { return NSString(string: text) }
            return NSData(data: bytes)
        case .integer(let get, _):
            return get(attributes).map { NSNumber(value: $0) }
        case .fourCharCode(let get, _):
            return get(attributes).map { NSNumber(value: $0) }
        case .boolean(let get, _):
            return get(attributes).map { NSNumber(value: $0) }
        case .date(let get, _):
            return get(attributes).map { NSDate(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate) }
        case .protectionClass(let get, _):
            return get(attributes).flatMap(SecItemValues.accessibleValue).map { NSString(string: $0) }
        case .keyClass(let get, _):
            return get(attributes).flatMap { keyClass in SecItemValues.keyClasses.first { $0.value == keyClass }?.key }
                .map { NSString(string: $0) }
        case .accessControl, .stringMap:
            return nil
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
