import Foundation
import Testing
import TresorSystem
import TresorTestSupport

/// The Secret Service API at the level of its D-Bus calls (raw_dbus.py): sessions belong to the
/// connection that opened them, the collections and the default alias are where clients look,
/// and the `session` collection lives only as long as the daemon.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled,
        "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceProtocolTests {
    /// Connection A opens a session; connection B (the same Python, so the same application,
    /// and the item is its own) reads, writes and closes with A's session path: every call is
    /// refused, and A's session and B's own still work.
    @Test func anotherConnectionsSessionIsRefused() throws {
        let provider = try TresorProvider()
        let secret = provider.marker("foreign-session")
        #expect(try provider.python.secretstorage(.plain, "store", ["E2E foreign session", "tresor-e2e=foreign-session"], secret: secret).succeeded)

        let answer = try provider.python.raw(ForeignSessionAnswer.self, "foreign-session", ["tresor-e2e=foreign-session"])
        #expect(answer.itemsFound == 1)
        #expect(answer.getSecrets.failed, "GetSecrets with another connection's session: \(answer.getSecrets)")
        #expect(answer.getSecret.failed, "Item.GetSecret with another connection's session: \(answer.getSecret)")
        #expect(answer.setSecret.failed, "Item.SetSecret with another connection's session")
        #expect(answer.createItem.failed, "CreateItem with another connection's session")
        #expect(answer.close.failed, "Session.Close of another connection's session")
        #expect(answer.ownerAfterwards.ok == 1, "the owner's session still works: \(answer.ownerAfterwards)")
        #expect(answer.ownSession.ok == 1, "the other connection's own session works: \(answer.ownSession)")
        // SetSecret through the foreign session changed nothing.
        #expect(try provider.python.secretstorage(.dh, "lookup", ["tresor-e2e=foreign-session"], expecting: secret).stdout == secret)
        try provider.harness.expectNoSecretLeaked()
    }

    /// Read by Python, which owns the one item: a collection's Items lists what its caller may see.
    @Test func collectionsAliasesAndProperties() throws {
        let provider = try TresorProvider()
        #expect(
            try provider.python.secretstorage(.plain, "store", ["E2E properties", "tresor-e2e=properties"], secret: provider.marker("properties"))
                .succeeded)
        // secret-tool's item is not Python's: it must not show in Python's view of the collection.
        try provider.secretTool.store(label: "E2E not Python's", ["tresor-e2e": "properties-other"], secret: provider.marker("properties-other"))

        let answer = try provider.python.raw(PropertiesAnswer.self, "properties")
        #expect(Set(answer.collections).isSuperset(of: [SecretService.login, SecretService.session]), "\(answer.collections)")
        #expect(answer.defaultAlias == SecretService.login)
        let login = try #require(answer.collection[SecretService.login])
        let alias = try #require(answer.collection[SecretService.defaultAlias])
        #expect(login.locked.ok == false)
        #expect(login.label.ok?.isEmpty == false, "the login collection has a label")
        #expect(login.items.ok?.count == 1, "\(login.items)")
        #expect(alias.items.ok == login.items.ok, "the default alias is the login collection")
        // When the login keychain was made, where the file system keeps a birth time (statx).
        if let made = FileBirth.time(of: provider.harness.paths.loginKeychain.path) {
            #expect(login.created.ok == UInt64(made.timeIntervalSince1970), "\(login.created)")
            #expect(Date().timeIntervalSince(made) < 3600)
        }
        #expect(answer.collection[SecretService.session]?.items.ok == [], "the item went to the login collection, not the session one")
        try provider.harness.expectNoSecretLeaked()
    }

    /// The `session` collection is in memory: its items are gone after a restart, the login
    /// collection's survive. The provider is turned on by config.json here, not by the flag.
    @Test func sessionCollectionItemsAreGoneAfterARestart() throws {
        let provider = try TresorProvider(configuration: #"{"secretService": true}"#, daemonArguments: [])
        let (tool, python) = (provider.secretTool, provider.python)
        let (kept, forgotten) = (provider.marker("login-kept"), provider.marker("session-forgotten"))
        try tool.store(label: "E2E login item", ["tresor-e2e": "restart", "in": "login"], secret: kept)
        try tool.store(label: "E2E session item", ["tresor-e2e": "restart", "in": "session"], secret: forgotten, collection: SecretService.session)
        #expect(try tool.lookup(["tresor-e2e": "restart", "in": "session"], expecting: forgotten) == forgotten)
        // Python's items, one in each, for its view of the collections.
        #expect(
            try python.secretstorage(.dh, "store", ["E2E python login", "tresor-e2e=restart-python"], secret: provider.marker("python-login"))
                .succeeded)
        #expect(
            try python.secretstorage(
                .dh, "store", ["E2E python session", "tresor-e2e=restart-python"], secret: provider.marker("python-session"),
                collection: SecretService.session
            ).succeeded)
        let before = try python.raw(PropertiesAnswer.self, "properties")
        #expect(before.collection[SecretService.session]?.items.ok?.count == 1)
        #expect(before.collection[SecretService.login]?.items.ok?.count == 1)

        try provider.restart()
        #expect(try tool.lookup(["tresor-e2e": "restart", "in": "login"], expecting: kept) == kept)
        #expect(try tool.lookup(["tresor-e2e": "restart", "in": "session"]) == nil)
        #expect(try tool.search(["tresor-e2e": "restart"], expecting: [kept]).labels == ["E2E login item"])
        let after = try python.raw(PropertiesAnswer.self, "properties")
        #expect(after.collection[SecretService.session]?.items.ok == [], "\(String(describing: after.collection[SecretService.session]))")
        #expect(after.collection[SecretService.login]?.items.ok?.count == 1)
        #expect(try python.secretstorageSearch(.plain, ["tresor-e2e=restart-python"]).map(\.label) == ["E2E python login"])
        try provider.harness.expectNoSecretLeaked()
    }
}
