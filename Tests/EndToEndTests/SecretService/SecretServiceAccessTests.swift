import Foundation
import Testing
import TresorTestSupport

/// Per-application access control on the Secret Service: each executable sees only the items it
/// created until `tresor secret-service allow` grants it more, and no longer after `revoke`.
/// gnome-keyring shows every item to every client; a provider that does the same fails here.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled,
        "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceAccessTests {
    @Test func aCopyOfSecretToolSeesNothingUntilAllowedAndNothingAfterRevoke() throws {
        let provider = try TresorProvider()
        let original = provider.secretTool
        let copy = original.running(try SecretTool.copy(into: provider.harness.root.appendingPathComponent("apps")))
        // Named secret-tool, the copy is a generic client too: trusted, so that what is checked here is its group.
        try provider.trust([copy.executable])
        let (secret, copysOwn) = (provider.marker("access-original"), provider.marker("access-copy"))
        let attributes: KeyValuePairs = ["tresor-e2e": "access", "account": "ada"]
        try original.store(label: "E2E access original", attributes, secret: secret)

        // The copy neither reads, finds, nor removes the original's item.
        #expect(try copy.lookup(attributes) == nil)
        #expect(try copy.search(attributes).labels.isEmpty)
        _ = try copy.clear(attributes)
        #expect(try original.lookup(attributes, expecting: secret) == secret)

        // The owners list names the original as the owner of its item.
        let (_, owner) = try provider.item(labelled: "E2E access original")
        #expect(try provider.description(owner, names: SecretTool.system), "owner: \(owner)")

        // A wrong passcode grants nothing.
        let refused = try provider.grant("allow", to: copy.executable, .owner(SecretTool.system), passcode: "e2e-ss-not-the-passcode")
        #expect(!refused.succeeded)
        #expect(try copy.lookup(attributes) == nil)

        let allowed = try provider.grant("allow", to: copy.executable, .owner(SecretTool.system))
        #expect(allowed.succeeded, "\(allowed.stderr)")
        #expect(try copy.lookup(attributes, expecting: secret) == secret)
        let found = try copy.search(attributes, expecting: [secret])
        #expect(found.labels == ["E2E access original"])
        #expect(found.has("account", "ada"))

        let revoked = try provider.grant("revoke", to: copy.executable, .owner(SecretTool.system))
        #expect(revoked.succeeded, "\(revoked.stderr)")
        #expect(try copy.lookup(attributes) == nil)
        #expect(try copy.search(attributes).labels.isEmpty)

        // The copy storing under the same attributes makes an item of its own: the original's
        // is not replaced (libsecret stores with Replace=true).
        try copy.store(label: "E2E access copy", attributes, secret: copysOwn)
        #expect(try copy.lookup(attributes, expecting: copysOwn) == copysOwn)
        #expect(try original.lookup(attributes, expecting: secret) == secret)
        #expect(try original.search(attributes, expecting: [secret]).labels == ["E2E access original"])
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func pythonAndSecretToolAreDifferentApplicationsUntilAnItemIsAllowed() throws {
        let provider = try TresorProvider()
        let (tool, python) = (provider.secretTool, provider.python)
        let (pythons, tools) = (provider.marker("access-python"), provider.marker("access-secret-tool"))
        let pythonAttributes: KeyValuePairs = ["tresor-e2e": "python-item"]
        let toolAttributes: KeyValuePairs = ["tresor-e2e": "tool-item"]

        #expect(try python.secretstorage(.plain, "store", ["E2E python item", "tresor-e2e=python-item"], secret: pythons).succeeded)
        try tool.store(label: "E2E secret-tool item", toolAttributes, secret: tools)

        // Neither sees the other's; each sees its own (keyring is Python too, the same application).
        #expect(try tool.lookup(pythonAttributes) == nil)
        #expect(try tool.search(pythonAttributes).labels.isEmpty)
        #expect(try python.secretstorage(.dh, "lookup", ["tresor-e2e=tool-item"]).status == 1)
        #expect(try python.secretstorageSearch(.dh, ["tresor-e2e=tool-item"]).isEmpty)
        #expect(try python.secretstorage(.dh, "lookup", ["tresor-e2e=python-item"], expecting: pythons).stdout == pythons)
        #expect(try tool.lookup(toolAttributes, expecting: tools) == tools)

        let (id, owner) = try provider.item(labelled: "E2E python item")
        #expect(try provider.description(owner, names: PythonClients.python), "owner: \(owner)")
        let allowed = try provider.grant("allow", to: SecretTool.system, .item(id))
        #expect(allowed.succeeded, "\(allowed.stderr)")
        #expect(try tool.lookup(pythonAttributes, expecting: pythons) == pythons)
        #expect(try tool.search(pythonAttributes, expecting: [pythons]).labels == ["E2E python item"])
        // A grant goes one way: Python still does not see secret-tool's item.
        #expect(try python.secretstorageSearch(.plain, ["tresor-e2e=tool-item"]).isEmpty)

        let revoked = try provider.grant("revoke", to: SecretTool.system, .item(id))
        #expect(revoked.succeeded, "\(revoked.stderr)")
        #expect(try tool.lookup(pythonAttributes) == nil)
        #expect(try tool.search(pythonAttributes).labels.isEmpty)
        // Revoking the grant left the owner's access alone.
        #expect(try python.secretstorage(.plain, "lookup", ["tresor-e2e=python-item"], expecting: pythons).stdout == pythons)
        try provider.harness.expectNoSecretLeaked()
    }
}
