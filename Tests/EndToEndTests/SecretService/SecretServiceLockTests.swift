import Foundation
import Testing
import TresorTestSupport

/// The Secret Service while the keybag is locked: items say so and give no secret, an `Unlock`
/// prompt completes (for its caller alone) once the user unlocks with `tresor unlock`, and a
/// dismissed prompt says it was dismissed.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled,
        "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceLockTests {
    /// Python's item (raw_dbus.py, Python too, sees it) and secret-tool's.
    static let pythonItem = ["tresor-e2e=locking"]
    static let toolItem: KeyValuePairs = ["tresor-e2e": "locking-tool"]

    struct Locked {
        var provider: TresorProvider
        var pythons: String
        var tools: String
    }

    /// A provider with an item of Python's and one of secret-tool's.
    func providerWithItems() throws -> Locked {
        let provider = try TresorProvider()
        let locked = Locked(provider: provider, pythons: provider.marker("locking-python"), tools: provider.marker("locking-tool"))
        #expect(try provider.python.secretstorage(.dh, "store", ["E2E locking"] + Self.pythonItem, secret: locked.pythons).succeeded)
        try provider.secretTool.store(label: "E2E locking", Self.toolItem, secret: locked.tools)
        return locked
    }

    /// Both clients read their secrets again.
    func expectReadable(_ locked: Locked, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(
            try locked.provider.python.secretstorage(.plain, "lookup", Self.pythonItem, expecting: locked.pythons).stdout == locked.pythons,
            sourceLocation: sourceLocation)
        #expect(try locked.provider.secretTool.lookup(Self.toolItem, expecting: locked.tools) == locked.tools, sourceLocation: sourceLocation)
    }

    func expectLocked(_ provider: TresorProvider, _ locked: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let state = try provider.python.raw(ItemStateAnswer.self, "item-state", Self.pythonItem)
        #expect(state.items.count == 1, "one item matches: \(state.items.keys)", sourceLocation: sourceLocation)
        #expect(
            (locked ? state.locked : state.unlocked).count == 1, "SearchItems puts it among the \(locked ? "locked" : "unlocked")",
            sourceLocation: sourceLocation)
        for item in state.items.values {
            #expect(item.locked.ok == locked, "Item.Locked: \(item.locked)", sourceLocation: sourceLocation)
            #expect(item.collectionLocked.ok == locked, "Collection.Locked: \(item.collectionLocked)", sourceLocation: sourceLocation)
            // A locked item gives no secret, not even its length.
            #expect(item.getSecret.failed == locked, "GetSecret: \(item.getSecret)", sourceLocation: sourceLocation)
        }
    }

    /// Unlock(login) from raw_dbus.py, left waiting on its prompt, which the user answers with
    /// `tresor unlock`.
    func unlockThroughThePrompt(_ provider: TresorProvider, sourceLocation: SourceLocation = #_sourceLocation) throws -> PromptAnswer {
        let prompting = try provider.python.startRaw("unlock-prompt", [SecretService.login], timeout: clientTimeout)
        let first = try #require(try prompting.nextLine(), "raw_dbus.py unlock-prompt printed nothing", sourceLocation: sourceLocation)
        let line = try JSONDecoder().decode(PromptLine.self, from: Data(first.utf8))
        #expect(
            line.unlocked == nil && line.prompt != "/", "Unlock of a locked collection answered without a prompt: \(first)",
            sourceLocation: sourceLocation)
        try provider.unlock()
        let finished = try prompting.finish()
        #expect(finished.succeeded, "\(finished.stderr)", sourceLocation: sourceLocation)
        return try JSONDecoder().decode(PromptAnswer.self, from: Data(finished.stdout.utf8))
    }

    /// One Completed signal, `dismissed` as given, sent to the caller alone: another connection
    /// listening on the prompt's path saw nothing.
    func expectCompleted(_ answer: PromptAnswer, dismissed: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(answer.timedOut == nil, "no Completed signal reached the caller", sourceLocation: sourceLocation)
        #expect(answer.completed?.count == 1, sourceLocation: sourceLocation)
        let completion = try #require(answer.completed?.first, sourceLocation: sourceLocation)
        #expect(completion.dismissed == dismissed, sourceLocation: sourceLocation)
        if !dismissed {
            #expect(
                completion.paths?.contains(SecretService.login) == true, "Completed lists the unlocked collection: \(completion.paths ?? [])",
                sourceLocation: sourceLocation)
        }
        #expect(
            completion.destination == answer.caller, "Completed was sent to \(completion.destination ?? "everyone")", sourceLocation: sourceLocation)
        #expect(answer.overheard == 0, sourceLocation: sourceLocation)
    }

    @Test func lockedItemsAreLockedAndAnUnlockPromptCompletesAfterTresorUnlock() throws {
        let locked = try providerWithItems()
        let provider = locked.provider
        try provider.lock()
        try expectLocked(provider, true)

        try expectCompleted(try unlockThroughThePrompt(provider), dismissed: false)
        try expectLocked(provider, false)
        try expectReadable(locked)
        try provider.harness.expectNoSecretLeaked()
    }

    /// Nobody is asked to unlock: a libsecret client's `Prompt` call fails within seconds with
    /// the reason, rather than leaving the program waiting minutes in silence or dismissing its
    /// prompt (which tells it nothing), and the daemon's log says what to do. Another client's
    /// prompt is dismissed within seconds, as every provider tells it no.
    @Test func anUnlockPromptNobodyAnswersIsRefusedWithinSecondsSayingWhy() throws {
        let locked = try providerWithItems()
        let provider = locked.provider
        try provider.lock()
        let other = try provider.python.raw(PromptAnswer.self, "unlock-prompt", [SecretService.login], timeout: 60)
        #expect(
            other.promptError == nil && other.completed?.count == 1 && other.completed?.first?.dismissed == true && other.timedOut == nil,
            "dismissed: \(other)")
        let started = Date()
        let answer = try provider.python.raw(PromptAnswer.self, "unlock-prompt", [SecretService.login], timeout: 60, asLibsecretClient: true)
        let waited = Date().timeIntervalSince(started)
        #expect(answer.promptError == "org.freedesktop.Secret.Error.IsLocked", "\(answer.promptError ?? "no error"): \(answer.message ?? "")")
        #expect(answer.message?.contains("no desktop prompter could be asked, and nobody ran `tresor unlock`") == true, "\(answer.message ?? "")")
        #expect(answer.completed?.isEmpty == true && answer.timedOut == nil, "told once, by the call's error: \(answer.completed ?? [])")
        #expect(waited < 30, "the prompt waited \(Int(waited)) s")
        #expect(provider.harness.daemonLog.contains("no desktop prompter can be asked: run `tresor unlock`"), "the log says what to do")
        try expectLocked(provider, true)
        try provider.harness.expectNoSecretLeaked()
    }

    /// secret-tool waiting on the locked keybag with nobody to ask fails within seconds, saying
    /// why, and `tresor status` says when, for which program and why; a prompt the user answers
    /// in time (`tresor unlock`) leaves that as it was.
    @Test func aPromptNobodyCouldAnswerIsExplainedByTresorStatus() throws {
        let locked = try providerWithItems()
        let provider = locked.provider
        #expect(try provider.lastPromptNobodyAnswered().json == nil, "nothing was dismissed yet")
        try provider.lock()
        let lookup = try provider.secretTool.run(["lookup", "tresor-e2e", "locking-tool"], revealing: [locked.tools])
        #expect(lookup.status == 1 && lookup.stdout.isEmpty, "nobody unlocked: secret-tool reads nothing")
        #expect(lookup.stderr.contains(SecretService.lockedWithNobodyToAsk), "secret-tool says why: \(lookup.stderr)")
        let (json, line) = try provider.lastPromptNobodyAnswered()
        let dismissed = try #require(json, "tresor status --json names no unanswered prompt")
        #expect(dismissed["executable"]?.string?.hasSuffix("/secret-tool") == true, "\(dismissed)")
        #expect(dismissed["waitedFor"] == .string("unlock"))
        let reason = dismissed["reason"]?.string ?? ""
        #expect(reason.contains("no desktop prompter") && reason.contains("`tresor unlock`"), "\(reason)")
        #expect(dismissed["at"]?.string?.hasSuffix("Z") == true, "an ISO 8601 date")
        #expect(line?.contains("secret-tool waited for the keybag unlocked and was told no: no desktop prompter") == true, "\(line ?? "no line")")
        let daemon = try provider.harness.tresor(["daemon", "status"]).stdout
        let daemonLine = daemon.split(separator: "\n").first { $0.hasPrefix("Unanswered:") }
        #expect(
            daemonLine?.contains("secret-tool waited for the keybag unlocked and was told no: no desktop prompter") == true,
            "tresor daemon status says it too: \(daemon)")

        try expectCompleted(try unlockThroughThePrompt(provider), dismissed: false)
        #expect(try provider.lastPromptNobodyAnswered().json == dismissed, "a prompt answered in time is not one nobody answered")
        try provider.harness.expectNoSecretLeaked()
    }

    /// Reading a secret is activity for auto-lock; searching and reading properties is not, so a
    /// program polling does not keep the keybag open.
    @Test func readingASecretKeepsTheKeybagOpenAndPollingDoesNot() throws {
        // Long next to one read or one poll on a loaded machine (CI runs the suites at once on
        // two cores); each phase below is timed from its own start, not from the test's.
        let idlePeriod: TimeInterval = 10
        let provider = try TresorProvider(configuration: #"{"autoLockSeconds": 10}"#)
        // Setting up (trusting the generic clients, each with the passcode) may outlast the idle
        // period: unlocking is activity, and starts it afresh.
        try provider.unlock()
        let secret = provider.marker("activity")
        let attributes: KeyValuePairs = ["tresor-e2e": "activity"]
        try provider.secretTool.store(label: "E2E activity", attributes, secret: secret)
        // Reads a second apart for longer than the idle period, counted from after the last
        // activity that was not a read: only the reads can keep the keybag open that long.
        let reading = Date()
        repeat {
            #expect(try provider.secretTool.lookup(attributes, expecting: secret) == secret, "each read inside the idle period is served")
            usleep(1_000_000)
        } while Date().timeIntervalSince(reading) < idlePeriod + 3
        let readFor = Int(Date().timeIntervalSince(reading))
        #expect(try provider.harness.status().keybag == .unlocked, "\(readFor) s of reads, \(Int(idlePeriod)) s of auto-lock: still unlocked")
        // Only searches and properties now: the keybag locks, the polling notwithstanding.
        let deadline = Date().addingTimeInterval(idlePeriod + 30)
        var lockedNow = false
        while Date() < deadline, !lockedNow {
            _ = try provider.python.raw(PropertiesAnswerLine.self, "properties")
            lockedNow = try provider.harness.status().keybag == .locked
            usleep(500_000)
        }
        #expect(lockedNow, "polling properties kept the keybag unlocked")
        try provider.harness.expectNoSecretLeaked()
    }

    /// Any line of `raw_dbus.py properties` (only that it answered matters here).
    struct PropertiesAnswerLine: Decodable {}

    /// A secret read on the Secret Service is what reset the auto-lock clock last, as both
    /// `tresor status` and `tresor daemon status` name it, beside the Secret Service's own line.
    @Test func aSecretReadIsTheLastActivityBothStatusesName() throws {
        let provider = try TresorProvider()
        let secret = provider.marker("last-activity")
        let attributes: KeyValuePairs = ["tresor-e2e": "last-activity"]
        try provider.secretTool.store(label: "E2E last activity", attributes, secret: secret)
        let stored = try provider.harness.status().lastActivity
        #expect(stored?.contains("read a secret") == false, "storing is no read: \(stored ?? "nil")")

        #expect(try provider.secretTool.lookup(attributes, expecting: secret) == secret)
        let read = "\(SecretTool.system.path) read a secret on the Secret Service"
        let status = try provider.harness.status()
        #expect(status.lastActivity == read, "\(status.lastActivity ?? "nil")")
        #expect(status.idleSeconds < 60)
        let text = try provider.harness.tresor(["status"]).stdout
        #expect(text.contains("; last activity: \(read))"), "\(text)")
        let daemon = try provider.harness.tresor(["daemon", "status"]).stdout
        #expect(daemon.contains("; last activity: \(read))"), "\(daemon)")
        #expect(daemon.contains("\nSecret Service: answering on the session bus"), "\(daemon)")
        let report = try provider.harness.tresor(["daemon", "status", "--json"]).stdout
        let tree = try JSONTree(parsing: Data(report.utf8))
        let check = try JSONSchemaCheck(file: CLIJSONSchemaTests.repository.appendingPathComponent("docs/cli-json.schema.json"))
        let violations = check.violations(of: tree, against: try #require(check.schema(forCommand: "daemon status")))
        #expect(violations.isEmpty, "\(violations)")
        #expect(tree["serving"]?["secretService"] == .string("answering on the session bus"), "\(report)")
        #expect(tree["lastActivity"] == .string(read), "\(report)")
        try provider.harness.expectNoSecretLeaked()
    }

    /// With `"secretServiceReadsAreActivity": false` in config.json, a secret read on the Secret
    /// Service leaves the auto-lock clock running: what reset it last stays what it was.
    @Test func withReadsNoActivityASecretReadLeavesTheAutoLockClockRunning() throws {
        let provider = try TresorProvider(configuration: #"{"secretServiceReadsAreActivity": false}"#)
        let secret = provider.marker("no-activity")
        let attributes: KeyValuePairs = ["tresor-e2e": "no-activity"]
        try provider.secretTool.store(label: "E2E no activity", attributes, secret: secret)
        let before = try provider.harness.status()
        #expect(before.lastActivity?.hasPrefix("a request of ") == true, "\(before.lastActivity ?? "nil")")
        usleep(2_500_000)

        #expect(try provider.secretTool.lookup(attributes, expecting: secret) == secret, "the read is served")
        let after = try provider.harness.status()
        #expect(after.lastActivity == before.lastActivity, "\(after.lastActivity ?? "nil")")
        #expect(after.idleSeconds >= 2, "the clock ran on through the read: idle \(after.idleSeconds) s")
        let daemon = try provider.harness.tresor(["daemon", "status"]).stdout
        #expect(!daemon.contains("read a secret on the Secret Service"), "\(daemon)")
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func aDismissedPromptCompletesWithDismissedTrue() throws {
        let locked = try providerWithItems()
        let provider = locked.provider
        try provider.lock()
        let answer = try provider.python.raw(PromptAnswer.self, "dismiss", [SecretService.login])
        #expect(answer.prompt != "/", "Unlock of a locked collection answered without a prompt")
        #expect(answer.dismiss?.failed == false, "Dismiss: \(String(describing: answer.dismiss?.error))")
        try expectCompleted(answer, dismissed: true)
        // Dismissing unlocked nothing.
        try expectLocked(provider, true)

        try provider.unlock()
        try expectLocked(provider, false)
        try expectReadable(locked)
        try provider.harness.expectNoSecretLeaked()
    }

    /// `Lock` over D-Bus locks the collection as `tresor lock` does; its `Unlock` prompt then
    /// completes after `tresor unlock` too.
    @Test func lockOverDBusThenUnlockThroughThePrompt() throws {
        let locked = try providerWithItems()
        let provider = locked.provider
        try expectLocked(provider, false)

        // Asked to lock nothing lockable — no object, or the session collection, which never
        // locks — it locks nothing and says so.
        for nothing in [[], [SecretService.session]] {
            let answer = try provider.python.raw(LockAnswer.self, "lock", nothing)
            #expect(answer.locked.isEmpty && answer.prompt == "/", "Lock(\(nothing)): \(answer)")
            try expectLocked(provider, false)
        }
        let lock = try provider.python.raw(LockAnswer.self, "lock", [SecretService.login])
        #expect(lock.locked.contains(SecretService.login) && lock.prompt == "/", "Lock: \(lock)")
        try expectLocked(provider, true)

        try expectCompleted(try unlockThroughThePrompt(provider), dismissed: false)
        try expectLocked(provider, false)
        try expectReadable(locked)
        try provider.harness.expectNoSecretLeaked()
    }

    /// As gnome-keyring answers: `Lock` and `Unlock` leave out an object that does not exist — an
    /// item nobody stored, a collection or a prompt that is not there — rather than report it
    /// locked or unlocked, and an unlocked keybag stays unlocked.
    @Test func objectsThatDoNotExistAreLeftOutOfLockAndUnlock() throws {
        let locked = try providerWithItems()
        let provider = locked.provider
        let unknown = [
            SecretService.login + "/tresor_e2e_no_such_item", "/org/freedesktop/secrets/collection/tresor_e2e_none",
            "/org/freedesktop/secrets/collection/tresor_e2e_none/item", "/org/freedesktop/secrets/prompt/tresor_e2e_none",
            "/org/freedesktop/secrets/session/tresor_e2e_none", "/org/freedesktop/secrets",
        ]
        for path in unknown {
            let unlock = try provider.python.raw(PromptLine.self, "unlock-prompt", [path])
            #expect(unlock.unlocked == [] && unlock.prompt == "/", "Unlock(\(path)): \(unlock)")
            let lock = try provider.python.raw(LockAnswer.self, "lock", [path])
            #expect(lock.locked.isEmpty && lock.prompt == "/", "Lock(\(path)): \(lock)")
            try expectLocked(provider, false)
        }
        // Named with an object that exists, the unknown one is still left out of the answer.
        let lock = try provider.python.raw(LockAnswer.self, "lock", [unknown[0], SecretService.login])
        #expect(lock.locked == [SecretService.login], "Lock: \(lock)")
        try expectLocked(provider, true)
    }
}

/// What the specification lets clients do that a Secret Service must answer as gnome-keyring
/// does: rename a collection, and read every property of an item they found locked.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled,
        "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceSpecTests {
    @Test func aCollectionsLabelIsWritableAndKeptAcrossRestarts() throws {
        let provider = try TresorProvider()
        #expect(try provider.harness.status().serving?.secretService == "answering on the session bus", "tresor status says so")
        let python = provider.python
        #expect(try python.secretstorage(.dh, "label", []).stdout == "Login\n")
        let renamed = try python.secretstorage(.dh, "rename", [], secret: "Passwords ✓")
        #expect(renamed.succeeded, "\(renamed.stderr)")
        #expect(renamed.stdout == "Passwords ✓\n")
        try provider.restart()
        #expect(try python.secretstorage(.dh, "label", []).stdout == "Passwords ✓\n", "the name survives a restart")

        // A label past the limit is refused and changes nothing.
        let tooLong = try python.secretstorage(.dh, "rename", [], secret: String(repeating: "x", count: 5_000))
        #expect(!tooLong.succeeded)
        #expect(try python.secretstorage(.dh, "label", []).stdout == "Passwords ✓\n")
        // The session collection has a name of its own.
        #expect(try python.secretstorage(.dh, "label", [], collection: "/org/freedesktop/secrets/collection/session").stdout == "Session\n")
    }

    /// libsecret reads Label, Attributes, Created and Modified of every item a search finds; a
    /// locked item answering only `Locked` made `secret-tool search` print eight CRITICAL
    /// assertions. Its label and attributes stay sealed: they are answered empty.
    @Test func aSearchWhileLockedGivesLibsecretEveryPropertyAndNoSecret() throws {
        let provider = try TresorProvider()
        let secret = provider.marker("spec-locked")
        // A label is metadata, not a secret: secret-tool takes it on its command line.
        let label = "E2E spec \(UUID().uuidString.prefix(8))"
        try provider.secretTool.store(label: label, ["tresor-e2e": "spec-locked"], secret: secret)
        try provider.lock()
        let found = try provider.secretTool.run(["search", "--all", "tresor-e2e", "spec-locked"])
        #expect(!found.stderr.contains("CRITICAL"), "libsecret complained: \(found.stderr)")
        #expect(found.stdout.contains("[/"), "the locked item is listed: \(found.stdout)")
        #expect(!found.stdout.contains(secret) && !found.stderr.contains(secret))
        #expect(!found.stdout.contains(label) && !found.stderr.contains(label), "a locked item's label stays sealed")
        #expect(!found.stderr.contains("attribute.tresor-e2e"), "a locked item's attributes stay sealed")
    }
}

extension TresorProvider {
    /// The last prompt dismissed because nobody could be asked, as `tresor status --json` shows it
    /// (its output checked against docs/cli-json.schema.json), and `tresor status`'s line about it.
    func lastPromptNobodyAnswered(sourceLocation: SourceLocation = #_sourceLocation) throws -> (json: JSONTree?, line: String?) {
        let json = try harness.tresor(["status", "--json"])
        try #require(json.succeeded, "\(json.stderr)", sourceLocation: sourceLocation)
        let tree = try JSONTree(parsing: Data(json.stdout.utf8))
        let check = try JSONSchemaCheck(file: CLIJSONSchemaTests.repository.appendingPathComponent("docs/cli-json.schema.json"))
        let violations = check.violations(of: tree, against: try #require(check.schema(forCommand: "status")))
        #expect(violations.isEmpty, "\(violations)", sourceLocation: sourceLocation)
        let text = try harness.tresor(["status"])
        let line = text.stdout.split(separator: "\n").first { $0.hasPrefix("Unanswered:") }.map(String.init)
        return (tree["serving"]?["lastPromptNobodyAnswered"], line)
    }
}
