import Foundation
import Testing
import TresorKit
import TresorModel
import TresorProtocol
import TresorTestSupport

/// `tresor import secret-service` from the real gnome-keyring on a private bus, with the real
/// binaries: every item arrives with its label, attributes and secret, gnome-keyring keeps its
/// own, a second import copies nothing, a locked collection is skipped, and once tresord owns
/// the name secret-tool finds the same secrets in Tresor — the migration as a user makes it.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(if: ImportTools.installed, "needs dbus-daemon, dbus-send, gnome-keyring and secret-tool (scripts/test installs them)"))
struct SecretServiceImportCommandTests {
    /// `--json` output.
    struct Report: Decodable {
        var provider: String
        var group: String?
        var copied: [SecretServiceImportResponse.Copied]
        var skipped: [SecretServiceSkip]
    }

    struct Item {
        var label: String
        var attributes: [(String, String)]
        var secret: String
    }

    /// A harness on `bus` with an initialised keybag (its passcode among the secrets).
    func tresor(on bus: PrivateBus, _ secrets: [String] = []) throws -> (Harness, String) {
        let harness = try Harness(environment: bus.environment)
        let passcode = "e2e-ssimport-passcode-\(UUID().uuidString.prefix(8))"
        harness.secrets = [passcode] + secrets
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        return (harness, passcode)
    }

    func importing(_ harness: Harness, passcode: String, owner: String? = nil) throws -> Report {
        let owned = owner.map { ["--owner", $0] } ?? []
        let run = try harness.tresor(["import", "secret-service"] + owned + ["--passcode-stdin", "--json"], input: passcode + "\n")
        #expect(run.succeeded, "\(run.stdout) \(run.stderr)")
        return try CLIJSON.decode(Report.self, from: Data(run.stdout.utf8))
    }

    /// Starts tresord with the Secret Service in place of the running daemon, and unlocks it.
    func takeOver(_ harness: Harness, bus: PrivateBus, passcode: String) throws {
        harness.stopDaemon()
        try harness.startDaemon(extraArguments: ["--secret-service"])
        try bus.waitFor(ImportTools.busName, by: "tresord", running: { harness.daemonIsRunning })
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        // secret-tool is a generic client: trusted, as the user whose own lookups these are would.
        let trusted = try harness.tresor(["secret-service", "trust", "add", "/usr/bin/secret-tool", "--passcode-stdin"], input: passcode + "\n")
        #expect(trusted.succeeded, "\(trusted.stderr)")
    }

