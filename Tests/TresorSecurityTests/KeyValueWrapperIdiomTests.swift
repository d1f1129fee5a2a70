import Foundation
import Testing
import TresorSecurity
import TresorTestSupport

/// The idioms of small key–value wrappers (keychain-swift's kind): a key is a generic
/// password's account, its value the item's data; success is checked against `noErr`.
@Suite(.blocksItsThread) struct KeyValueWrapperIdiomTests {
    /// The key as the wrapper spells its dictionary keys: a `CFString` constant made a `String`.
    static func name(_ constant: CFString) -> String { constant as String }

    @Test func statusComparedWithNoErr() throws {
        try withIdiomDaemon { _ in
            var lastResultCode: OSStatus = noErr
            lastResultCode = addPassword(genericPassword(account: "token"))
            #expect(lastResultCode == noErr)
            lastResultCode = SecItemDelete(genericPassword(account: "token") as CFDictionary)
            #expect(lastResultCode == noErr)
            lastResultCode = SecItemDelete(genericPassword(account: "token") as CFDictionary)
            #expect(lastResultCode != noErr)
            #expect(lastResultCode == errSecItemNotFound)
        }
    }

    @Test func deleteBeforeAddToOverwrite() throws {
        try withIdiomDaemon { _ in
            for secret in [IdiomSecrets.first, IdiomSecrets.second] {
                // Deleting first, whatever it answers, so that the add never meets a duplicate.
                _ = SecItemDelete([Self.name(kSecClass): kSecClassGenericPassword, Self.name(kSecAttrAccount): "token"] as CFDictionary)
                let item: [String: Any] = [
                    Self.name(kSecClass): kSecClassGenericPassword, Self.name(kSecAttrAccount): "token",
                    Self.name(kSecValueData): Data(secret.utf8), Self.name(kSecAttrAccessible): Self.name(kSecAttrAccessibleWhenUnlocked),
                ]
                #expect(SecItemAdd(item as CFDictionary, nil) == noErr)
            }
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "token", kSecReturnData as String: true,
            ]
            #expect(copyMatching(query).result as? Data == Data(IdiomSecrets.second.utf8))
        }
    }

    @Test func dataThroughAPointerTakenByHand() throws {
        try withIdiomDaemon { _ in
            #expect(addPassword([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "token"]) == noErr)
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "token",
                kSecMatchLimit as String: kSecMatchLimitOne, kSecReturnData as String: kCFBooleanTrue!,
            ]
            var result: AnyObject?
            let status = withUnsafeMutablePointer(to: &result) { SecItemCopyMatching(query as CFDictionary, UnsafeMutablePointer($0)) }
            #expect(status == noErr)
            #expect(result as? Data == Data(IdiomSecrets.first.utf8))
        }
    }

    @Test func persistentReferenceInsteadOfData() throws {
        try withIdiomDaemon { _ in
            #expect(addPassword([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "vpn"]) == noErr)
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "vpn",
                kSecMatchLimit as String: kSecMatchLimitOne, kSecReturnPersistentRef as String: kCFBooleanTrue!,
            ]
            let reference = try #require(copyMatching(query).result as? Data)
            #expect(!reference.isEmpty)
            let byReference: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: reference, kSecReturnData as String: true,
            ]
            #expect(copyMatching(byReference).result as? Data == Data(IdiomSecrets.first.utf8))
        }
    }

    @Test func allKeysWithDataAttributesAndPersistentReferences() throws {
        try withIdiomDaemon { _ in
            for account in ["alpha", "beta"] {
                #expect(addPassword([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: account]) == noErr)
            }
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: true, kSecReturnAttributes as String: true,
                kSecReturnPersistentRef as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            let (status, result) = copyMatching(query)
            #expect(status == noErr)
            let items = try #require(result as? [[String: Any]])
            #expect(Set(items.compactMap { $0[kSecAttrAccount as String] as? String }) == ["alpha", "beta"])
            #expect(items.allSatisfy { $0[kSecValueData as String] as? Data == Data(IdiomSecrets.first.utf8) })
            #expect(items.allSatisfy { ($0[kSecValuePersistentRef as String] as? Data)?.isEmpty == false })
        }
    }

    @Test func synchronizableOnAddAnyOnReadAndDelete() throws {
        try withIdiomDaemon { _ in
            var item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "synced"]
            item[kSecAttrSynchronizable as String] = true
            #expect(addPassword(item) == noErr)
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "synced", kSecReturnData as String: true,
            ]
            #expect(copyMatching(query).status == errSecItemNotFound, "without the key only non-synchronizable items match")
            query[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
            #expect(copyMatching(query).result as? Data == Data(IdiomSecrets.first.utf8))
            query.removeValue(forKey: kSecReturnData as String)
            #expect(SecItemDelete(query as CFDictionary) == noErr)
            #expect(copyMatching(query).status == errSecItemNotFound)
        }
    }

    /// A wrapper's "synchronizable" switch next to a *ThisDeviceOnly* accessibility: Apple's
    /// `SecItemAdd` refuses the pair with `errSecParam`, and adds nothing.
    @Test func synchronizableWithAThisDeviceOnlyClassIsAParameterError() throws {
        try withIdiomDaemon { _ in
            var item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "device-bound"]
            item[kSecAttrSynchronizable as String] = true
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            #expect(addPassword(item) == errSecParam)
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "device-bound",
                kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
            ]
            #expect(copyMatching(query).status == errSecItemNotFound)
        }
    }

    @Test func clearDeletesEveryItemOfTheClass() throws {
        try withIdiomDaemon { _ in
            for account in ["alpha", "beta", "gamma"] {
                #expect(addPassword([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: account]) == noErr)
            }
            var internet: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "kept.example"]
            #expect(addPassword(internet) == noErr)
            #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword] as CFDictionary) == noErr)
            #expect(
                copyMatching([kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll]).status
                    == errSecItemNotFound)
            internet[kSecReturnAttributes as String] = true
            #expect(copyMatching(internet).status == noErr, "another class is left alone")
        }
    }

    @Test func accessGroupWithTheTeamPrefix() throws {
        try withIdiomDaemon { _ in
            var shared = genericPassword(account: "shared")
            shared[kSecAttrAccessGroup as String] = "TESTS.shared"
            #expect(addPassword(shared) == errSecSuccess)
            var query = shared
            query[kSecReturnAttributes as String] = true
            let attributes = try #require(copyMatching(query).result as? [String: Any])
            #expect(attributes[kSecAttrAccessGroup as String] as? String == "TESTS.shared")
            // Without a group, an item goes to the application's own, and a search sees every group it may.
            #expect(addPassword(genericPassword(account: "own")) == errSecSuccess)
            var own = genericPassword(account: "own")
            own[kSecReturnAttributes as String] = true
            #expect((copyMatching(own).result as? [String: Any])?[kSecAttrAccessGroup as String] as? String == "TESTS.idioms")
            // Another team's group is not this application's.
            var foreign = genericPassword(account: "foreign")
            foreign[kSecAttrAccessGroup as String] = "OTHERTEAM.shared"
            #expect(addPassword(foreign) == errSecMissingEntitlement)
            foreign[kSecReturnData as String] = true
            #expect(copyMatching(foreign).status == errSecMissingEntitlement)
        }
    }
}
