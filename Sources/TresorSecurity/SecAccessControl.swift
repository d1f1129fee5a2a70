import Foundation
import TresorModel

/// `SecAccessControlCreateFlags`, with Apple's bit values.
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)

    /// The flags that ask for the user: all of them are proved on Linux by Tresor's user
    /// presence (the passcode, or an approval through Tresor) — there is no biometry or watch.
    static let presence: SecAccessControlCreateFlags = [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .watch, .or, .and]
}

/// A protection class with the presence requirement, as `kSecAttrAccessControl` takes it.
public final class SecAccessControl: @unchecked Sendable {
    let protection: ProtectionClass
    let flags: SecAccessControlCreateFlags

    init(protection: ProtectionClass, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
    }

    var accessControl: AccessControl? { flags.isEmpty ? nil : .userPresence }
}

/// Makes an access control object for `kSecAttrAccessControl`.
/// - Parameters:
///   - allocator: Unused; `nil` or `kCFAllocatorDefault`.
///   - protection: One of the `kSecAttrAccessible…` values.
///   - flags: `.userPresence` (or `.devicePasscode`, or the biometry flags, which Tresor proves
///     the same way); `.privateKeyUsage` and `.applicationPassword` are not supported.
///   - error: Receives an `NSError` whose code is `errSecParam` when the object cannot be made.
/// - Returns: The access control, or nil with `error` set.
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    func fail(_ reason: String) -> SecAccessControl? {
        error?.pointee = Unmanaged.passRetained(
            NSError(domain: NSOSStatusErrorDomain, code: Int(errSecParam), userInfo: [NSLocalizedDescriptionKey: reason]))
        return nil
    }
    guard let value = protection as? String, let protectionClass = SecItemValues.protectionClass(value) else {
        return fail("protection is not a kSecAttrAccessible value")
    }
    guard flags.subtracting(SecAccessControlCreateFlags.presence).isEmpty else {
        return fail("only user presence (or passcode/biometry, proved the same way) is supported")
    }
    return SecAccessControl(protection: protectionClass, flags: flags)
}
