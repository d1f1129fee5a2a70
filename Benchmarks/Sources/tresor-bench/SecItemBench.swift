import Foundation
import TresorKit
import TresorSecurity

/// What Apple's `SecItemCopyMatching` (TresorSecurity) adds to a TresorKit lookup: the same
/// item asked three ways on one connection, one of each in turn and in a rotating order, so the
/// ratios are of one moment — TresorKit's `Keychain.secret`; the same call after the query was
/// built as a SecItem caller builds it (`[String: Any]` bridged `as CFDictionary`) and read back
/// from it (the pairs handed back by Foundation, the key and the values cast), which no
/// implementation of this API avoids: its floor; and `SecItemCopyMatching` itself.
struct SecItemBench {
    let keychain: TresorKit.Keychain
    let service: String

    func measure(lookups: Int, accounts: () -> String) throws -> [String: Any] {
        SecItemKeychain.use(keychain)
        var direct: [Double] = [], floor: [Double] = [], secItem: [Double] = []
        for n in 0..<lookups {
            let account = accounts()
            var item: CFTypeRef?
            var status: OSStatus = 0
            let viaTresorKit = { direct.append(try timeMs { _ = try keychain.secret(.genericPassword(service: service, account: account)) }) }
            let viaFloor = {
                floor.append(
                    try timeMs {
                        let query: [String: Any] = [
                            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                            kSecAttrAccount as String: account, kSecReturnData as String: true,
                        ]
                        let dictionary = query as CFDictionary
                        var keys: [Any] = [], values: [Any] = []
                        dictionary.getObjects(&values, andKeys: &keys, count: dictionary.count)
                        var service: String?, account: String?
                        let (serviceKey, accountKey) = (kSecAttrService as String, kSecAttrAccount as String)
                        for (key, value) in zip(keys, values) {
                            guard let key = key as? String else { continue }
                            if key == serviceKey { service = value as? String } else if key == accountKey { account = value as? String }
                        }
                        _ = try keychain.secret(.genericPassword(service: service!, account: account!))
                    })
            }
            let viaSecItem = {
                secItem.append(
                    timeMs {
                        let query: [String: Any] = [
                            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                            kSecAttrAccount as String: account, kSecReturnData as String: true,
                        ]
                        status = SecItemCopyMatching(query as CFDictionary, &item)
                    })
            }
            // Which goes first rotates: the second of two requests on one connection may find
            // the daemon warmer (or busier) than the first.
            switch n % 3 {
            case 0:
                try viaTresorKit()
                try viaFloor()
                viaSecItem()
            case 1:
                viaSecItem()
                try viaTresorKit()
                try viaFloor()
            default:
                try viaFloor()
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
        let floorRow = summary(floor)
        row["floor"] = floorRow
        if let a = apple["p50_ms"] as? Double, let b = tresorKit["p50_ms"] as? Double, b > 0 { row["ratio_p50"] = a / b }
        if let f = floorRow["p50_ms"] as? Double, let b = tresorKit["p50_ms"] as? Double, b > 0 { row["floor_ratio_p50"] = f / b }
        if let a = apple["p50_ms"] as? Double, let f = floorRow["p50_ms"] as? Double, f > 0 { row["ratio_to_floor_p50"] = a / f }
        return row
    }
}
