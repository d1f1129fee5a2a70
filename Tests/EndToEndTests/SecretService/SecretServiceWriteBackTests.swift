import Foundation
import Testing
import TresorTestSupport

/// A generic client's approved read written back unchanged (docs/SECURITY.md, "Generic clients"):
/// git runs its credential helper for the password (`get`), and once the push succeeded runs it
/// again to store the same password (`store`). The user allowed the read; the store that changes
/// nothing is not put to them a second time. Before, every push asked twice.
@Suite(
    .blocksItsThread,
    .serialized,
    .enabled(if: SecretService.toolsInstalled && TestUser.available, "needs root (the approver's terminal), dbus-daemon and git's libsecret helper")
)
struct SecretServiceWriteBackTests {
    static let credential = "protocol=https\nhost=git.example\nusername=ada\n"

    /// This test process plays git: it runs the helper itself (`get`, then `store`), as one git
    /// process does for a push. With `underAShell`, a shell that stays between runs it instead.
    func helper(_ helper: GitCredentialHelper, _ operation: String, password: String? = nil, underAShell: Bool = false, revealing: [String])
        throws -> Harness.Result
    {
        let input = Self.credential + (password.map { "password=\($0)\n" } ?? "") + "\n"
        if underAShell {
            return try helper.harness.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "\"$0\" \(operation); true", helper.executable.path], input: input, timeout: clientTimeout,
                revealing: revealing)
        }
        return try helper.harness.run(helper.executable, [operation], input: input, timeout: clientTimeout, revealing: revealing)
    }

    /// The user allows git's `get` once in `tresor approve`. The same process then has the helper
    /// store the password it read: made without asking. Each other store is asked (and nobody
    /// answers): the same password from another process, a second write-back; and after another
    /// approved read, another password — which uses that read up, so that a guess of the
    /// password gets one try. The approver runs as the harness's own user, so this provider runs
    /// as root.
    @Test func gitsStoreOfThePasswordTheUserAllowedItToReadIsNotAskedAgain() throws {
        let provider = try TresorProvider(trustsGenericClients: false)
        let git = try GitCredentialHelper(harness: provider.harness)
        let password = provider.marker("write-back"), other = provider.marker("write-back-other")
        let revealing = [password, other]
        let created = try helper(git, "store", password: password, revealing: revealing)
        try #require(created.succeeded, "a new item needs nobody: \(created.stderr)")
        func questions() -> Int { provider.harness.daemonLog.components(separatedBy: "asks for an item that needs you").count }
        func approvedRead() throws {
            var read: Harness.Result?
            let approver = try provider.harness.approving(answer: provider.passcode) {
                read = try helper(git, "get", revealing: revealing)
                return read?.stdout.contains("password=\(password)") == true
            }
            try #require(read?.stdout.contains("password=\(password)") == true, "the approved read: \(approver.stdout)")
        }
        /// Whether a store by the helper was put to the user.
        func asked(_ password: String, underAShell: Bool = false) throws -> Bool {
            let before = questions()
            _ = try helper(git, "store", password: password, underAShell: underAShell, revealing: revealing)
            return questions() > before
        }

        try approvedRead()
        #expect(try asked(password, underAShell: true), "the same password from another process was not put to the user")
        #expect(!(try asked(password)), "the write-back of what the user allowed to be read was asked again")
        #expect(provider.harness.daemonLog.contains("stored back, unchanged, what the user allowed it to read"), "the log says why nobody was asked")
        #expect(try asked(password), "one read, one write-back: the second was not put to the user")

        try approvedRead()
        #expect(try asked(other), "another password from the same process was not put to the user")
        #expect(try asked(password), "the read was not used up by the store that did not match")

        try provider.trust([git.executable])
        let now = try helper(git, "get", revealing: revealing)
        #expect(now.stdout.contains("password=\(password)\n"), "the item changed: \(now.stdout)")
        try provider.harness.expectNoSecretLeaked()
    }
}
