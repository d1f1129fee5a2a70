import Foundation
import Testing
import TresorSecurity
import TresorTestSupport

/// The idioms of full-featured wrappers (KeychainAccess's kind): dictionary keys made with
/// `String(kSec…)`, "exists?" checks that must not ask the user, everything asked for at once,
/// access control from raw option flags, internet passwords built from a URL.
@Suite(.blocksItsThread) struct FullWrapperIdiomTests {
    static let account = String(kSecAttrAccount)
    static let service = String(kSecAttrService)
    static let itemClass = String(kSecClass)
    static let synchronizable = String(kSecAttrSynchronizable)

    /// The base query of such a wrapper: class, service, any synchronizable state.
    static func baseQuery() -> [String: Any] {
        [itemClass: String(kSecClassGenericPassword), service: "full.example.com", synchronizable: kSecAttrSynchronizableAny]
    }

    /// Saves as such a wrapper does: an existence check that must not ask the user, then an
    /// update of what exists or an add of what does not.
    /// - Returns: The status of the add or update.
    static func set(_ secret: String, key: String) -> OSStatus {
        var query = baseQuery()
        query[account] = key
        query[String(kSecUseAuthenticationUI)] = kSecUseAuthenticationUIFail
        switch SecItemCopyMatching(query as CFDictionary, nil) {
        case errSecSuccess, errSecInteractionNotAllowed:
            var match = baseQuery()
            match[account] = key
            let changes: [String: Any] = [
                String(kSecValueData): Data(secret.utf8), String(kSecAttrAccessible): String(kSecAttrAccessibleAfterFirstUnlock),
                synchronizable: kCFBooleanFalse!,
            ]
            return SecItemUpdate(match as CFDictionary, changes as CFDictionary)
        case errSecItemNotFound:
            var attributes = baseQuery()
            attributes.removeValue(forKey: synchronizable)
            attributes[account] = key
            attributes[String(kSecValueData)] = Data(secret.utf8)
            attributes[String(kSecAttrAccessible)] = String(kSecAttrAccessibleAfterFirstUnlock)
            attributes[synchronizable] = kCFBooleanFalse
            attributes[String(kSecAttrLabel)] = "Full wrapper"
            attributes[String(kSecAttrComment)] = "saved by the idiom tests"
            return SecItemAdd(attributes as CFDictionary, nil)
        case let status:
            return status
        }
    }

    @Test func existenceCheckWithoutUIThenUpdateOrAdd() throws {
        try withIdiomDaemon { _ in
            var exists = Self.baseQuery()
            exists[Self.account] = "token"
            #expect(SecItemCopyMatching(exists as CFDictionary, nil) == errSecItemNotFound, "no result pointer, still a search")
            #expect(Self.set(IdiomSecrets.first, key: "token") == errSecSuccess, "absent: added")
            #expect(Self.set(IdiomSecrets.second, key: "token") == errSecSuccess, "present: updated")
            var query = Self.baseQuery()
            query[Self.account] = "token"
            query[String(kSecReturnData)] = kCFBooleanTrue
            #expect(copyMatching(query).result as? Data == Data(IdiomSecrets.second.utf8))
        }
    }

    @Test func everythingAskedAtOnceIncludingReference() throws {
        try withIdiomDaemon { _ in
            #expect(Self.set(IdiomSecrets.first, key: "token") == errSecSuccess)
            var query = Self.baseQuery()
            query[Self.account] = "token"
            query[String(kSecMatchLimit)] = kSecMatchLimitOne
            query[String(kSecReturnData)] = kCFBooleanTrue
            query[String(kSecReturnAttributes)] = kCFBooleanTrue
            query[String(kSecReturnRef)] = kCFBooleanTrue
            query[String(kSecReturnPersistentRef)] = kCFBooleanTrue
            let (status, result) = copyMatching(query)
            #expect(status == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[String(kSecClass)] as? String == String(kSecClassGenericPassword))
            #expect(attributes[String(kSecValueData)] as? Data == Data(IdiomSecrets.first.utf8))
            #expect((attributes[String(kSecValuePersistentRef)] as? Data)?.isEmpty == false)
            #expect(attributes[String(kSecAttrAccessible)] as? String == String(kSecAttrAccessibleAfterFirstUnlock))
            #expect(attributes[Self.synchronizable] as? Bool == false)
            #expect(attributes[String(kSecAttrCreationDate)] as? Date != nil)
            #expect(attributes[String(kSecAttrModificationDate)] as? Date != nil)
            #expect(attributes[Self.account] as? String == "token")
            #expect(attributes[Self.service] as? String == "full.example.com")
            #expect(attributes[String(kSecAttrLabel)] as? String == "Full wrapper")
            #expect(attributes[String(kSecAttrComment)] as? String == "saved by the idiom tests")
            #expect(attributes[String(kSecAttrAccessGroup)] as? String == "TESTS.idioms")
            // A reference alone asks for a Security object, which passwords do not have here.
            var referenceOnly = Self.baseQuery()
            referenceOnly[String(kSecReturnRef)] = kCFBooleanTrue
            #expect(copyMatching(referenceOnly).status == errSecUnimplemented)
        }
    }

