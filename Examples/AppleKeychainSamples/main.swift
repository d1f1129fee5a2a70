// Apple's keychain sample code — "Adding a password to the keychain", "Searching for keychain
// items" and "Updating and deleting keychain items" — as Apple publishes it, compiled for
// Linux against Tresor with one added conditional import. Nothing else is changed: this is the
// promise TresorSecurity makes to Swift developers (docs/SECITEM.md).
//
//   swift build --product apple-keychain-samples
//   tresor app register --id EXAMPLE.samples --team EXAMPLE --exe .build/debug/apple-keychain-samples
//   printf 'ada\nhunter2\n' | .build/debug/apple-keychain-samples add
//   .build/debug/apple-keychain-samples show
//   printf 'ada\nn3w-password\n' | .build/debug/apple-keychain-samples update
//   .build/debug/apple-keychain-samples delete
import Foundation
#if canImport(TresorSecurity)
import TresorSecurity
#endif

struct Credentials {
    var username: String
    var password: String
}

enum KeychainError: Error {
    case noPassword
    case unexpectedPasswordData
    case unhandledError(status: OSStatus)
}

let server = "www.example.com"

// "Adding a password to the keychain"
func add(_ credentials: Credentials) throws {
    let account = credentials.username
    let password = credentials.password.data(using: String.Encoding.utf8)!
    let query: [String: Any] = [kSecClass as String: kSecClassInternetPassword,
                                kSecAttrAccount as String: account,
                                kSecAttrServer as String: server,
                                kSecValueData as String: password]
    let status = SecItemAdd(query as CFDictionary, nil)
    guard status == errSecSuccess else { throw KeychainError.unhandledError(status: status) }
}

// "Searching for keychain items"
func search() throws -> Credentials {
    let query: [String: Any] = [kSecClass as String: kSecClassInternetPassword,
                                kSecAttrServer as String: server,
                                kSecMatchLimit as String: kSecMatchLimitOne,
                                kSecReturnAttributes as String: true,
                                kSecReturnData as String: true]
    var item: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &item)
    guard status != errSecItemNotFound else { throw KeychainError.noPassword }
    guard status == errSecSuccess else { throw KeychainError.unhandledError(status: status) }
    guard let existingItem = item as? [String: Any],
        let passwordData = existingItem[kSecValueData as String] as? Data,
        let password = String(data: passwordData, encoding: String.Encoding.utf8),
        let account = existingItem[kSecAttrAccount as String] as? String
    else {
        throw KeychainError.unexpectedPasswordData
    }
    return Credentials(username: account, password: password)
}

// "Updating and deleting keychain items"
func update(_ credentials: Credentials) throws {
    let query: [String: Any] = [kSecClass as String: kSecClassInternetPassword,
                                kSecAttrServer as String: server]
    let account = credentials.username
    let password = credentials.password.data(using: String.Encoding.utf8)!
    let attributes: [String: Any] = [kSecAttrAccount as String: account,
                                     kSecValueData as String: password]
    let status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
    guard status != errSecItemNotFound else { throw KeychainError.noPassword }
    guard status == errSecSuccess else { throw KeychainError.unhandledError(status: status) }
}

func delete() throws {
    let query: [String: Any] = [kSecClass as String: kSecClassInternetPassword,
                                kSecAttrServer as String: server]
    let status = SecItemDelete(query as CFDictionary)
    guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError.unhandledError(status: status) }
}

/// The user name and password, one per line on standard input (never on the command line).
func readCredentials() -> Credentials {
    let username = readLine() ?? ""
    let password = readLine() ?? ""
    return Credentials(username: username, password: password)
}

do {
    switch CommandLine.arguments.dropFirst().first {
    case "add": try add(readCredentials()); print("added")
    case "show":
        let credentials = try search()
        print("\(credentials.username) \(credentials.password)")
    case "update": try update(readCredentials()); print("updated")
    case "delete": try delete(); print("deleted")
    default: print("usage: apple-keychain-samples add|show|update|delete")
    }
} catch KeychainError.unhandledError(let status) {
    let message = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "unknown"
    print("error \(status): \(message)")
    exit(1)
} catch {
    print("error \(error)")
    exit(1)
}
