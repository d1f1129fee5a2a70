// Keeps one website's password with Apple's SecItem functions: add, search, update, delete —
// the calls an Apple-platform app makes, written as it would write them, built for Linux with
// one conditional import (docs/SECITEM.md).
//
//   swift build --product website-password
//   tresor app register --id EXAMPLE.website --team EXAMPLE --exe .build/debug/website-password
//   printf 'ada\nhunter2\n' | .build/debug/website-password save
//   .build/debug/website-password show
//   printf 'grace\nn3w-password\n' | .build/debug/website-password change
//   .build/debug/website-password forget
import Foundation
#if canImport(Security)
import Security
#elseif canImport(TresorSecurity)
import TresorSecurity
#endif

/// The site whose sign-in this program keeps: an internet password, found by its server.
let website = "shop.example.org"

struct SignIn {
    var user: String
    var password: String
}

/// A SecItem call that did not succeed, with its status.
struct KeychainFailure: Error {
    let status: OSStatus

    var message: String {
        let text = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "unknown status"
        return "error \(status): \(text)"
    }
}

/// The query every call starts from: this site's internet password.
func websiteQuery() -> [String: Any] {
    [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: website]
}

func save(_ signIn: SignIn) throws {
    var item = websiteQuery()
    item[kSecAttrAccount as String] = signIn.user
    item[kSecValueData as String] = Data(signIn.password.utf8)
    let status = SecItemAdd(item as CFDictionary, nil)
    if status != errSecSuccess { throw KeychainFailure(status: status) }
}

/// - Returns: The saved sign-in, or nil when there is none.
func savedSignIn() throws -> SignIn? {
    var query = websiteQuery()
    query[kSecMatchLimit as String] = kSecMatchLimitOne
    query[kSecReturnAttributes as String] = true
    query[kSecReturnData as String] = true
    var found: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &found)
    if status == errSecItemNotFound { return nil }
    if status != errSecSuccess { throw KeychainFailure(status: status) }
    guard let attributes = found as? [String: Any], let user = attributes[kSecAttrAccount as String] as? String,
        let secret = attributes[kSecValueData as String] as? Data, let password = String(data: secret, encoding: .utf8)
    else { throw KeychainFailure(status: errSecDecode) }
    return SignIn(user: user, password: password)
}

func change(to signIn: SignIn) throws {
    let changes: [String: Any] = [kSecAttrAccount as String: signIn.user, kSecValueData as String: Data(signIn.password.utf8)]
    let status = SecItemUpdate(websiteQuery() as CFDictionary, changes as CFDictionary)
    if status != errSecSuccess { throw KeychainFailure(status: status) }
}

/// Deletes the sign-in; one already gone is not an error.
func forget() throws {
    let status = SecItemDelete(websiteQuery() as CFDictionary)
    if status != errSecSuccess && status != errSecItemNotFound { throw KeychainFailure(status: status) }
}

/// The user name and the password, one per line on standard input — never on the command line.
func typedSignIn() -> SignIn {
    SignIn(user: readLine() ?? "", password: readLine() ?? "")
}

do {
    switch CommandLine.arguments.dropFirst().first {
    case "save":
        try save(typedSignIn())
        print("saved")
    case "show":
        if let signIn = try savedSignIn() { print("\(signIn.user) \(signIn.password)") } else { print("no password saved") }
    case "change":
        try change(to: typedSignIn())
        print("changed")
    case "forget":
        try forget()
        print("forgotten")
    default:
        print("usage: website-password save|show|change|forget")
        exit(2)
    }
} catch let failure as KeychainFailure {
    print(failure.message)
    exit(1)
} catch {
    print("error: \(error)")
    exit(1)
}
