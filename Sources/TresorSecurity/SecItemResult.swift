import Foundation
import TresorModel

/// One found item in the shape Apple returns it.
enum SecItemResult {
    /// `Data` when only the data (or only the persistent reference) was asked for; an
    /// attributes dictionary when attributes were, with `kSecValueData` and
    /// `kSecValuePersistentRef` in it if those were asked for too; nil when nothing was.
    static func value(of item: KeychainItem, for request: SecItemRequest) -> AnyObject? {
        switch (request.returnData, request.returnAttributes, request.returnPersistentReference) {
        case (false, false, false): return nil
        case (true, false, false): return item.secret.map { NSData(data: $0) }
        case (false, false, true): return NSData(data: SecItemValues.persistentReference(item.id))
        default:
            var dictionary = request.returnAttributes ? attributes(of: item) : [:]
            if request.returnData, let secret = item.secret { dictionary[kSecValueData as String] = NSData(data: secret) }
            if request.returnPersistentReference {
                dictionary[kSecValuePersistentRef as String] = NSData(data: SecItemValues.persistentReference(item.id))
            }
            return NSDictionary(dictionary: dictionary)
        }
    }

    /// Every attribute the item has, under Apple's keys, with its class.
    static func attributes(of item: KeychainItem) -> [String: Any] {
        guard let attributes = item.attributes else { return [kSecClass as String: classValue(item.itemClass)] }
        var dictionary: [String: Any] = [kSecClass as String: classValue(item.itemClass)]
        for (key, attribute) in SecItemValues.attributes(for: item.itemClass) {
            guard let value = attribute.get(attributes) else { continue }
            dictionary[key] = bridged(value)
        }
        if let accessible = attributes.accessible, let value = SecItemValues.accessibleValue(accessible) {
            dictionary[kSecAttrAccessible as String] = NSString(string: value)
            if attributes.accessControl != nil {
                dictionary[kSecAttrAccessControl as String] = SecAccessControl(protection: accessible, flags: .userPresence)
            }
        }
        dictionary[kSecAttrSynchronizable as String] = NSNumber(value: attributes.synchronizable ?? false)
        return dictionary
    }

    private static func classValue(_ itemClass: ItemClass) -> NSString {
        NSString(string: SecItemValues.classes.first { $0.value == itemClass }!.key)
    }

    /// Foundation objects, as a CFDictionary holds on Apple platforms.
    private static func bridged(_ value: Any) -> Any {
        switch value {
        case let text as String: return NSString(string: text)
        case let data as Data: return NSData(data: data)
        case let number as Int: return NSNumber(value: number)
        case let date as Date: return NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate)
        default: return value
        }
    }
}
