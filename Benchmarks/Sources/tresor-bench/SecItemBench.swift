import Foundation
import TresorKit
import TresorSecurity

/// What Apple's `SecItemCopyMatching` (TresorSecurity) adds to a TresorKit lookup: the same
/// item asked both ways on one connection, alternately and in alternating order, so the ratio
/// is of one moment.
struct SecItemBench {
    let keychain: TresorKit.Keychain
    let service: String

    func measure(lookups: Int, accounts: () -> String) throws -> [String: Any] {
        SecItemKeychain.use(keychain)
        var direct: [Double] = [], secItem: [Double] = []
        for n in 0..<lookups {
            let account = accounts()
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account, kSecReturnData as String: true,
            ]
            var item: CFTypeRef?
            var status: OSStatus = 0
            // Which goes first alternates: the second of two requests on one connection may
            // find the daemon warmer (or busier) than the first.
            let viaTresorKit = { direct.append(try timeMs { _ = try keychain.secret(.genericPassword(service: service, account: account)) }) }
            let viaSecItem = { secItem.append(timeMs { status = SecItemCopyMatching(query as CFDictionary, &item) }) }
            if n.isMultiple(of: 2) {
                try viaTresorKit()
                viaSecItem()
            } else {
                viaSecItem()
                try viaTresorKit()
            }
            guard status == errSecSuccess, item is Data else { throw BenchError("SecItemCopyMatching answered \(status)") }
        }
        let tresorKit = summary(direct), apple = summary(secItem)
        var row = apple
        row["tresorkit"] = tresorKit
        // Where the difference goes, without the daemon: Apple's dictionary made and bridged,
        // and the same dictionary read by SecItemCopyMatching up to the missing class.
        var bridging: [Double] = [], parsing: [Double] = []
        for n in 0..<lookups {
            let query: [String: Any] = [
                kSecAttrService as String: service, kSecAttrAccount as String: "acct-\(n)", kSecReturnData as String: true,
            ]
            var dictionary: CFDictionary?
            bridging.append(timeMs { dictionary = query as CFDictionary })
            var item: CFTypeRef?
            parsing.append(timeMs { _ = SecItemCopyMatching(dictionary!, &item) })
        }
        row["dictionary_bridging"] = summary(bridging)
        row["dictionary_reading"] = summary(parsing)
        if let a = apple["p50_ms"] as? Double, let b = tresorKit["p50_ms"] as? Double, b > 0 { row["ratio_p50"] = a / b }
        return row
    }
}
