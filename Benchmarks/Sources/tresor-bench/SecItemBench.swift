import Foundation
import TresorKit
import TresorSecurity

/// What Apple's `SecItemCopyMatching` (TresorSecurity) adds to a TresorKit lookup: the same
/// item asked both ways on one connection, alternately, so the ratio is of one moment.
struct SecItemBench {
    let keychain: TresorKit.Keychain
    let service: String

    func measure(lookups: Int, accounts: () -> String) throws -> [String: Any] {
        SecItemKeychain.use(keychain)
        var direct: [Double] = [], secItem: [Double] = []
        for _ in 0..<lookups {
            let account = accounts()
            direct.append(try timeMs { _ = try keychain.secret(.genericPassword(service: service, account: account)) })
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account, kSecReturnData as String: true,
            ]
            var item: CFTypeRef?
            var status: OSStatus = 0
            secItem.append(timeMs { status = SecItemCopyMatching(query as CFDictionary, &item) })
            guard status == errSecSuccess, item is Data else { throw BenchError("SecItemCopyMatching answered \(status)") }
        }
        let tresorKit = summary(direct), apple = summary(secItem)
        var row = apple
        row["tresorkit"] = tresorKit
        if let a = apple["p50_ms"] as? Double, let b = tresorKit["p50_ms"] as? Double, b > 0 { row["ratio_p50"] = a / b }
        return row
    }
}
