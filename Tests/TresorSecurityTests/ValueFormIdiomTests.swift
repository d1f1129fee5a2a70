import Foundation
import Testing
import TresorSecurity
import TresorTestSupport

/// Every value form Apple accepts for a key, and the types results come back in
/// (docs/SECITEM.md, "Value forms").
@Suite(.blocksItsThread) struct ValueFormIdiomTests {
    @Test func accountAndServiceAsUTF8Data() throws {
        try withIdiomDaemon { _ in
            let item: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: Data("bytes.example".utf8),
                kSecAttrAccount as String: Data("ada".utf8), kSecAttrLabel as String: Data("Label".utf8),
            ]
            #expect(addPassword(item) == errSecSuccess)
            // Found by the same key as a string, and given back as a string.
            var asText = genericPassword(service: "bytes.example", account: "ada")
            asText[kSecReturnAttributes as String] = true
            let text = try #require(copyMatching(asText).result as? [String: Any])
            #expect(text[kSecAttrAccount as String] as? String == "ada")
            #expect(text[kSecAttrLabel as String] as? String == "Label")
            // Asked with bytes, answered with bytes, as Apple keeps the form an item was given in.
            var asBytes = item
            asBytes.removeValue(forKey: kSecAttrLabel as String)
            asBytes[kSecReturnAttributes as String] = true
            asBytes[kSecReturnData as String] = true
            let bytes = try #require(copyMatching(asBytes).result as? [String: Any])
            #expect(bytes[kSecAttrAccount as String] as? Data == Data("ada".utf8))
            #expect(bytes[kSecAttrService as String] as? Data == Data("bytes.example".utf8))
            #expect(bytes[kSecValueData as String] as? Data == Data(IdiomSecrets.first.utf8))
            // The same item, so a second add by bytes is a duplicate.
            #expect(addPassword(item) == errSecDuplicateItem)
            var toChange = asText
            toChange.removeValue(forKey: kSecReturnAttributes as String)  // an update's query asks for nothing back
            #expect(SecItemUpdate(toChange as CFDictionary, [kSecAttrComment as String: Data("note".utf8)] as CFDictionary) == errSecSuccess)
            #expect((copyMatching(asText).result as? [String: Any])?[kSecAttrComment as String] as? String == "note")
        }
    }

    @Test func foundationAndCoreFoundationObjects() throws {
        try withIdiomDaemon { _ in
            let item = NSMutableDictionary()
            item[kSecClass] = kSecClassGenericPassword
            item[kSecAttrService] = NSString(string: "objects.example")
            item[kSecAttrAccount] = "ada" as CFString
            item[kSecAttrGeneric] = NSData(data: Data([0, 1, 2, 255]))
            item[kSecValueData] = Data(IdiomSecrets.first.utf8) as CFData
            item[kSecAttrSynchronizable] = NSNumber(value: false)
            item[kSecReturnAttributes] = kCFBooleanTrue
            var result: CFTypeRef?
            #expect(SecItemAdd(item, &result) == errSecSuccess)
            let attributes = try #require(result as? NSDictionary)
            #expect(attributes[kSecAttrAccount] as? String == "ada")
            #expect(attributes[kSecAttrGeneric] as? Data == Data([0, 1, 2, 255]))
            // The generic attribute given as a string is its UTF-8.
            var query = genericPassword(service: "objects.example", account: "ada")
            query[kSecAttrGeneric as String] = String(decoding: [0x61, 0x62], as: UTF8.self)
            #expect(copyMatching(query).status == errSecItemNotFound)
        }
    }

    /// Code that checks a result's type the CoreFoundation way compiles and takes the right branch.
    @Test func resultsAreTheirCoreFoundationTypes() throws {
        try withIdiomDaemon { _ in
            #expect(addPassword(genericPassword(account: "typed")) == errSecSuccess)
            var query = genericPassword(account: "typed")
            query[kSecReturnData as String] = true
            let data = copyMatching(query).result
            #expect(CFGetTypeID(data) == CFDataGetTypeID() && CFGetTypeID(data) != CFStringGetTypeID())
            query[kSecReturnData as String] = false
            query[kSecReturnAttributes as String] = true
            let attributes = copyMatching(query).result
            #expect(CFGetTypeID(attributes) == CFDictionaryGetTypeID())
            let dictionary = try #require(attributes as? [String: Any])
            #expect(CFGetTypeID(dictionary[kSecAttrAccount as String] as CFTypeRef?) == CFStringGetTypeID())
            #expect(CFGetTypeID(dictionary[kSecAttrCreationDate as String] as CFTypeRef?) == CFDateGetTypeID())
            query[kSecMatchLimit as String] = kSecMatchLimitAll
            #expect(CFGetTypeID(copyMatching(query).result) == CFArrayGetTypeID())
        }
        #expect(CFGetTypeID(kCFBooleanTrue) == CFBooleanGetTypeID() && CFGetTypeID(true as CFTypeRef) == CFBooleanGetTypeID())
        #expect(CFGetTypeID(NSNumber(value: 42)) == CFNumberGetTypeID() && CFNumberGetTypeID() != CFBooleanGetTypeID())
        #expect(CFGetTypeID(nil) != CFDataGetTypeID())
    }

    @Test func booleanForms() throws {
        try withIdiomDaemon { _ in
            let trues: [Any] = [true, kCFBooleanTrue!, NSNumber(value: true), 1, NSNumber(value: 1)]
            for (index, flag) in trues.enumerated() {
                var item = genericPassword(account: "synced-\(index)")
                item[kSecAttrSynchronizable as String] = flag
                #expect(addPassword(item) == errSecSuccess, "synchronizable given as \(type(of: flag))")
            }
            let falses: [Any] = [false, kCFBooleanFalse!, NSNumber(value: false), 0]
            for (index, flag) in falses.enumerated() {
                var item = genericPassword(account: "local-\(index)")
                item[kSecAttrSynchronizable as String] = flag
                #expect(addPassword(item) == errSecSuccess)
            }
            for flag in trues {
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecAttrSynchronizable as String: flag,
                    kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: flag,
                ]
                let items = try #require(copyMatching(query).result as? [[String: Any]], "returned when asked with \(type(of: flag))")
                #expect(items.count == trues.count)
                #expect(items.allSatisfy { $0[kSecAttrSynchronizable as String] as? Bool == true })
            }
        }
    }

    @Test func numberAndFourCharacterCodeForms() throws {
        try withIdiomDaemon { _ in
            let ports: [Any] = [443, NSNumber(value: 8443), UInt16(993), Int32(22)]
            for (index, port) in ports.enumerated() {
                let item: [String: Any] = [
                    kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "host\(index).example",
                    kSecAttrPort as String: port, kSecAttrCreator as String: index.isMultiple(of: 2) ? "aapl" : 0x6161_706C,
                    kSecAttrType as String: NSNumber(value: 0x7465_7374),
                ]
                #expect(addPassword(item) == errSecSuccess, "port given as \(type(of: port))")
            }
            let query: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrCreator as String: "aapl", kSecAttrType as String: "test",
                kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
            ]
            let items = try #require(copyMatching(query).result as? [[String: Any]])
            #expect(Set(items.compactMap { $0[kSecAttrPort as String] as? Int }) == [443, 8443, 993, 22])
            #expect(items.allSatisfy { ($0[kSecAttrCreator as String] as? NSNumber)?.uint32Value == 0x6161_706C })
            #expect(items.allSatisfy { $0[kSecAttrCreator as String] as? FourCharCode == 0x6161_706C })
        }
    }

    @Test func datesReturnedAsDateAndMatchedInASearch() throws {
        try withIdiomDaemon { _ in
            #expect(addPassword(genericPassword(account: "dated")) == errSecSuccess)
            var query = genericPassword(account: "dated")
            query[kSecReturnAttributes as String] = true
            let attributes = try #require(copyMatching(query).result as? [String: Any])
            let created = try #require(attributes[kSecAttrCreationDate as String] as? Date)
            let modified = try #require(attributes[kSecAttrModificationDate as String] as? Date)
            #expect(abs(created.timeIntervalSinceNow) < 600)
            // The date read back finds the item, as `Date`, `NSDate` or `CFDate`; another does not.
            for form: Any in [created, NSDate(timeIntervalSinceReferenceDate: created.timeIntervalSinceReferenceDate), created as CFDate] {
                var byDate = genericPassword(account: "dated")
                byDate[kSecAttrCreationDate as String] = form
                byDate[kSecAttrModificationDate as String] = modified
                #expect(copyMatching(byDate).status == errSecSuccess, "creation date as \(type(of: form))")
            }
            var otherDate = genericPassword(account: "dated")
            otherDate[kSecAttrCreationDate as String] = created.addingTimeInterval(1)
            #expect(copyMatching(otherDate).status == errSecItemNotFound)
            // Set by the keychain: an update may not set it.
            #expect(
                SecItemUpdate(genericPassword(account: "dated") as CFDictionary, [kSecAttrModificationDate as String: Date()] as CFDictionary)
                    == errSecParam)
        }
    }

    @Test func refusedFormsAnswerParamAndTheDaemonServesOn() throws {
        try withIdiomDaemon { _ in
            let refused: [(String, Any)] = [
                (kSecAttrAccount as String, 42),
                (kSecAttrAccount as String, Data([0xFF, 0xFE])),
                (kSecAttrAccount as String, NSNull()),
                (kSecAttrAccount as String, ["ada"]),
                (kSecAttrServer as String, Date()),
                (kSecAttrLabel as String, ["a": "b"]),
                (kSecAttrPort as String, "443"),
                (kSecAttrPort as String, true),
                (kSecAttrPort as String, 4.5),
                (kSecAttrCreator as String, "toolong"),
                (kSecAttrCreator as String, "éab"),
                (kSecAttrCreator as String, -1),
                (kSecAttrSynchronizable as String, "yes"),
                (kSecAttrAccessible as String, "whenever"),
                (kSecAttrAccessible as String, 7),
                (kSecAttrCreationDate as String, Date()),
                (kSecAttrKeyClass as String, 1),
                (kSecAttrIsInvisible as String, true),
                (kSecReturnData as String, "yes"),
                (kSecMatchLimit as String, 0),
                (kSecMatchLimit as String, "m_LimitSome"),
                (kSecValueData as String, 12),
                (kSecValuePersistentRef as String, "tresor:x"),
                (kSecUseAuthenticationUI as String, kCFBooleanTrue!),
                (kSecClass as String, 4),
            ]
            // A valid item but for the one value: the conversion refuses it, not the keychain.
            let base: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "refused.example", kSecAttrAccount as String: "ada",
            ]
            for (key, value) in refused {
                var item = base
                item[key] = value
                if key != kSecValueData as String { item[kSecValueData as String] = Data(IdiomSecrets.first.utf8) }
                let searchOnly = [kSecValuePersistentRef as String, kSecMatchLimit as String].contains(key)
                let status = searchOnly ? copyMatching(item).status : SecItemAdd(item as CFDictionary, nil)
                #expect(status == errSecParam, "\(key) = \(value) (\(type(of: value)))")
            }
            // Nothing was stored, and the daemon still serves.
            #expect(copyMatching([kSecClass as String: kSecClassInternetPassword]).status == errSecItemNotFound)
            #expect(addPassword(base) == errSecSuccess)
        }
    }
}
