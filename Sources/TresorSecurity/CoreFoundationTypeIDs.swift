import Foundation

// CoreFoundation's type identifiers, with which keychain code written for Apple platforms checks
// what `SecItemCopyMatching` handed back: `CFGetTypeID(result) == CFDataGetTypeID()`. Here a
// `CFTypeRef` is the Foundation object it is bridged to on Apple platforms, and its identifier
// is read from that object's class.

/// An identifier of a CoreFoundation type (``CFGetTypeID(_:)``).
public typealias CFTypeID = UInt

/// The identifiers, one per type a Security function here hands back or takes.
private enum TypeID: CFTypeID {
    case other = 0
    case data, string, dictionary, array, number, boolean, date, error
}

/// The type identifier of `object`, to compare with `CFDataGetTypeID()` and the others.
/// - Parameter object: What a Security function handed back (or any object).
/// - Returns: Its type's identifier; one no `…GetTypeID()` returns for a type not listed here.
public func CFGetTypeID(_ object: CFTypeRef?) -> CFTypeID {
    let id: TypeID
    switch object {
    case is NSData: id = .data
    case is NSString: id = .string
    case is NSDictionary: id = .dictionary
    case is NSArray: id = .array
    // `kCFBooleanTrue`, and a Swift `Bool` bridged, are NSNumbers of Foundation's Boolean class.
    case let number as NSNumber: id = String(describing: type(of: number)).hasSuffix("Boolean") ? .boolean : .number
    case is NSDate: id = .date
    case is NSError: id = .error
    default: id = .other
    }
    return id.rawValue
}

/// The type identifier of `CFData` (`Data`).
/// - Returns: What ``CFGetTypeID(_:)`` gives for one.
public func CFDataGetTypeID() -> CFTypeID { TypeID.data.rawValue }
/// The type identifier of `CFString` (`String`).
/// - Returns: What ``CFGetTypeID(_:)`` gives for one.
public func CFStringGetTypeID() -> CFTypeID { TypeID.string.rawValue }
/// The type identifier of `CFDictionary` (an attributes dictionary).
/// - Returns: What ``CFGetTypeID(_:)`` gives for one.
public func CFDictionaryGetTypeID() -> CFTypeID { TypeID.dictionary.rawValue }
/// The type identifier of `CFArray` (the results of `kSecMatchLimitAll`).
/// - Returns: What ``CFGetTypeID(_:)`` gives for one.
public func CFArrayGetTypeID() -> CFTypeID { TypeID.array.rawValue }
/// The type identifier of `CFNumber`.
/// - Returns: What ``CFGetTypeID(_:)`` gives for one.
public func CFNumberGetTypeID() -> CFTypeID { TypeID.number.rawValue }
/// The type identifier of `CFBoolean` (`kCFBooleanTrue`, `kCFBooleanFalse`).
/// - Returns: What ``CFGetTypeID(_:)`` gives for one.
public func CFBooleanGetTypeID() -> CFTypeID { TypeID.boolean.rawValue }
/// The type identifier of `CFDate` (`kSecAttrCreationDate`…).
/// - Returns: What ``CFGetTypeID(_:)`` gives for one.
public func CFDateGetTypeID() -> CFTypeID { TypeID.date.rawValue }
/// The type identifier of `CFError`.
/// - Returns: What ``CFGetTypeID(_:)`` gives for one.
public func CFErrorGetTypeID() -> CFTypeID { TypeID.error.rawValue }
