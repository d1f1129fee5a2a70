import Foundation
import TresorModel

/// The fixed values of SecItem dictionaries that are not attributes of their own: classes,
/// protection and key classes, persistent references. The attributes are ``SecItemAttribute``.
enum SecItemValues {
    static let keyClasses: [String: ItemAttributes.KeyClass] = [
        kSecAttrKeyClassPublic as String: .public, kSecAttrKeyClassPrivate as String: .private,
        kSecAttrKeyClassSymmetric as String: .symmetric,
    ]

    static let classes: [String: ItemClass] = [
        kSecClassGenericPassword as String: .genericPassword, kSecClassInternetPassword as String: .internetPassword,
        kSecClassCertificate as String: .certificate, kSecClassKey as String: .key,
    ]

    static let protectionClasses: [String: ProtectionClass] = [
        kSecAttrAccessibleWhenUnlocked as String: .whenUnlocked,
        kSecAttrAccessibleAfterFirstUnlock as String: .afterFirstUnlock,
        kSecAttrAccessibleAlways as String: .always,
        kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String: .whenUnlockedThisDeviceOnly,
        kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String: .afterFirstUnlockThisDeviceOnly,
        kSecAttrAccessibleAlwaysThisDeviceOnly as String: .alwaysThisDeviceOnly,
        kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly as String: .whenPasscodeSetThisDeviceOnly,
    ]

    static func protectionClass(_ value: String) -> ProtectionClass? { protectionClasses[value] }

    static func accessibleValue(_ protectionClass: ProtectionClass) -> String? {
        protectionClasses.first { $0.value == protectionClass }?.key
    }

    /// A persistent reference is the item's id, as bytes: stable for the item's life.
    static func persistentReference(_ id: String) -> Data { Data(("tresor:" + id).utf8) }

    static func id(fromPersistentReference reference: Data) -> String? {
        let text = String(decoding: reference, as: UTF8.self)
        guard text.hasPrefix("tresor:") else { return nil }
        return String(text.dropFirst("tresor:".count))
    }
}