    @Test func userPresenceItemWithAuthenticationUIFailOrSkip() throws {
        try withIdiomDaemon { _ in
            var error: Unmanaged<CFError>?
            let flags = SecAccessControlCreateFlags(rawValue: CFOptionFlags(SecAccessControlCreateFlags.userPresence.rawValue))
            let control = try #require(
                SecAccessControlCreateWithFlags(
                    kCFAllocatorDefault, String(kSecAttrAccessibleWhenUnlocked) as CFTypeRef, flags, &error))
            var guarded = genericPassword(account: "guarded")
            guarded[kSecAttrAccessControl as String] = control
            #expect(addPassword(guarded) == errSecSuccess)
            #expect(addPassword(genericPassword(account: "open"), secret: IdiomSecrets.second) == errSecSuccess)

            var one = genericPassword(account: "guarded")
            one[kSecReturnData as String] = true
            // Allowed to ask, but nobody gave the passcode.
            #expect(copyMatching(one).status == errSecAuthFailed)
            // Not allowed to ask: Apple's status for "it needs the user".
            one[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
            #expect(copyMatching(one).status == errSecInteractionNotAllowed)
            one.removeValue(forKey: kSecUseAuthenticationUI as String)
            one[kSecUseNoAuthenticationUI as String] = kCFBooleanTrue
            #expect(copyMatching(one).status == errSecInteractionNotAllowed)
            // Skipping: the item is left out.
            one.removeValue(forKey: kSecUseNoAuthenticationUI as String)
            one[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUISkip
            #expect(copyMatching(one).status == errSecItemNotFound)

            let every: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "idioms.example.com",
                kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnData as String: true, kSecReturnAttributes as String: true,
                kSecUseAuthenticationUI as String: kSecUseAuthenticationUISkip,
            ]
            let items = try #require(copyMatching(every).result as? [[String: Any]])
            #expect(items.compactMap { $0[kSecAttrAccount as String] as? String } == ["open"])
            #expect(items.first?[kSecValueData as String] as? Data == Data(IdiomSecrets.second.utf8))
            var failing = every
            failing[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
            #expect(copyMatching(failing).status == errSecInteractionNotAllowed)
            // An existence check never needs the user.
            var exists = genericPassword(account: "guarded")
            exists[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
            #expect(copyMatching(exists).status == errSecSuccess)
            // Replacing its secret without asking is not allowed either; nothing changes.
            let replacing = SecItemUpdate(exists as CFDictionary, [kSecValueData as String: Data("replaced".utf8)] as CFDictionary)
            #expect(replacing == errSecInteractionNotAllowed)
        }
    }

    @Test func operationPromptAndAuthenticationContextAccepted() throws {
        try withIdiomDaemon { _ in
            #expect(addPassword(genericPassword(account: "prompted")) == errSecSuccess)
            var query = genericPassword(account: "prompted")
            query[kSecReturnData as String] = true
            query[kSecUseOperationPrompt as String] = "Authenticate to read your token"
            // An LAContext on Apple platforms; any object here.
            query[kSecUseAuthenticationContext as String] = NSObject()
            query[kSecUseDataProtectionKeychain as String] = true
            #expect(copyMatching(query).result as? Data == Data(IdiomSecrets.first.utf8))
            query[kSecUseOperationPrompt as String] = 42
            #expect(copyMatching(query).status == errSecParam, "a prompt is a string")
            query[kSecUseOperationPrompt as String] = "Authenticate"
            query[kSecUseAuthenticationUI as String] = "sometimes"
            #expect(copyMatching(query).status == errSecParam, "an authentication UI value is one of Apple's three")
        }
    }

    @Test func allKeysOfAClassAcrossServices() throws {
        try withIdiomDaemon { _ in
            #expect(addPassword(genericPassword(service: "one.example", account: "ada")) == errSecSuccess)
            var synced = genericPassword(service: "two.example", account: "grace")
            synced[kSecAttrSynchronizable as String] = kCFBooleanTrue
            #expect(addPassword(synced) == errSecSuccess)
            let query: [String: Any] = [
                String(kSecClass): kSecClassGenericPassword, String(kSecAttrSynchronizable): kSecAttrSynchronizableAny,
                String(kSecMatchLimit): kSecMatchLimitAll, String(kSecReturnAttributes): kCFBooleanTrue!,
            ]
            let items = try #require(copyMatching(query).result as? [[String: Any]])
            let pairs = Set(
                items.compactMap { item -> String? in
                    guard let service = item[String(kSecAttrService)] as? String else { return nil }
                    return (item[String(kSecAttrAccount)] as? String).map { "\(service)/\($0)" }
                })
            #expect(pairs == ["one.example/ada", "two.example/grace"])
        }
    }

    @Test func removeTreatsNotFoundAsSuccess() throws {
        try withIdiomDaemon { _ in
            var query = Self.baseQuery()
            query[Self.account] = "never-saved"
            let status = SecItemDelete(query as CFDictionary)
            #expect(status == errSecItemNotFound)
            #expect(status == errSecSuccess || status == errSecItemNotFound)
            #expect(SecCopyErrorMessageString(status, nil) as String? == "The specified item could not be found in the keychain.")
        }
    }

    /// A wrapper logs `SecCopyErrorMessageString(status, nil)`: Apple's codes that Tresor never
    /// returns have Apple's words too, and errSecNotAvailable says what it means here.
    @Test func everyCodeDefinedHasAMessage() {
        for status in [
            errSecIO, errSecWrPerm, errSecAllocate, errSecBadReq, errSecNoAccessForItem, errSecInvalidOwnerEdit,
            errSecInvalidKeychain, errSecNoDefaultKeychain, errSecVerifyFailed, errSecNotTrusted,
        ] {
            #expect(SecCopyErrorMessageString(status, nil) != nil, "\(status)")
        }
        #expect(SecCopyErrorMessageString(errSecIO, nil) as String? == "I/O error.")
        #expect(SecCopyErrorMessageString(errSecNotTrusted, nil) as String? == "The certificate was not trusted.")
        #expect((SecCopyErrorMessageString(errSecNotAvailable, nil) as String?)?.contains("tresord") == true)
        #expect(SecCopyErrorMessageString(-1, nil) == nil)
    }

    @Test func internetPasswordFromAURL() throws {
        try withIdiomDaemon { _ in
            let url = try #require(URL(string: "https://shop.example.org:8443/account"))
            var item: [String: Any] = [
                String(kSecClass): String(kSecClassInternetPassword), String(kSecAttrServer): url.host ?? "",
                String(kSecAttrProtocol): String(kSecAttrProtocolHTTPS),
                String(kSecAttrAuthenticationType): String(kSecAttrAuthenticationTypeHTMLForm),
                String(kSecAttrAccount): "ada",
            ]
            item[String(kSecAttrPort)] = url.port
            item[String(kSecAttrPath)] = url.path
            #expect(addPassword(item) == errSecSuccess)
            var query = item
            query[String(kSecReturnAttributes)] = kCFBooleanTrue
            let attributes = try #require(copyMatching(query).result as? [String: Any])
            #expect(attributes[String(kSecAttrPort)] as? Int == 8443)
            #expect(attributes[String(kSecAttrProtocol)] as? String == String(kSecAttrProtocolHTTPS))
            #expect(attributes[String(kSecAttrAuthenticationType)] as? String == String(kSecAttrAuthenticationTypeHTMLForm))
            #expect(attributes[String(kSecAttrPath)] as? String == "/account")
            #expect(attributes[String(kSecAttrServer)] as? String == "shop.example.org")
        }
    }

    /// Every protocol and authentication type constant such a wrapper maps to an enumeration of
    /// its own, read back by comparing with `String(kSecAttrProtocol…)`.
    @Test func everyProtocolAndAuthenticationTypeConstantReadsBack() throws {
        try withIdiomDaemon { _ in
            let protocols: [CFString] = [
                kSecAttrProtocolFTP, kSecAttrProtocolFTPAccount, kSecAttrProtocolHTTP, kSecAttrProtocolIRC, kSecAttrProtocolNNTP,
                kSecAttrProtocolPOP3, kSecAttrProtocolSMTP, kSecAttrProtocolSOCKS, kSecAttrProtocolIMAP, kSecAttrProtocolLDAP,
                kSecAttrProtocolAppleTalk, kSecAttrProtocolAFP, kSecAttrProtocolTelnet, kSecAttrProtocolSSH, kSecAttrProtocolFTPS,
                kSecAttrProtocolHTTPS, kSecAttrProtocolHTTPProxy, kSecAttrProtocolHTTPSProxy, kSecAttrProtocolFTPProxy, kSecAttrProtocolSMB,
                kSecAttrProtocolRTSP, kSecAttrProtocolRTSPProxy, kSecAttrProtocolDAAP, kSecAttrProtocolEPPC, kSecAttrProtocolIPP,
                kSecAttrProtocolNNTPS, kSecAttrProtocolLDAPS, kSecAttrProtocolTelnetS, kSecAttrProtocolIMAPS, kSecAttrProtocolIRCS,
                kSecAttrProtocolPOP3S,
            ]
            let authenticationTypes: [CFString] = [
                kSecAttrAuthenticationTypeNTLM, kSecAttrAuthenticationTypeMSN, kSecAttrAuthenticationTypeDPA, kSecAttrAuthenticationTypeRPA,
                kSecAttrAuthenticationTypeHTTPBasic, kSecAttrAuthenticationTypeHTTPDigest, kSecAttrAuthenticationTypeHTMLForm,
                kSecAttrAuthenticationTypeDefault,
            ]
            #expect(Set(protocols.map { String($0) }).count == protocols.count, "each protocol its own value")
            #expect(Set(authenticationTypes.map { String($0) }).count == authenticationTypes.count)
            for (index, protocolValue) in protocols.enumerated() {
                let item: [String: Any] = [
                    String(kSecClass): String(kSecClassInternetPassword), String(kSecAttrServer): "mail.example.org",
                    String(kSecAttrAccount): "ada", String(kSecAttrProtocol): String(protocolValue),
                    String(kSecAttrAuthenticationType): String(authenticationTypes[index % authenticationTypes.count]),
                ]
                #expect(addPassword(item) == errSecSuccess, "protocol \(protocolValue)")
            }
            let query: [String: Any] = [
                String(kSecClass): String(kSecClassInternetPassword), String(kSecAttrServer): "mail.example.org",
                String(kSecMatchLimit): kSecMatchLimitAll, String(kSecReturnAttributes): kCFBooleanTrue!,
            ]
            let items = try #require(copyMatching(query).result as? [[String: Any]])
            let read = items.compactMap { $0[String(kSecAttrProtocol)] as? String }
            #expect(Set(read) == Set(protocols.map { String($0) }), "the four characters as given, trailing spaces too")
            let readTypes = Set(items.compactMap { $0[String(kSecAttrAuthenticationType)] as? String })
            #expect(readTypes == Set(authenticationTypes.map { String($0) }))
            // Found again by one constant, as such a wrapper's enumeration gives it.
            var one = query
            one[String(kSecAttrProtocol)] = kSecAttrProtocolPOP3S
            one[String(kSecMatchLimit)] = kSecMatchLimitOne
            let found = try #require(copyMatching(one).result as? [String: Any])
            #expect(found[String(kSecAttrProtocol)] as? String == "pops")
        }
    }

    /// An access control that cannot be made, its `Unmanaged<CFError>` read through CoreFoundation's
    /// error functions, as a wrapper turns it into an `NSError` of its own.
    @Test func accessControlErrorReadThroughCFErrorFunctions() throws {
        var error: Unmanaged<CFError>?
        let protection: String = String(kSecAttrAccessibleWhenUnlocked)
        let refused = SecAccessControlCreateWithFlags(
            kCFAllocatorDefault, protection as CFTypeRef, SecAccessControlCreateFlags(rawValue: CFOptionFlags(1 << 30)), &error)
        #expect(refused == nil)
        let cfError = try #require(error?.takeRetainedValue())
        #expect(CFErrorGetDomain(cfError) as String == NSOSStatusErrorDomain)
        #expect(CFErrorGetCode(cfError) == Int(errSecParam))
        let userInfo = try #require(CFErrorCopyUserInfo(cfError) as? [String: Any])
        #expect(userInfo[NSLocalizedDescriptionKey] is String)
        // The same call with a flag Tresor proves makes the object.
        error = nil
        let made = SecAccessControlCreateWithFlags(
            kCFAllocatorDefault, protection as CFTypeRef, SecAccessControlCreateFlags(rawValue: CFOptionFlags(1 << 0)), &error)
        #expect(made != nil && error == nil)
    }
}
