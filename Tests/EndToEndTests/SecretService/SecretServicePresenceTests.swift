import Foundation
import Testing
import TresorTestSupport

/// User presence for desktop clients (docs/SECRET-SERVICE.md, "Items that need you"): an item
/// the user marked `userPresence` is *locked* for Secret Service clients; a client's `Unlock`
/// gets a prompt, which the user answers in `tresor approve` — the client never sees the
/// passcode, and one approval serves one read.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled,
        "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServicePresenceTests {
    static let pythonItem = ["tresor-e2e=presence"]
    static let toolItem: KeyValuePairs = ["tresor-e2e": "presence-tool"]

    /// A provider with an item of Python's and one of secret-tool's, both marked userPresence
    /// by the user (with the passcode: they are other applications' items).
    func providerWithPresenceItems() throws -> (TresorProvider, python: String, tool: String) {
        let provider = try TresorProvider()
        let python = provider.marker("presence-python"), tool = provider.marker("presence-tool")
        #expect(try provider.python.secretstorage(.dh, "store", ["E2E presence"] + Self.pythonItem, secret: python).succeeded)
        try provider.secretTool.store(label: "E2E presence tool", Self.toolItem, secret: tool)
        for value in ["presence", "presence-tool"] {
            let marked = try provider.harness.tresor(
                ["item", "update", "--attribute", "tresor-e2e=\(value)", "--set", "accessControl=userPresence", "--passcode-stdin"],
                input: provider.passcode + "\n")
            try #require(marked.succeeded, "\(marked.stderr)")
        }
        return (provider, python, tool)
    }

    /// `secret-tool lookup` while `tresor approve --once` answers `answer`: the lookup is retried
    /// until the approver is there to ask. - Returns: what secret-tool printed, and the approver.
    func lookupWhileApproving(_ provider: TresorProvider, answer: String, expecting: String) throws -> (String?, Harness.Result) {
        var found: String?
        let approver = try provider.harness.approving(answer: answer) {
            found = try provider.secretTool.lookup(Self.toolItem, expecting: expecting)
            return found != nil
        }
        return (found, approver)
    }

    @Test func aUserPresenceItemIsLockedForEveryClient() throws {
        let (provider, _, _) = try providerWithPresenceItems()
        let state = try provider.python.raw(ItemStateAnswer.self, "item-state", Self.pythonItem)
        #expect(state.locked.count == 1 && state.unlocked.isEmpty, "SearchItems puts it among the locked: \(state)")
        for item in state.items.values {
            #expect(item.locked.ok == true, "Item.Locked: \(item.locked)")
            #expect(item.collectionLocked.ok == false, "the collection itself is not locked")
            #expect(item.getSecret.failed, "no secret without the user: \(item.getSecret)")
        }
        // Without anyone to ask, the Unlock prompt is refused and secret-tool reads nothing.
        #expect(try provider.secretTool.lookup(Self.toolItem) == nil)
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func theUserAllowsOneReadInTresorApprove() throws {
        let (provider, _, tool) = try providerWithPresenceItems()
        let (found, approver) = try lookupWhileApproving(provider, answer: provider.passcode, expecting: tool)
        #expect(found == tool, "secret-tool got the secret once the user allowed it")
        #expect(approver.succeeded, "\(approver.stderr)")
        #expect(
            approver.stdout.contains("secret-tool") && approver.stdout.contains("E2E presence tool"),
            "the user sees who asks for what: \(approver.stdout)")
        #expect(approver.stdout.contains("Allowed."))
        #expect(
            approver.stdout.contains("process ") && approver.stdout.contains("secret-tool lookup tresor-e2e presence-tool"),
            "the process that asks, by its command line: \(approver.stdout)")
        #expect(approver.stdout.contains("started by "), "and who started it: \(approver.stdout)")
        // One approval, one read: the next lookup asks again (and nobody answers now).
        #expect(try provider.secretTool.lookup(Self.toolItem) == nil)
        try provider.harness.expectNoSecretLeaked()
    }

    /// Any process of the user can own the desktop prompter's bus name: the daemon asks the
    /// prompter only when that name's owner runs the root-owned prompter executable. An impostor
    /// is never called — the request goes to `tresor approve` on the user's terminal.
    @Test func aProgramOwningThePromptersNameIsNeverAsked() throws {
        let (provider, _, tool) = try providerWithPresenceItems()
        let impostor = try BackgroundProcess(
            harness: provider.harness, executable: PythonClients.python,
            arguments: ["-B", PythonClients.fixtures.appendingPathComponent("prompter_impostor.py").path])
        try #require(try impostor.nextLine() == "owned")
        let (found, approver) = try lookupWhileApproving(provider, answer: provider.passcode, expecting: tool)
        #expect(found == tool, "the user allowed it in tresor approve: \(approver.stdout)")
        #expect(approver.stdout.contains("Allowed."))
        #expect(throws: (any Error).self, "the impostor was called") { try impostor.nextLine(timeout: 2) }
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func aRefusalGivesNothing() throws {
        let (provider, _, tool) = try providerWithPresenceItems()
        let (found, approver) = try lookupWhileApproving(provider, answer: "", expecting: tool)
        #expect(found == nil)
        #expect(approver.stdout.contains("Refused."), "\(approver.stdout)")
        try provider.harness.expectNoSecretLeaked()
    }
}