    @Test func copiesEveryItemLeavesGnomeKeyringAloneAndSecretToolFindsThemInTresor() throws {
        let bus = try PrivateBus()
        let keyringPassword = "e2e-ssimport-keyring-\(UUID().uuidString.prefix(8))"
        let items = [
            Item(
                label: "E2E import mail", attributes: [("tresor-e2e", "import"), ("service", "mail"), ("account", "ada")],
                secret: "e2e-ssimport-mail-\(UUID().uuidString.prefix(8))"),
            Item(
                label: "E2E import chat", attributes: [("tresor-e2e", "import"), ("service", "chat"), ("account", "bob")],
                secret: "e2e-ssimport-chat-\(UUID().uuidString.prefix(8))"),
            Item(
                label: "E2E import git", attributes: [("tresor-e2e", "import"), ("protocol", "https"), ("server", "git.example.test")],
                secret: "e2e-ssimport-git-\(UUID().uuidString.prefix(8)) with spaces and ünïcode"),
        ]
        let sessionSecret = "e2e-ssimport-session-\(UUID().uuidString.prefix(8))"
        let (harness, passcode) = try tresor(on: bus, [keyringPassword, sessionSecret] + items.map(\.secret))
        defer { harness.stopDaemon() }
        let gnome = try GnomeKeyring(bus: bus, password: keyringPassword)
        let fromGnome = SecretToolClient(environment: gnome.environment)
        for item in items { try fromGnome.store(label: item.label, item.attributes, secret: item.secret) }
        // gnome-keyring's `session` collection lives in its memory: not copied to disk.
        try fromGnome.store(
            label: "E2E import session", [("tresor-e2e", "import-session")], secret: sessionSecret,
            collection: "/org/freedesktop/secrets/collection/session")
        let beforeImport = Date()

        let first = try importing(harness, passcode: passcode, owner: "/usr/bin/secret-tool")
        #expect(first.provider == "gnome-keyring-daemon")
        #expect(first.copied.count == items.count, "\(first)")
        #expect(first.skipped.map(\.what) == ["collection “session”"], "\(first.skipped)")
        let group = try #require(first.group)
        #expect(group.hasPrefix("exe:") || group.hasPrefix("exe-sha256:"), "secret-tool's own group, not \(group)")

        // In Tresor: one Secret Service item per gnome-keyring item, in secret-tool's group,
        // with its label, attributes, secret, content type and gnome-keyring's creation date.
        // The secrets are printed on purpose (as text, beside secretBase64): kept out of the scan.
        let shown = try harness.run(
            Harness.binaries.appendingPathComponent("tresor"),
            ["item", "find", "--service", "org.freedesktop.secrets", "--show-secrets", "--passcode-stdin", "--json"],
            input: passcode + "\n", revealing: items.map(\.secret))
        let found = try CLIJSON.decode([KeychainItem].self, from: Data(shown.stdout.utf8))
        #expect(found.count == items.count)
        for item in items {
            let copy = try #require(found.first { $0.attributes?.label == item.label }, "\(item.label) not in Tresor")
            // secret-tool adds libsecret's `xdg:schema`; gnome-keyring 42 answers it for some
            // items and not others. The copy has what gnome-keyring answered.
            var attributes = copy.attributes?.custom ?? [:]
            #expect([nil, "org.freedesktop.Secret.Generic"].contains(attributes.removeValue(forKey: "xdg:schema")))
            #expect(attributes == Dictionary(uniqueKeysWithValues: item.attributes))
            #expect(copy.secret == Data(item.secret.utf8))
            #expect(copy.attributes?.accessGroup == group)
            #expect(copy.attributes?.generic == Data("text/plain".utf8))
            #expect(try #require(copy.attributes?.creationDate) < beforeImport, "gnome-keyring's creation date kept")
            #expect(first.copied.contains { $0.id == copy.id && $0.what.contains(item.label) })
        }

        // gnome-keyring has every item still, and no other.
        for item in items { #expect(try fromGnome.lookup(item.attributes) == item.secret, "\(item.label) left gnome-keyring") }
        #expect(try fromGnome.count([("tresor-e2e", "import")]) == items.count)

        // Again: nothing copied, every item skipped as already there.
        let second = try importing(harness, passcode: passcode, owner: "/usr/bin/secret-tool")
        #expect(second.copied.isEmpty && second.skipped.count == items.count + 1, "\(second)")
        #expect(second.skipped.filter { $0.what != "collection “session”" }.allSatisfy { $0.why == "already in Tresor" })
        #expect(try harness.json([KeychainItem].self, ["item", "find", "--service", "org.freedesktop.secrets"]).count == items.count)

        // A collection gnome-keyring would unlock only with a prompt is skipped, and stays locked.
        try gnome.lockLogin()
        let locked = try importing(harness, passcode: passcode, owner: "/usr/bin/secret-tool")
        #expect(locked.copied.isEmpty)
        #expect(locked.skipped.contains { $0.what.contains("Login") && $0.why == "locked: unlock it in its own tool first" }, "\(locked)")
        #expect(try fromGnome.lookup(items[0].attributes) == nil, "the login collection is still locked")

        // The migration: gnome-keyring stops, tresord takes the name, secret-tool reads the copies.
        gnome.stop()
        try takeOver(harness, bus: bus, passcode: passcode)
        let fromTresor = SecretToolClient(environment: harness.environment)
        for item in items { #expect(try fromTresor.lookup(item.attributes) == item.secret, "\(item.label) not found through Tresor") }
        #expect(try fromTresor.count([("tresor-e2e", "import")]) == items.count)
        try harness.expectNoSecretLeaked()
    }

    @Test func withoutAnOwnerItemsWaitInTheImportedGroupUntilAnExecutableIsAllowed() throws {
        let bus = try PrivateBus()
        let keyringPassword = "e2e-ssimport-keyring-\(UUID().uuidString.prefix(8))"
        let item = Item(
            label: "E2E imported token", attributes: [("tresor-e2e", "imported"), ("service", "api")],
            secret: "e2e-ssimport-token-\(UUID().uuidString.prefix(8))")
        let (harness, passcode) = try tresor(on: bus, [keyringPassword, item.secret])
        defer { harness.stopDaemon() }
        let gnome = try GnomeKeyring(bus: bus, password: keyringPassword)
        try SecretToolClient(environment: gnome.environment).store(label: item.label, item.attributes, secret: item.secret)

        let report = try importing(harness, passcode: passcode)
        #expect(report.group == "secret-service:imported" && report.copied.count == 1, "\(report)")
        let owners = try harness.json(SecretServiceOwnersResponse.self, ["secret-service", "owners"])
        #expect(owners.owners.contains { $0.owner == "secret-service:imported" && $0.items.map(\.label) == [item.label] })

        // No executable sees them, until the user allows one.
        gnome.stop()
        try takeOver(harness, bus: bus, passcode: passcode)
        let secretTool = SecretToolClient(environment: harness.environment)
        #expect(try secretTool.lookup(item.attributes) == nil, "imported items are nobody's until allowed")
        let allowed = try harness.tresor(
            ["secret-service", "allow", "--exe", "/usr/bin/secret-tool", "--group", "secret-service:imported", "--passcode-stdin"],
            input: passcode + "\n")
        #expect(allowed.succeeded, "\(allowed.stderr)")
        #expect(try secretTool.lookup(item.attributes) == item.secret)
        try harness.expectNoSecretLeaked()
    }

    @Test func aWrongOrMissingPasscodeImportsNothing() throws {
        let bus = try PrivateBus()
        let keyringPassword = "e2e-ssimport-keyring-\(UUID().uuidString.prefix(8))"
        let item = Item(label: "E2E guarded", attributes: [("tresor-e2e", "guarded")], secret: "e2e-ssimport-guarded-\(UUID().uuidString.prefix(8))")
        let (harness, _) = try tresor(on: bus, [keyringPassword, item.secret])
        defer { harness.stopDaemon() }
        let gnome = try GnomeKeyring(bus: bus, password: keyringPassword)
        try SecretToolClient(environment: gnome.environment).store(label: item.label, item.attributes, secret: item.secret)

        let wrong = try harness.tresor(["import", "secret-service", "--passcode-stdin"], input: "not-the-passcode\n")
        #expect(!wrong.succeeded && wrong.stderr.contains("passcode"), "\(wrong.stderr)")
        let none = try harness.tresor(["import", "secret-service", "--passcode-stdin"], input: "")
        #expect(!none.succeeded)
        let listed = try harness.tresor(["item", "find", "--service", "org.freedesktop.secrets", "--json"])
        #expect(!listed.succeeded || listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(listed.stdout)")
        try harness.expectNoSecretLeaked()
    }

    @Test func saysSoWhenNobodyOrTresorItselfAnswers() throws {
        let bus = try PrivateBus()
        let (harness, passcode) = try tresor(on: bus)
        defer { harness.stopDaemon() }

        let nobody = try harness.tresor(["import", "secret-service", "--passcode-stdin"], input: passcode + "\n")
        #expect(nobody.status == 1)
        #expect(nobody.stderr.contains("nothing to import from: no program owns org.freedesktop.secrets"), "\(nobody.stderr)")

        let noBus = try harness.run(
            Harness.binaries.appendingPathComponent("tresor"), ["import", "secret-service"],
            environment: harness.environment.merging(["DBUS_SESSION_BUS_ADDRESS": ""]) { $1 })
        #expect(noBus.status == 1 && noBus.stderr.contains("DBUS_SESSION_BUS_ADDRESS is not set"), "\(noBus.stderr)")

        try takeOver(harness, bus: bus, passcode: passcode)
        let itself = try harness.tresor(["import", "secret-service", "--passcode-stdin"], input: passcode + "\n")
        #expect(itself.status == 1)
        #expect(itself.stderr.contains("nothing to import from: tresord answers the Secret Service already"), "\(itself.stderr)")
        try harness.expectNoSecretLeaked()
    }
}
