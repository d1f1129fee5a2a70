import Foundation
import Testing
import TresorKit
import TresorSecurity
import TresorTestSupport

/// The secrets the idiom tests store: none may appear in the daemon's log or a home file.
enum IdiomSecrets {
    static let passcode = "idiom-passcode-7f3a"
    static let first = "idiom-secret-hunter2"
    static let second = "idiom-secret-n3w"
    static let all = [passcode, first, second]
}

/// Runs `body` with every SecItem call it makes sent to a daemon of its own: a new home with a
/// passcode, this test runner registered as `TESTS.idioms` of team `TESTS` (with the shared
/// group `TESTS.shared`). Ends by checking that the daemon still serves and that no secret of
/// ``IdiomSecrets`` reached its log or a file of the home.
func withIdiomDaemon(sourceLocation: SourceLocation = #_sourceLocation, _ body: (TresordFixture) throws -> Void) throws {
    let daemon = try TresordFixture(passcode: IdiomSecrets.passcode)
    try daemon.register(id: "TESTS.idioms", team: "TESTS", groups: ["TESTS.shared"])
    try SecItemKeychain.using(try daemon.keychain()) {
        try body(daemon)
        #expect(daemon.daemonIsRunning, "the daemon stopped serving", sourceLocation: sourceLocation)
        let answer = SecItemCopyMatching([kSecClass as String: kSecClassKey] as CFDictionary, nil)
        #expect([errSecSuccess, errSecItemNotFound].contains(answer), "the daemon no longer answers", sourceLocation: sourceLocation)
    }
    for bytes in try daemon.storedBytes() {
        for secret in IdiomSecrets.all {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "a secret reached the daemon's log or a home file", sourceLocation: sourceLocation)
        }
    }
}

/// SecItemCopyMatching's status and result, as the calling code sees them.
func copyMatching(_ query: [String: Any]) -> (status: OSStatus, result: CFTypeRef?) {
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    return (status, result)
}

/// A generic password's query, keys spelt as most Swift code spells them.
func genericPassword(service: String = "idioms.example.com", account: String) -> [String: Any] {
    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
}

/// Adds a generic password holding `secret`.
/// - Returns: SecItemAdd's status.
func addPassword(_ attributes: [String: Any], secret: String = IdiomSecrets.first) -> OSStatus {
    var attributes = attributes
    attributes[kSecValueData as String] = Data(secret.utf8)
    return SecItemAdd(attributes as CFDictionary, nil)
}
