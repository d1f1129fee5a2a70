import Foundation
import Testing
import TresorKit
import TresorSecurity
import TresorTestSupport

/// Apple's SecItem API against a real daemon: the results' shapes and every `errSec…` outcome
/// Apple documents. The test runner itself is the registered application, so the calls are made
/// in process, as an application's would be. One suite, serialized: `SecItemKeychain` is global.
@Suite(.blocksItsThread, .serialized) struct SecItemTests {
    static let passcode = "secitem-passcode"

    /// Runs `body` against a daemon with a passcode, this test process registered as
    /// `TESTS.secitem`, and the SecItem functions pointed at it. The harness lives until `body`
    /// returns: Swift may release a local after its last use, and a released harness stops
    /// its daemon.
    func withDaemon(_ body: (Harness) throws -> Void) throws {
        let harness = try setUp()
        try withExtendedLifetime(harness) { try body(harness) }
    }

    private func setUp() throws -> Harness {
        let harness = try Harness.initialized(passcode: Self.passcode, secrets: ["hunter2", "n3w-secret"])
        try harness.registerTestRunner(id: "TESTS.secitem", team: "TESTS", passcode: Self.passcode)
        SecItemKeychain.use(Keychain(client: try TresorKitClient.connect(harness)))
        return harness
    }

    func password(account: String, service: String = "api.example.com") -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    func add(_ attributes: [String: Any], secret: String = "hunter2") -> OSStatus {
        var attributes = attributes
        attributes[kSecValueData as String] = Data(secret.utf8)
        return SecItemAdd(attributes as CFDictionary, nil)
    }

