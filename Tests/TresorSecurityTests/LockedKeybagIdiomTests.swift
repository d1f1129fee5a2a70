import Foundation
import Testing
import TresorKit
import TresorSecurity
import TresorTestSupport

/// SecItem calls while the keybag is locked, as Apple's answer them: a search or a change that
/// might touch an item whose protection class is locked fails whole with
/// `errSecInteractionNotAllowed` — no partial answer that reads as "not there", no partial delete
/// that reads as done.
@Suite(.blocksItsThread) struct LockedKeybagIdiomTests {
    static var classes: [(String, CFString)] {
        [
            ("when-unlocked", kSecAttrAccessibleWhenUnlocked), ("after-first-unlock", kSecAttrAccessibleAfterFirstUnlock),
            ("always", kSecAttrAccessibleAlways),
        ]
    }

    /// Adds one item of each class under service `locked.example.com`, then locks the keybag.
    static func addOfEachClassAndLock(_ daemon: TresordFixture) throws {
        for (account, accessible) in classes {
            var item = genericPassword(service: "locked.example.com", account: account)
            item[kSecAttrAccessible as String] = accessible
            #expect(addPassword(item) == errSecSuccess)
        }
        try daemon.tresor(["lock"])
    }

    static var everyItem: [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "locked.example.com",
            kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
        ]
    }

    @Test func aSearchThatMightMatchALockedItemFailsWhole() throws {
        try withIdiomDaemon { daemon in
            try Self.addOfEachClassAndLock(daemon)
            #expect(copyMatching(Self.everyItem).status == errSecInteractionNotAllowed)
            var data = Self.everyItem
            data[kSecReturnData as String] = true
            #expect(copyMatching(data).status == errSecInteractionNotAllowed)
            // The whole primary key names one item: of a class open while locked, it is found.
            var one = genericPassword(service: "locked.example.com", account: "after-first-unlock")
            one[kSecReturnData as String] = true
            #expect(copyMatching(one).result as? Data == Data(IdiomSecrets.first.utf8))
            try daemon.tresor(["unlock", "--passcode-stdin"], input: daemon.passcode + "\n")
            #expect((copyMatching(Self.everyItem).result as? [[String: Any]])?.count == 3)
        }
    }

    @Test func aDeleteThatMightMatchALockedItemDeletesNothing() throws {
        try withIdiomDaemon { daemon in
            try Self.addOfEachClassAndLock(daemon)
            let query = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "locked.example.com"]
            #expect(SecItemDelete(query as CFDictionary) == errSecInteractionNotAllowed)
            #expect(SecItemUpdate(query as CFDictionary, [kSecAttrLabel as String: "renamed"] as CFDictionary) == errSecInteractionNotAllowed)
            try daemon.tresor(["unlock", "--passcode-stdin"], input: daemon.passcode + "\n")
            let items = try #require(copyMatching(Self.everyItem).result as? [[String: Any]])
            #expect(items.count == 3, "nothing deleted")
            #expect(items.allSatisfy { $0[kSecAttrLabel as String] as? String != "renamed" }, "nothing renamed")
            #expect(SecItemDelete(query as CFDictionary) == errSecSuccess)
            #expect(copyMatching(Self.everyItem).status == errSecItemNotFound)
        }
    }

    @Test func aPersistentReferenceAloneNamesItsItem() throws {
        try withIdiomDaemon { _ in
            var attributes = genericPassword(account: "by-reference")
            attributes[kSecReturnPersistentRef as String] = true
            attributes[kSecValueData as String] = Data(IdiomSecrets.first.utf8)
            var added: CFTypeRef?
            #expect(SecItemAdd(attributes as CFDictionary, &added) == errSecSuccess)
            let reference = try #require(added as? Data)
            let byReference: [String: Any] = [kSecValuePersistentRef as String: reference, kSecReturnData as String: true]
            #expect(copyMatching(byReference).result as? Data == Data(IdiomSecrets.first.utf8))
            #expect(SecItemDelete([kSecValuePersistentRef as String: reference] as CFDictionary) == errSecSuccess)
            #expect(copyMatching(byReference).status == errSecItemNotFound)
        }
    }
}
