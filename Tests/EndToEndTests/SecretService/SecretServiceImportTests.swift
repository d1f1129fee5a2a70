import Foundation
import Testing

/// `tresor import secret-service` from the real gnome-keyring on a private bus: every item is
/// copied, gnome-keyring is left as it was, and once Tresor owns the name secret-tool reads the
/// copies.
@Suite(.serialized, .enabled(if: SecretService.toolsInstalled, "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceImportTests {
    /// The `--json` report: how many items were copied and skipped (a count, or a list of them).
    struct ImportReport: Decodable {
        var copied: Int
        var skipped: Int

        enum CodingKeys: String, CodingKey { case copied, skipped }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func count(_ key: CodingKeys) throws -> Int {
                if let number = try? container.decode(Int.self, forKey: key) { return number }
                return try container.decode([Ignored].self, forKey: key).count
            }
            copied = try count(.copied)
            skipped = try count(.skipped)
        }
    }

    @Test func importCopiesEveryGnomeKeyringItemAndLeavesItsSourceAlone() throws {
        let bus = try PrivateBus()
        let harness = try Harness(environment: bus.environment)
        let passcode = "e2e-import-passcode-\(UUID().uuidString.prefix(8))"
        let keyringPassword = "e2e-import-gnome-password-\(UUID().uuidString.prefix(8))"
        harness.secrets = [passcode, keyringPassword]
        let gnome = try GnomeKeyring(bus: bus, password: keyringPassword)
        defer {
            harness.stopDaemon()
            withExtendedLifetime(bus) {}
        }

        // Three items in gnome-keyring's login keyring, stored by secret-tool as its user would.
        let items: [(label: String, attributes: KeyValuePairs<String, String>, secret: String)] = [
            ("E2E import mail", ["tresor-e2e": "import", "service": "mail", "account": "ada"], "e2e-import-mail-\(UUID().uuidString.prefix(8))"),
            ("E2E import chat", ["tresor-e2e": "import", "service": "chat", "account": "bob"], "e2e-import-chat-\(UUID().uuidString.prefix(8))"),
            ("E2E import git", ["tresor-e2e": "import", "protocol": "https", "server": "git.example.test", "user": "ada"], "e2e-import-git-\(UUID().uuidString.prefix(8))"),
        ]
        harness.secrets += items.map(\.secret)
        let fromGnome = SecretTool(harness: harness, environment: gnome.environment)
        for item in items {
            try fromGnome.store(label: item.label, item.attributes, secret: item.secret)
        }

        // Tresor runs without the Secret Service: gnome-keyring keeps the name.
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let imported = try harness.tresor(["import", "secret-service", "--json"])
        #expect(imported.succeeded, "\(imported.stderr)")
        let report = try JSONDecoder().decode(ImportReport.self, from: Data(imported.stdout.utf8))
        #expect(report.copied == items.count && report.skipped == 0, "\(imported.stdout)")

        // gnome-keyring still has every item, unchanged.
        for item in items {
            #expect(try fromGnome.lookup(item.attributes, expecting: item.secret) == item.secret, "\(item.label) left gnome-keyring")
        }
        #expect(try fromGnome.search(["tresor-e2e": "import"], expecting: items.map(\.secret)).labels.sorted() == items.map(\.label).sorted())

        // A second import copies nothing twice.
        let again = try harness.tresor(["import", "secret-service", "--json"])
        #expect(again.succeeded, "\(again.stderr)")
        let second = try JSONDecoder().decode(ImportReport.self, from: Data(again.stdout.utf8))
        #expect(second.copied == 0 && second.skipped == items.count, "\(again.stdout)")

        // Tresor takes the name; secret-tool now reads the copies from it.
        gnome.stop()
        harness.stopDaemon()
        try harness.startDaemon(extraArguments: ["--secret-service"])
        try bus.waitFor(SecretService.busName, by: "tresord", running: { harness.daemonIsRunning }, log: { harness.daemonLog })
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let fromTresor = SecretTool(harness: harness)
        for item in items {
            #expect(try fromTresor.lookup(item.attributes, expecting: item.secret) == item.secret, "\(item.label) was not imported")
        }
        let found = try fromTresor.search(["tresor-e2e": "import"], expecting: items.map(\.secret))
        #expect(found.labels.sorted() == items.map(\.label).sorted(), "labels kept")
        #expect(found.has("server", "git.example.test"), "attributes kept: \(found.attributes)")
        try harness.expectNoSecretLeaked()
    }
}
