import Foundation
import Testing
import TresorModel
import TresorSecurity

/// Apple's `kSecAttr…` constants are the keys `ItemAttribute.all` declares, so code that names one
/// reaches the attribute the table maps it to, and an attribute given a key in the table is one
/// Apple names.
@Suite struct SecItemKeyTableTests {
    @Test func everyTableKeyIsApplesConstant() {
        let constants: [String: CFString] = [
            "accessGroup": kSecAttrAccessGroup, "accessible": kSecAttrAccessible, "accessControl": kSecAttrAccessControl,
            "synchronizable": kSecAttrSynchronizable, "label": kSecAttrLabel, "description": kSecAttrDescription,
            "comment": kSecAttrComment, "creator": kSecAttrCreator, "type": kSecAttrType, "creationDate": kSecAttrCreationDate,
            "modificationDate": kSecAttrModificationDate, "account": kSecAttrAccount, "service": kSecAttrService,
            "generic": kSecAttrGeneric, "server": kSecAttrServer, "protocol": kSecAttrProtocol, "port": kSecAttrPort, "path": kSecAttrPath,
            "authenticationType": kSecAttrAuthenticationType, "securityDomain": kSecAttrSecurityDomain,
            "certificateType": kSecAttrCertificateType, "certificateEncoding": kSecAttrCertificateEncoding, "subject": kSecAttrSubject,
            "issuer": kSecAttrIssuer, "serialNumber": kSecAttrSerialNumber, "subjectKeyID": kSecAttrSubjectKeyID,
            "publicKeyHash": kSecAttrPublicKeyHash, "keyClass": kSecAttrKeyClass, "applicationLabel": kSecAttrApplicationLabel,
            "applicationTag": kSecAttrApplicationTag, "keyType": kSecAttrKeyType, "keySizeInBits": kSecAttrKeySizeInBits,
            "effectiveKeySize": kSecAttrEffectiveKeySize,
        ]
        for attribute in ItemAttribute.all {
            #expect(attribute.secItemKey == constants[attribute.name].map { $0 as String }, "\(attribute.name)")
        }
    }

    /// `kSecAttrType` and `kSecAttrKeyType` are one string: a four-character code for passwords,
    /// the key's algorithm for keys — each class reads the key as its own attribute.
    @Test func typeIsTheKeyTypeForKeysAndACodeForPasswords() throws {
        try withIdiomDaemon { _ in
            let key: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrKeyType as String: kSecAttrKeyTypeEC, kSecAttrApplicationTag as String: Data("tag".utf8),
                kSecValueData as String: Data(repeating: 7, count: 32),
            ]
            #expect(SecItemAdd(key as CFDictionary, nil) == errSecSuccess)
            let keyQuery: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrKeyType as String: kSecAttrKeyTypeEC, kSecReturnAttributes as String: true,
            ]
            let found = try #require(copyMatching(keyQuery).result as? [String: Any])
            #expect(found[kSecAttrType as String] as? String == kSecAttrKeyTypeEC as String)
            #expect(addPassword(genericPassword(account: "typed").merging([kSecAttrType as String: "test"]) { $1 }) == errSecSuccess)
            var passwordQuery = genericPassword(account: "typed")
            passwordQuery[kSecReturnAttributes as String] = true
            let password = try #require(copyMatching(passwordQuery).result as? [String: Any])
            #expect((password[kSecAttrType as String] as? NSNumber)?.uint32Value == 0x7465_7374)
        }
    }
}
