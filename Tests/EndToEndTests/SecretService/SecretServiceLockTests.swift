import Foundation
import Testing

/// The Secret Service while the keybag is locked: items say so and give no secret, an `Unlock`
/// prompt completes (for its caller alone) once the user unlocks with `tresor unlock`, and a
/// dismissed prompt says it was dismissed.
@Suite(.serialized, .enabled(if: SecretService.toolsInstalled, "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceLockTests {
    static let attributes: KeyValuePairs = ["tresor-e2e": "locking"]

    /// A provider with one item, locked with `tresor lock`.
    func lockedProvider() throws -> (TresorProvider, secret: String) {
        let provider = try TresorProvider()
        let secret = provider.marker("locking")
        try provider.secretTool.store(label: "E2E locking", Self.attributes, secret: secret)
        try provider.lock()
        return (provider, secret)
    }

    func expectLocked(_ provider: TresorProvider, _ locked: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let state = try provider.python.raw(ItemStateAnswer.self, "item-state", ["tresor-e2e=locking"])
        #expect(state.items.count == 1, "one item matches: \(state.items.keys)", sourceLocation: sourceLocation)
        #expect((locked ? state.locked : state.unlocked).count == 1, "SearchItems puts it among the \(locked ? "locked" : "unlocked")", sourceLocation: sourceLocation)
        for item in state.items.values {
            #expect(item.locked.ok == locked, "Item.Locked: \(item.locked)", sourceLocation: sourceLocation)
            #expect(item.collectionLocked.ok == locked, "Collection.Locked: \(item.collectionLocked)", sourceLocation: sourceLocation)
            // A locked item gives no secret, not even its length.
            #expect(item.getSecret.failed == locked, "GetSecret: \(item.getSecret)", sourceLocation: sourceLocation)
        }
    }

    @Test func lockedItemsAreLockedAndAnUnlockPromptCompletesAfterTresorUnlock() throws {
        let (provider, secret) = try lockedProvider()
        try expectLocked(provider, true)

        let prompting = try provider.python.startRaw("unlock-prompt", [SecretService.login], timeout: clientTimeout)
        let first = try #require(try prompting.nextLine(), "raw_dbus.py unlock-prompt printed nothing")
        let line = try JSONDecoder().decode(PromptLine.self, from: Data(first.utf8))
        #expect(line.unlocked == nil && line.prompt != "/", "Unlock of a locked collection answered without a prompt: \(first)")
        // The prompt waits for the user, who answers it with the CLI.
        try provider.unlock()
        let finished = try prompting.finish()
        #expect(finished.succeeded, "\(finished.stderr)")
        let answer = try JSONDecoder().decode(PromptAnswer.self, from: Data(finished.stdout.utf8))
        #expect(answer.timedOut == nil, "no Completed signal reached the caller")
        let completion = try #require(answer.completed?.first)
        #expect(answer.completed?.count == 1)
        #expect(!completion.dismissed)
        #expect(completion.paths?.contains(SecretService.login) == true, "Completed's result lists the unlocked collection: \(completion.paths ?? [])")
        // Completed went to the caller, not to the bus: another connection listening saw nothing.
        #expect(completion.destination == answer.caller, "Completed was sent to \(completion.destination ?? "everyone")")
        #expect(answer.overheard == 0)

        try expectLocked(provider, false)
        #expect(try provider.secretTool.lookup(Self.attributes, expecting: secret) == secret)
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func aDismissedPromptCompletesWithDismissedTrue() throws {
        let (provider, secret) = try lockedProvider()
        let answer = try provider.python.raw(PromptAnswer.self, "dismiss", [SecretService.login])
        #expect(answer.prompt != "/", "Unlock of a locked collection answered without a prompt")
        #expect(answer.dismiss?.failed == false, "Dismiss: \(String(describing: answer.dismiss?.error))")
        let completion = try #require(answer.completed?.first, "no Completed after Dismiss")
        #expect(answer.completed?.count == 1)
        #expect(completion.dismissed)
        #expect(completion.destination == answer.caller)
        #expect(answer.overheard == 0)
        // Dismissing unlocked nothing.
        try expectLocked(provider, true)

        try provider.unlock()
        try expectLocked(provider, false)
        #expect(try provider.secretTool.lookup(Self.attributes, expecting: secret) == secret)
        try provider.harness.expectNoSecretLeaked()
    }

    /// `Lock` over D-Bus locks the collection as `tresor lock` does; its `Unlock` prompt then
    /// completes after `tresor unlock` too.
    @Test func lockOverDBusThenUnlockThroughThePrompt() throws {
        let provider = try TresorProvider()
        let secret = provider.marker("dbus-lock")
        try provider.secretTool.store(label: "E2E locking", Self.attributes, secret: secret)
        try expectLocked(provider, false)

        let locked = try provider.python.raw(LockAnswer.self, "lock", [SecretService.login])
        #expect(locked.locked.contains(SecretService.login) && locked.prompt == "/", "Lock: \(locked)")
        try expectLocked(provider, true)

        let prompting = try provider.python.startRaw("unlock-prompt", [SecretService.login], timeout: clientTimeout)
        let first = try #require(try prompting.nextLine(), "raw_dbus.py unlock-prompt printed nothing")
        #expect(try JSONDecoder().decode(PromptLine.self, from: Data(first.utf8)).unlocked == nil, "no prompt: \(first)")
        try provider.unlock()
        let finished = try prompting.finish()
        let answer = try JSONDecoder().decode(PromptAnswer.self, from: Data(finished.stdout.utf8))
        #expect(answer.completed?.first?.dismissed == false, "\(finished.stdout)")
        try expectLocked(provider, false)
        #expect(try provider.secretTool.lookup(Self.attributes, expecting: secret) == secret)
        try provider.harness.expectNoSecretLeaked()
    }
}
