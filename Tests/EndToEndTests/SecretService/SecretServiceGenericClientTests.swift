import Foundation
import Testing

/// Generic clients — interpreters, secret-tool, git's credential helper — that any process of the
/// user can run with arguments of its choosing (docs/SECURITY.md, "Generic clients"). Everything
/// runs as an unprivileged user, as a desktop session does: the bus, `tresord` and every client.
@Suite(
    .serialized,
    .enabled(if: SecretService.toolsInstalled && TestUser.available, "needs root (to run everything as another user), setpriv, dbus-daemon, secret-tool and Python keyring")
)
struct SecretServiceGenericClientTests {
    static let toolItem: KeyValuePairs = ["tresor-e2e": "generic", "user": "ada"]

    /// A provider run as the test user, with an item secret-tool stored.
    func providerWithToolItem() throws -> (TresorProvider, secret: String) {
        let provider = try TresorProvider(user: try TestUser.shared.get())
        let secret = provider.marker("generic")
        try provider.secretTool.store(label: "E2E generic", Self.toolItem, secret: secret)
        return (provider, secret)
    }

    /// Any program of the user runs the genuine secret-tool: a shell, here.
    func lookupByAnyProcess(_ provider: TresorProvider, revealing secret: String) throws -> Harness.Result {
        try provider.harness.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "exec /usr/bin/secret-tool lookup tresor-e2e generic user ada"],
            timeout: clientTimeout, revealing: [secret])
    }

    @Test func anyProcessRunningSecretToolReadsItsItemSilently() throws {
        let (provider, secret) = try providerWithToolItem()
        let attack = try lookupByAnyProcess(provider, revealing: secret)
        #expect(attack.stdout == secret, "the attacker read secret-tool's item: \(attack.status) \(attack.stderr)")
    }
}