    func copy(_ query: [String: Any]) -> (OSStatus, CFTypeRef?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result)
    }

    @Test func resultsComeBackInApplesShapes() throws {
        try withDaemon { harness in
            #expect(add(password(account: "ada").merging([kSecAttrLabel as String: "API token"]) { $1 }) == errSecSuccess)
            #expect(add(password(account: "bob"), secret: "n3w-secret") == errSecSuccess)

            // Data alone.
            var query = password(account: "ada")
            query[kSecReturnData as String] = kCFBooleanTrue
            let (dataStatus, data) = copy(query)
            #expect(dataStatus == errSecSuccess)
            #expect(data as? Data == Data("hunter2".utf8))

            // Attributes alone: Apple's keys, the class, the default protection class.
            query = password(account: "ada")
            query[kSecReturnAttributes as String] = true
            let (attributesStatus, attributes) = copy(query)
            #expect(attributesStatus == errSecSuccess)
            let dictionary = try #require(attributes as? [String: Any])
            #expect(dictionary[kSecAttrAccount as String] as? String == "ada")
            #expect(dictionary[kSecAttrService as String] as? String == "api.example.com")
            #expect(dictionary[kSecAttrLabel as String] as? String == "API token")
            #expect(dictionary[kSecClass as String] as? String == kSecClassGenericPassword as String)
            #expect(dictionary[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked as String)
            #expect(dictionary[kSecAttrSynchronizable as String] as? Bool == false)
            #expect(dictionary[kSecAttrCreationDate as String] as? Date != nil)
            #expect(dictionary[kSecValueData as String] == nil, "data only when asked for")
            #expect(attributes is NSDictionary)

            // Both, for every item: an array of dictionaries.
            let (allStatus, all) = copy([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api.example.com",
                kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true, kSecReturnData as String: true,
            ])
            #expect(allStatus == errSecSuccess)
            let items = try #require(all as? [[String: Any]])
            #expect(Set(items.compactMap { $0[kSecAttrAccount as String] as? String }) == ["ada", "bob"])
            #expect(
                Set(items.compactMap { ($0[kSecValueData as String] as? Data).map { String(decoding: $0, as: UTF8.self) } }) == [
                    "hunter2", "n3w-secret",
                ])

            // A match limit of one over two matches: one item, not an array.
            let (oneStatus, one) = copy([
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api.example.com", kSecReturnData as String: true,
            ])
            #expect(oneStatus == errSecSuccess)
            #expect(one is Data)

            // No return key: an existence check.
            let (existsStatus, nothing) = copy(password(account: "bob"))
            #expect(existsStatus == errSecSuccess)
            #expect(nothing == nil)

            // A persistent reference finds the same item again.
            query = password(account: "bob")
            query[kSecReturnPersistentRef as String] = true
            let reference = try #require(copy(query).1 as? Data)
            let (byReference, secret) = copy([
                kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: reference, kSecReturnData as String: true,
            ])
            #expect(byReference == errSecSuccess)
            #expect(secret as? Data == Data("n3w-secret".utf8))
            try harness.expectNoSecretLeaked()
        }
    }

    @Test func everyDocumentedStatus() throws {
        try withDaemon { harness in
            #expect(add(password(account: "ada")) == errSecSuccess)
            // Duplicate, nothing found, for each function.
            #expect(add(password(account: "ada")) == errSecDuplicateItem)
            #expect(copy(password(account: "nobody")).0 == errSecItemNotFound)
            var all = password(account: "nobody")
            all[kSecMatchLimit as String] = kSecMatchLimitAll
            #expect(copy(all).0 == errSecItemNotFound)
            #expect(SecItemUpdate(password(account: "nobody") as CFDictionary, [kSecAttrLabel as String: "x"] as CFDictionary) == errSecItemNotFound)
            #expect(SecItemDelete(password(account: "nobody") as CFDictionary) == errSecItemNotFound)
            // No class: errSecParam from each.
            let classless: [String: Any] = [kSecAttrService as String: "api.example.com"]
            #expect(SecItemAdd(classless as CFDictionary, nil) == errSecParam)
            #expect(copy(classless).0 == errSecParam)
            #expect(SecItemUpdate(classless as CFDictionary, [kSecAttrLabel as String: "x"] as CFDictionary) == errSecParam)
            #expect(SecItemDelete(classless as CFDictionary) == errSecParam)
            // Identities: none exist, none can be added.
            #expect(copy([kSecClass as String: kSecClassIdentity, kSecReturnAttributes as String: true]).0 == errSecItemNotFound)
            #expect(SecItemAdd([kSecClass as String: kSecClassIdentity] as CFDictionary, nil) == errSecParam)
            // Object references do not exist here.
            var byRef = password(account: "ada")
            byRef[kSecReturnRef as String] = true
            #expect(copy(byRef).0 == errSecUnimplemented)
            // A key Tresor does not store, a value of the wrong type, "any" where only a search takes it.
            var unknown = password(account: "ada")
            unknown["invi"] = true
            #expect(copy(unknown).0 == errSecParam)
            var wrongType = password(account: "ada")
            wrongType[kSecAttrAccount as String] = 42
            #expect(copy(wrongType).0 == errSecParam)
            var anyOnAdd = password(account: "carol")
            anyOnAdd[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
            #expect(add(anyOnAdd) == errSecParam)
            // Changing the class in an update.
            #expect(SecItemUpdate(password(account: "ada") as CFDictionary, [kSecClass as String: kSecClassKey] as CFDictionary) == errSecParam)
            // An update that would make two items alike.
            #expect(add(password(account: "bob")) == errSecSuccess)
            #expect(
                SecItemUpdate(password(account: "bob") as CFDictionary, [kSecAttrAccount as String: "ada"] as CFDictionary) == errSecDuplicateItem)
            // A locked keybag.
            let locked = try harness.tresor(["lock"])
            #expect(locked.succeeded)
            var secret = password(account: "ada")
            secret[kSecReturnData as String] = true
            #expect(copy(secret).0 == errSecInteractionNotAllowed)
            // Apple's words for each.
            #expect(SecCopyErrorMessageString(errSecItemNotFound, nil) as String? == "The specified item could not be found in the keychain.")
            #expect(SecCopyErrorMessageString(errSecDuplicateItem, nil) as String? == "The specified item already exists in the keychain.")
            #expect(SecCopyErrorMessageString(12345, nil) == nil)
        }
    }

    @Test func updateAndDeleteAffectEveryMatch() throws {
        try withDaemon { _ in
            #expect(add(password(account: "ada")) == errSecSuccess)
            #expect(add(password(account: "bob")) == errSecSuccess)
            let service: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api.example.com"]
            #expect(SecItemUpdate(service as CFDictionary, [kSecValueData as String: Data("n3w-secret".utf8)] as CFDictionary) == errSecSuccess)
            for account in ["ada", "bob"] {
                var query = password(account: account)
                query[kSecReturnData as String] = true
                #expect(copy(query).1 as? Data == Data("n3w-secret".utf8))
            }
            #expect(SecItemDelete(service as CFDictionary) == errSecSuccess)
            #expect(copy(service).0 == errSecItemNotFound)
        }
    }

    @Test func synchronizableAnyMatchesBoth() throws {
        try withDaemon { _ in
            var synced = password(account: "synced")
            synced[kSecAttrSynchronizable as String] = kCFBooleanTrue
            #expect(add(synced) == errSecSuccess)
            #expect(add(password(account: "local")) == errSecSuccess)
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api.example.com",
                kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
            ]
            // Unset: non-synchronizable items only, as on Apple platforms.
            #expect((copy(query).1 as? [[String: Any]])?.count == 1)
            query[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
            let both = try #require(copy(query).1 as? [[String: Any]])
            #expect(Set(both.compactMap { $0[kSecAttrAccount as String] as? String }) == ["synced", "local"])
            query.removeValue(forKey: kSecMatchLimit as String)
            query.removeValue(forKey: kSecReturnAttributes as String)
            #expect(SecItemDelete(query as CFDictionary) == errSecSuccess)
            query[kSecMatchLimit as String] = kSecMatchLimitAll
            #expect(copy(query).0 == errSecItemNotFound)
        }
    }

    @Test func accessControlWithUserPresence() throws {
        try withDaemon { _ in
            var error: Unmanaged<CFError>?
            let control = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .userPresence, &error))
            var item = password(account: "guarded")
            item[kSecAttrAccessControl as String] = control
            #expect(add(item) == errSecSuccess)
            // Attributes are readable; the secret needs the user (no passcode was given here).
            var query = password(account: "guarded")
            query[kSecReturnAttributes as String] = true
            let attributes = try #require(copy(query).1 as? [String: Any])
            #expect(attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String)
            #expect(attributes[kSecAttrAccessControl as String] is SecAccessControl)
            query[kSecReturnData as String] = true
            #expect(copy(query).0 == errSecAuthFailed)
            // Both ways of naming the protection class at once, and flags Tresor cannot honour.
            item = password(account: "both")
            item[kSecAttrAccessControl as String] = control
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAlways
            #expect(add(item) == errSecParam)
            #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .privateKeyUsage, &error) == nil)
            #expect(error?.takeRetainedValue().code == Int(errSecParam))
        }
    }

    @Test func addReturnsWhatItWasAskedFor() throws {
        try withDaemon { _ in
            // The pattern of many tutorials: a [String: AnyObject] and a pointer taken by hand.
            var dictionary = [String: AnyObject]()
            dictionary[kSecClass as String] = kSecClassGenericPassword
            dictionary[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
            dictionary[kSecAttrService as String] = "MyService" as CFString
            dictionary[kSecAttrAccount as String] = "My Name" as CFString
            dictionary[kSecValueData as String] = Data("hunter2".utf8) as CFData
            dictionary[kSecReturnAttributes as String] = kCFBooleanTrue
            var result: AnyObject?
            let status = withUnsafeMutablePointer(to: &result) { SecItemAdd(dictionary as CFDictionary, UnsafeMutablePointer($0)) }
            #expect(status == errSecSuccess)
            let attributes = try #require(result as? [String: AnyObject])
            #expect(attributes[kSecAttrAccount as String] as? String == "My Name")
        }
    }
}
