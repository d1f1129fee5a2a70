import Foundation
import Testing
import TresorTestSupport

/// Real Secret Service clients against `tresord --secret-service` on a private bus: each
/// stores, finds, reads and removes what a provider must give back byte for byte.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled,
        "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceClientTests {
    @Test func secretToolStoresLooksUpSearchesAndClears() throws {
        let provider = try TresorProvider()
        let tool = provider.secretTool
        let (first, second) = (provider.marker("secret-tool-first"), provider.marker("secret-tool-second"))
        let attributes: KeyValuePairs = ["tresor-e2e": "secret-tool", "account": "ada"]

        try tool.store(label: "E2E secret-tool item", attributes, secret: first)
        #expect(try tool.lookup(attributes, expecting: first) == first)
        // Any subset of the attributes finds it; another value does not.
        #expect(try tool.lookup(["tresor-e2e": "secret-tool"], expecting: first) == first)
        #expect(try tool.lookup(["tresor-e2e": "secret-tool", "account": "bob"]) == nil)

        let found = try tool.search(attributes, expecting: [first])
        #expect(found.labels == ["E2E secret-tool item"])
        #expect(found.secrets == [first])
        #expect(found.has("tresor-e2e", "secret-tool") && found.has("account", "ada"), "\(found.attributes)")

        // libsecret stores with Replace=true: the same attributes replace the item, never add one.
        try tool.store(label: "E2E secret-tool item, replaced", attributes, secret: second)
        #expect(try tool.lookup(attributes, expecting: second) == second)
        let replaced = try tool.search(attributes, expecting: [second])
        #expect(replaced.labels == ["E2E secret-tool item, replaced"])

        #expect(try tool.clear(attributes).succeeded)
        #expect(try tool.lookup(attributes) == nil)
        #expect(try tool.search(attributes).labels.isEmpty)
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func gitCredentialHelperStoresGetsAndErases() throws {
        let provider = try TresorProvider()
        let helper = try GitCredentialHelper(harness: provider.harness)
        let (ada, bob) = (provider.marker("git-ada"), provider.marker("git-bob"))

        // `store` writes the credential back, the password too: that echo is the helper's own.
        _ = try helper.run("store", ["protocol": "https", "host": "git.example.test", "username": "ada", "password": ada], revealing: [ada])
        _ = try helper.run("store", ["protocol": "https", "host": "git.example.test", "username": "bob", "password": bob], revealing: [bob])

        let forAda = try helper.run("get", ["protocol": "https", "host": "git.example.test", "username": "ada"], revealing: [ada])
        #expect(forAda["password"] == ada)
        let forBob = try helper.run("get", ["protocol": "https", "host": "git.example.test", "username": "bob"], revealing: [bob])
        #expect(forBob["password"] == bob)
        // Another host or protocol: nothing.
        #expect(try helper.run("get", ["protocol": "https", "host": "other.example.test", "username": "ada"])["password"] == nil)
        #expect(try helper.run("get", ["protocol": "http", "host": "git.example.test", "username": "ada"])["password"] == nil)

        _ = try helper.run("erase", ["protocol": "https", "host": "git.example.test", "username": "ada"])
        #expect(try helper.run("get", ["protocol": "https", "host": "git.example.test", "username": "ada"])["password"] == nil)
        // Erasing Ada's credential left Bob's.
        #expect(try helper.run("get", ["protocol": "https", "host": "git.example.test", "username": "bob"], revealing: [bob])["password"] == bob)
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func pythonKeyringSetsGetsAndDeletes() throws {
        let provider = try TresorProvider()
        let python = provider.python
        let (first, second) = (provider.marker("keyring-first"), provider.marker("keyring-second"))

        #expect(try python.keyring("set", service: "e2e-keyring", user: "ada", password: first).succeeded)
        #expect(try python.keyring("get", service: "e2e-keyring", user: "ada", expecting: first).stdout == first)
        #expect(try python.keyring("get", service: "e2e-keyring", user: "bob").status == 1)
        #expect(try python.keyring("set", service: "e2e-keyring", user: "ada", password: second).succeeded)
        #expect(try python.keyring("get", service: "e2e-keyring", user: "ada", expecting: second).stdout == second)

        #expect(try python.keyring("delete", service: "e2e-keyring", user: "ada").succeeded)
        #expect(try python.keyring("get", service: "e2e-keyring", user: "ada").status == 1)
        #expect(try python.keyring("delete", service: "e2e-keyring", user: "ada").status == 1)
        try provider.harness.expectNoSecretLeaked()
    }

    /// Stored through one session algorithm, read through the other: a provider that encrypts or
    /// decrypts wrongly (the key derivation, the IV, PKCS#7 padding at and around the 16-byte
    /// block) gives back other bytes or fails.
    @Test func secretstorageRoundTripsThroughDHAndPlainSessions() throws {
        let provider = try TresorProvider()
        let python = provider.python
        for length in [15, 16, 17, 32, 100] {
            for (writer, reader) in [(PythonClients.Session.dh, PythonClients.Session.plain), (.plain, .dh), (.dh, .dh)] {
                let secret = provider.marker("secretstorage", length: length)
                let attributes = ["tresor-e2e=secretstorage", "length=\(length)", "writer=\(writer)", "reader=\(reader)"]
                let stored = try python.secretstorage(writer, "store", ["E2E secretstorage \(length) \(writer)"] + attributes, secret: secret)
                #expect(stored.succeeded, "\(stored.stderr)")
                let read = try python.secretstorage(reader, "lookup", attributes, expecting: secret)
                #expect(read.succeeded && read.stdout == secret, "\(length) bytes written through \(writer), read through \(reader)")
            }
        }

        let found = try python.secretstorageSearch(.dh, ["tresor-e2e=secretstorage", "length=16", "writer=dh", "reader=plain"])
        #expect(found.count == 1)
        #expect(found.first?.label == "E2E secretstorage 16 dh")
        #expect(found.first?.locked == false)
        let stored = ["tresor-e2e": "secretstorage", "length": "16", "writer": "dh", "reader": "plain"]
        #expect(stored.allSatisfy { key, value in found.first?.attributes[key] == value }, "\(found.first?.attributes ?? [:])")
        #expect(found.first?.path.hasPrefix(SecretService.login + "/") == true, "stored through the default alias, so in the login collection")

        #expect(try python.secretstorage(.plain, "delete", ["tresor-e2e=secretstorage", "length=16"]).succeeded)
        #expect(try python.secretstorage(.dh, "lookup", ["tresor-e2e=secretstorage", "length=16"]).status == 1)
        #expect(try python.secretstorageSearch(.plain, ["tresor-e2e=secretstorage"]).count == 12)
        try provider.harness.expectNoSecretLeaked()
    }
}
