import Foundation
import TresorModel

/// How each `kSecAttr…` key maps onto Tresor's ``ItemAttributes``: written once, read by the
/// dictionaries going in (queries, new items, changes) and coming out (results).
enum SecItemValues {
    /// One attribute key: how to store a dictionary value into the attributes (nil when the
    /// value has the wrong type) and how to read it back.
    struct Attribute: @unchecked Sendable {  // immutable closures over key paths
        let set: (inout ItemAttributes, Any) -> Bool
        let get: (ItemAttributes) -> Any?

        static func string(_ path: WritableKeyPath<ItemAttributes, String?>) -> Attribute {
            Attribute(set: { attributes, value in
                guard let text = value as? String else { return false }
                attributes[keyPath: path] = text
                return true
            }, get: { $0[keyPath: path] })
        }

        static func data(_ path: WritableKeyPath<ItemAttributes, Data?>) -> Attribute {
            Attribute(set: { attributes, value in
                guard let data = value as? Data else { return false }
                attributes[keyPath: path] = data
                return true
            }, get: { $0[keyPath: path] })
        }

        static func integer(_ path: WritableKeyPath<ItemAttributes, Int?>) -> Attribute {
            Attribute(set: { attributes, value in
                guard let number = integer(value) else { return false }
                attributes[keyPath: path] = number
                return true
            }, get: { $0[keyPath: path] })
        }

        static func fourCharCode(_ path: WritableKeyPath<ItemAttributes, UInt32?>) -> Attribute {
            Attribute(set: { attributes, value in
                guard let number = integer(value), let code = UInt32(exactly: number) else { return false }
                attributes[keyPath: path] = code
                return true
            }, get: { $0[keyPath: path].map { Int($0) } })
        }

        /// Set by the keychain: readable in results, refused in what a caller sends.
        static func readOnlyDate(_ path: KeyPath<ItemAttributes, Date?>) -> Attribute {
            Attribute(set: { _, _ in false }, get: { $0[keyPath: path] })
        }

        private static func integer(_ value: Any) -> Int? {
            if value is Bool { return nil }
            return value as? Int
        }
    }

    /// The attribute keys Tresor stores, for every class but keys (whose `type` is the key
    /// type, not a four-character code: ``keyAttributes``).
    static let attributes: [String: Attribute] = [
        kSecAttrAccessGroup as String: .string(\.accessGroup),
        kSecAttrLabel as String: .string(\.label),
        kSecAttrDescription as String: .string(\.description),
        kSecAttrComment as String: .string(\.comment),
        kSecAttrCreator as String: .fourCharCode(\.creator),
        kSecAttrType as String: .fourCharCode(\.type),
        kSecAttrCreationDate as String: .readOnlyDate(\.creationDate),
        kSecAttrModificationDate as String: .readOnlyDate(\.modificationDate),
        kSecAttrAccount as String: .string(\.account),
        kSecAttrService as String: .string(\.service),
        kSecAttrGeneric as String: .data(\.generic),
        kSecAttrServer as String: .string(\.server),
        kSecAttrProtocol as String: .string(\.protocol),
        kSecAttrPort as String: .integer(\.port),
        kSecAttrPath as String: .string(\.path),
        kSecAttrAuthenticationType as String: .string(\.authenticationType),
        kSecAttrSecurityDomain as String: .string(\.securityDomain),
        kSecAttrCertificateType as String: .integer(\.certificateType),
        kSecAttrCertificateEncoding as String: .integer(\.certificateEncoding),
        kSecAttrSubject as String: .data(\.subject),
        kSecAttrIssuer as String: .data(\.issuer),
        kSecAttrSerialNumber as String: .data(\.serialNumber),
        kSecAttrSubjectKeyID as String: .data(\.subjectKeyID),
        kSecAttrPublicKeyHash as String: .data(\.publicKeyHash),
        kSecAttrApplicationLabel as String: .data(\.applicationLabel),
        kSecAttrApplicationTag as String: .data(\.applicationTag),
        kSecAttrKeySizeInBits as String: .integer(\.keySizeInBits),
        kSecAttrEffectiveKeySize as String: .integer(\.effectiveKeySize),
        kSecAttrKeyClass as String: Attribute(set: { attributes, value in
            guard let text = value as? String, let keyClass = keyClasses[text] else { return false }
            attributes.keyClass = keyClass
            return true
        }, get: { attributes in attributes.keyClass.flatMap { keyClass in keyClasses.first { $0.value == keyClass }?.key } }),
    ]

    /// For `kSecClassKey` items `type` is the key type (`kSecAttrKeyTypeRSA`…).
    static let keyAttributes: [String: Attribute] = attributes.merging([kSecAttrKeyType as String: .string(\.keyType)]) { $1 }

    static func attributes(for itemClass: ItemClass) -> [String: Attribute] {
        itemClass == .key ? keyAttributes : attributes
    }

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

    /// A dictionary value read as a boolean: `true`, `kCFBooleanTrue`, or a number.
    static func boolean(_ value: Any) -> Bool? {
        if let flag = value as? Bool { return flag }
        if let number = value as? Int { return number != 0 }
        return nil
    }
}
