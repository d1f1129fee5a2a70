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
            var dictionary = request.returnAttributes ? attributes(of: item, forms: request.blobForms) : [:]
            if request.returnData, let secret = item.secret { dictionary[kSecValueData as String] = NSData(data: secret) }
            if request.returnPersistentReference {
                dictionary[kSecValuePersistentRef as String] = NSData(data: SecItemValues.persistentReference(item.id))
            }
            return NSDictionary(dictionary: dictionary)
        }
    }

    /// Every attribute the item has, under Apple's keys and in Apple's types (the attribute
    /// table's), with its class.
    /// - Parameter forms: How the request gave bytes-or-text attributes: they come back so.
    static func attributes(of item: KeychainItem, forms: [String: SecItemAttribute.BlobForm] = [:]) -> [String: Any] {
        var dictionary: [String: Any] = [kSecClass as String: classValue(item.itemClass)]
        guard let attributes = item.attributes else { return dictionary }
        for (key, attribute) in SecItemAttribute.table(for: item.itemClass) {
            guard let value = attribute.value(in: attributes, form: forms[key]) else { continue }
            dictionary[key] = value
        }
        if let accessible = attributes.accessible, attributes.accessControl != nil {
            dictionary[kSecAttrAccessControl as String] = SecAccessControl(protection: accessible, flags: .userPresence)
        }
        // Apple answers the flag for every item: unset is not synchronizable.
        dictionary[kSecAttrSynchronizable as String] = NSNumber(value: attributes.synchronizable ?? false)
        return dictionary
    }

    private static func classValue(_ itemClass: ItemClass) -> NSString {
        NSString(string: SecItemValues.classes.first { $0.value == itemClass }!.key)
    }
}
