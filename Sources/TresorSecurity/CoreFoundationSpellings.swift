import Foundation

// The CoreFoundation and MacTypes names keychain code on Apple platforms is written with. Linux's
// Foundation has the Foundation classes they are toll-free bridged to on Apple platforms, but not
// the CF names: these aliases let `query as CFDictionary`, `kSecClass as String`, `item as? Data`,
// `var result: CFTypeRef?` and `SecAccessControlCreateFlags(rawValue: CFOptionFlags(…))` compile
// and mean what they mean there.

/// Apple's `OSStatus`: `0` (`noErr`, `errSecSuccess`) for success, a negative `errSec…` code otherwise.
public typealias OSStatus = Int32
/// MacTypes' four-character code (`kSecAttrCreator`, `kSecAttrType`).
public typealias FourCharCode = UInt32
public typealias OSType = FourCharCode
public typealias CFIndex = Int
/// What `SecAccessControlCreateFlags(rawValue:)` is written with.
public typealias CFOptionFlags = UInt
public typealias CFTypeRef = AnyObject
public typealias CFString = NSString
public typealias CFDictionary = NSDictionary
public typealias CFMutableDictionary = NSMutableDictionary
public typealias CFArray = NSArray
public typealias CFData = NSData
public typealias CFNumber = NSNumber
public typealias CFBoolean = NSNumber
public typealias CFDate = NSDate
public typealias CFError = NSError
/// Allocators do not exist here; every `allocator` parameter takes `nil` or ``kCFAllocatorDefault``.
public typealias CFAllocator = NSObject

public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)
nonisolated(unsafe) public let kCFAllocatorDefault: CFAllocator? = nil

/// CFError's domain type: a string, as on Apple platforms.
public typealias CFErrorDomain = CFString

/// The domain of `error` (`NSOSStatusErrorDomain` for the Security functions' errors).
/// - Parameter error: An error from a function that hands one back through `Unmanaged<CFError>`.
/// - Returns: Its domain.
public func CFErrorGetDomain(_ error: CFError) -> CFErrorDomain {
    NSString(string: error.domain)
}

/// The code of `error`: for the Security functions' errors, the `OSStatus` (`errSecParam`…).
/// - Parameter error: An error from a function that hands one back through `Unmanaged<CFError>`.
/// - Returns: Its code.
public func CFErrorGetCode(_ error: CFError) -> CFIndex {
    error.code
}

/// The user info of `error` (its description under `NSLocalizedDescriptionKey`).
/// - Parameter error: An error from a function that hands one back through `Unmanaged<CFError>`.
/// - Returns: A copy of its user info dictionary.
public func CFErrorCopyUserInfo(_ error: CFError) -> CFDictionary {
    NSDictionary(dictionary: error.userInfo)
}
