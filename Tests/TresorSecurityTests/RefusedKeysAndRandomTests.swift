import Foundation
import Testing
import TresorSecurity

/// Names keychain helpers use that Tresor does nothing with still compile — a wrapper naming them
/// builds — and a dictionary holding one is refused (`errSecParam`); `SecRandomCopyBytes`, which
/// helpers draw keys and salts with, draws from the system's generator.
@Suite(.blocksItsThread) struct RefusedKeysAndRandomTests {
    @Test func keysTresorDoesNotTakeCompileAndAreRefused() throws {
        let refused: [CFString] = [
            kSecAttrIsPermanent, kSecAttrIsSensitive, kSecAttrIsExtractable, kSecAttrCanEncrypt, kSecAttrCanDecrypt, kSecAttrCanDerive,
            kSecAttrCanSign, kSecAttrCanVerify, kSecAttrCanWrap, kSecAttrCanUnwrap, kSecAttrTokenID, kSecPrivateKeyAttrs, kSecPublicKeyAttrs,
            kSecMatchCaseInsensitive, kSecMatchItemList, kSecImportExportPassphrase,
        ]
        try withIdiomDaemon { _ in
            for key in refused {
                var query = genericPassword(account: "refused")
                query[key as String] = kSecAttrTokenIDSecureEnclave
                #expect(copyMatching(query).status == errSecParam, "\(key)")
                #expect(addPassword(query) == errSecParam, "\(key)")
            }
            #expect(copyMatching(genericPassword(account: "refused")).status == errSecItemNotFound, "nothing was added")
        }
        // Apple's codes, for code that compares with them.
        #expect([errSecIO, errSecWrPerm, errSecAllocate, errSecBadReq, errSecNotTrusted] == [-36, -61, -108, -909, -67843])
    }

    /// A secret over the keychain's limit is `errSecParam`, as any bad parameter is: the message
    /// for it says which, and a later success on the thread leaves Apple's words alone.
    @Test func theMessageForAFailureSaysWhatTheDaemonSaid() throws {
        try withIdiomDaemon { _ in
            var attributes = genericPassword(account: "oversized")
            attributes[kSecValueData as String] = Data(repeating: 7, count: 300 * 1024)
            let status = SecItemAdd(attributes as CFDictionary, nil)
            #expect(status == errSecParam)
            let message = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? ""
            #expect(message.hasPrefix("One or more parameters passed to a function were not valid.") && message.contains("262144"), "\(message)")
            #expect(addPassword(genericPassword(account: "fits")) == errSecSuccess)
            #expect(SecCopyErrorMessageString(errSecParam, nil).map { $0 as String } == "One or more parameters passed to a function were not valid.")
        }
    }

    /// Apple's securityd refuses an update's query that asks for something back, and a delete
    /// with a limit (it would leave matches behind unsaid): so does Tresor, and nothing changes.
    @Test func updateAndDeleteRefuseWhatApplesDo() throws {
        try withIdiomDaemon { _ in
            #expect(addPassword(genericPassword(account: "a")) == errSecSuccess)
            #expect(addPassword(genericPassword(account: "b")) == errSecSuccess)
            var returning = genericPassword(account: "a")
            returning[kSecReturnData as String] = true
            let changes = [kSecValueData as String: Data(IdiomSecrets.second.utf8)] as CFDictionary
            #expect(SecItemUpdate(returning as CFDictionary, changes) == errSecParam)
            #expect((SecCopyErrorMessageString(errSecParam, nil).map { $0 as String } ?? "").contains("kSecReturn"))
            var one = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "idioms.example.com"] as [String: Any]
            one[kSecMatchLimit as String] = kSecMatchLimitOne
            #expect(SecItemDelete(one as CFDictionary) == errSecParam)
            var stillThere = genericPassword(account: "a")
            stillThere[kSecReturnData as String] = true
            #expect(copyMatching(stillThere).result as? Data == Data(IdiomSecrets.first.utf8), "the refused update changed nothing")
            #expect(copyMatching(genericPassword(account: "b")).status == errSecSuccess, "the refused delete removed nothing")
            one[kSecMatchLimit as String] = kSecMatchLimitAll
            #expect(SecItemDelete(one as CFDictionary) == errSecSuccess)
            #expect(copyMatching(genericPassword(account: "a")).status == errSecItemNotFound)
        }
    }

    @Test func secRandomCopyBytesFillsEveryByte() {
        // Two draws of 4,099 bytes (not a multiple of the generator's word): different, and no
        // byte position left as it was in both.
        var first = [UInt8](repeating: 0, count: 4_099)
        var second = [UInt8](repeating: 0, count: 4_099)
        #expect(first.withUnsafeMutableBytes { SecRandomCopyBytes(kSecRandomDefault, $0.count, $0.baseAddress!) } == errSecSuccess)
        #expect(second.withUnsafeMutableBytes { SecRandomCopyBytes(kSecRandomDefault, $0.count, $0.baseAddress!) } == errSecSuccess)
        #expect(first != second)
        #expect(!zip(first, second).suffix(8).allSatisfy { $0 == 0 && $1 == 0 }, "the last, partial word is written")
        var none = [UInt8](repeating: 0, count: 1)
        #expect(none.withUnsafeMutableBytes { SecRandomCopyBytes(kSecRandomDefault, -1, $0.baseAddress!) } == errSecParam)
    }
}
