import Foundation
import Testing
import TresorTestSupport

/// Generic clients — interpreters, secret-tool, git's credential helper — that any process of the
/// user can run with arguments of its choosing (docs/SECURITY.md, "Generic clients"): their
/// secrets are read only with the user's approval, or while the user trusts them. Everything runs
/// as an unprivileged user, as a desktop session does: the bus, `tresord` and every client. Before
/// this policy, any process reading secret-tool's item with `secret-tool lookup` got it silently.
@Suite(
    .blocksItsThread,
    .serialized,
    .enabled(
        if: SecretService.toolsInstalled && TestUser.available,
        "needs root (to run everything as another user), setpriv, dbus-daemon, secret-tool and Python keyring")
)
struct SecretServiceGenericClientTests {
    static let toolItem: KeyValuePairs = ["tresor-e2e": "generic", "user": "ada"]

    /// A provider run as the test user (`user`) or as root, trusting no generic client, with an item
    /// secret-tool stored — storing is no read: it needs no approval.
    func providerWithToolItem(asTestUser: Bool = true) throws -> (TresorProvider, secret: String) {
        let provider = try TresorProvider(user: asTestUser ? try TestUser.shared.get() : nil, trustsGenericClients: false)
        let secret = provider.marker("generic")
        try provider.secretTool.store(label: "E2E generic", Self.toolItem, secret: secret)
        return (provider, secret)
    }

    /// Any program of the user runs the genuine secret-tool: a shell, here. Returns what it printed.
    func lookupByAnyProcess(_ provider: TresorProvider, revealing secret: String) throws -> String? {
        let found = try provider.harness.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "exec /usr/bin/secret-tool lookup tresor-e2e generic user ada"],
            timeout: clientTimeout, revealing: [secret])
        return found.succeeded ? found.stdout : nil
    }

    /// `tresor secret-service trust --json`.
    func trustList(_ provider: TresorProvider) throws -> TrustList {
        let listed = try provider.harness.tresor(["secret-service", "trust", "--json"])
        try #require(listed.succeeded, "\(listed.stderr)")
        return try JSONDecoder().decode(TrustList.self, from: Data(listed.stdout.utf8))
    }

    struct TrustList: Decodable {
        struct Entry: Decodable {
            var executable: String
            var origin: String
            var parentChain: [String]
            var until: String?
            var path: String?
        }

        var trusted: [Entry]
    }

    /// Nobody to ask: secret-tool gets nothing, and prints why — the `Prompt` call's error. A
    /// replacement is refused the same way and says so: libsecret would take a dismissed one for
    /// stored, and `secret-tool store` exited 0 having stored nothing.
    @Test func anyProcessRunningSecretToolIsRefusedWithNobodyToAsk() throws {
        let (provider, secret) = try providerWithToolItem()
        let lookup = try provider.harness.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "exec /usr/bin/secret-tool lookup tresor-e2e generic user ada"],
            timeout: clientTimeout, revealing: [secret])
        #expect(!lookup.succeeded && !lookup.stdout.contains(secret), "nobody approved: nothing is read")
        #expect(lookup.stderr.contains(SecretService.nobodyToAsk), "secret-tool says why: \(lookup.stderr)")
        #expect(provider.harness.daemonLog.contains("asks for an item that needs you"), "the daemon says what waited")
        let replacing = try provider.secretTool.run(
            ["store", "--label=E2E generic", "tresor-e2e", "generic", "user", "ada"], input: "e2e-not-stored")
        #expect(!replacing.succeeded && replacing.stderr.contains(SecretService.nobodyToAsk), "\(replacing.status): \(replacing.stderr)")
        // `tresor status` says why the client got nothing.
        let dismissed = try #require(try provider.lastPromptNobodyAnswered().json, "tresor status --json names no unanswered prompt")
        #expect(dismissed["waitedFor"] == .string("approval") && dismissed["executable"]?.string?.hasSuffix("/secret-tool") == true, "\(dismissed)")
        #expect(dismissed["reason"]?.string?.contains("no `tresor approve` waited") == true, "\(dismissed)")
        let executable = dismissed["executable"]?.string ?? "?"
        #expect(
            dismissed["reason"]?.string?.contains("`tresor secret-service trust add \(executable)`") == true, "says how to trust it: \(dismissed)")
        // The item is there, locked for the client, its secret withheld.
        let found = try provider.secretTool.search(Self.toolItem)
        #expect(found.labels == ["E2E generic"] && found.secrets.isEmpty, "\(found.labels) \(found.secrets.count)")
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func anyPythonScriptIsRefusedPythonKeyringsItems() throws {
        let provider = try TresorProvider(user: try TestUser.shared.get(), trustsGenericClients: false)
        let password = provider.marker("keyring")
        #expect(try provider.python.keyring("set", service: "generic.example", user: "ada", password: password).succeeded)
        let read = try provider.python.keyring("get", service: "generic.example", user: "ada", expecting: password)
        #expect(!read.stdout.contains(password), "a Python script read keyring's item without the user: \(read.status)")
        try provider.harness.expectNoSecretLeaked()
    }

    /// `git credential fill` with the user's helper configured, run by any process with the
    /// fields of its choosing: git's helper gets nothing with nobody to ask — and the same
    /// process's `git credential approve`, a store that would replace the helper's item, changes
    /// nothing either. Before changes were asked, it replaced the item with what it stored.
    @Test func anyProcessRunningGitsHelperIsRefusedWithNobodyToAskAndItsStoreReplacesNothing() throws {
        let provider = try TresorProvider(user: try TestUser.shared.get(), trustsGenericClients: false)
        let helper = try GitCredentialHelper(harness: provider.harness)
        let (password, attackers) = (provider.marker("generic-git"), provider.marker("generic-git-attacker"))
        let fields = "protocol=https\nhost=git.example\nusername=ada\n"
        _ = try helper.run("store", ["protocol": "https", "host": "git.example", "username": "ada", "password": password], revealing: [password])
        func git(_ operation: String, input: String) throws -> Harness.Result {
            try provider.harness.run(
                URL(fileURLWithPath: "/usr/bin/git"), ["-c", "credential.helper=\(helper.executable.path)", "credential", operation], input: input,
                environment: provider.harness.environment.merging(["GIT_TERMINAL_PROMPT": "0"]) { $1 }, timeout: clientTimeout,
                revealing: [password])
        }

        let filled = try git("fill", input: fields + "\n")
        #expect(!filled.succeeded && !filled.stdout.contains(password), "git credential fill read the helper's item without the user")
        #expect(provider.harness.daemonLog.contains("asks for an item that needs you"), "the daemon says what waited")

        _ = try git("approve", input: fields + "password=\(attackers)\n\n")
        try provider.trust([helper.executable])
        let now = try helper.run("get", ["protocol": "https", "host": "git.example", "username": "ada"], revealing: [password])
        #expect(now["password"] == password, "another process replaced the helper's item without the user")
        try provider.harness.expectNoSecretLeaked()
    }

    /// A Python script — the same program as Python keyring, to the daemon — tries every change
    /// to keyring's item, locked for it: `SetSecret` and the properties are refused as a locked
    /// item's, and `CreateItem` with `replace` and `Delete` return prompts that nobody can
    /// answer, so their `Prompt` calls fail saying so. The item is as keyring left it. Before, each
    /// change was made.
    /// Items beside it with the same attributes (`CreateItem` without `replace`) need nobody —
    /// nothing is read or lost — and do not shadow it: keyring still reads its own, which a search
    /// lists first (before, in the order of a blind index: one of the eight, by chance).
    /// Python's keyring is told no as it understands it: with nobody to ask, its read ends in
    /// `KeyringLocked`, the error applications catch — not in an error of jeepney's answering
    /// the `Prompt` call, which only libsecret's clients are given (they print it).
    @Test func pythonKeyringIsToldLockedWithNobodyToAsk() throws {
        let provider = try TresorProvider(user: try TestUser.shared.get(), trustsGenericClients: false)
        let password = provider.marker("keyring-locked")
        #expect(try provider.python.keyring("set", service: "locked.example", user: "ada", password: password).succeeded)
        let read = try provider.python.keyring("get", service: "locked.example", user: "ada", expecting: password)
        #expect(read.status == 3, "keyring raised no KeyringLocked (\(read.status)): \(read.stderr.suffix(600))")
        #expect(!read.stdout.contains(password))
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func aPythonScriptChangesNothingOfKeyringsItemWithNobodyToAsk() throws {
        let provider = try TresorProvider(user: try TestUser.shared.get(), trustsGenericClients: false)
        let password = provider.marker("keyring-unchanged")
        #expect(try provider.python.keyring("set", service: "generic.example", user: "ada", password: password).succeeded, "a new item needs nobody")

        let tried = try provider.python.raw(
            ChangeLockedAnswer.self, "change-locked", ["service=generic.example", "username=ada"], asLibsecretClient: true)
        #expect(tried.locked == 1, "keyring's item is listed locked for a script nobody trusts")
        for (path, item) in tried.items {
            #expect(item.setSecret.error == "org.freedesktop.Secret.Error.IsLocked", "\(path): SetSecret \(item.setSecret)")
            #expect(item.setLabel.error == "org.freedesktop.Secret.Error.IsLocked", "\(path): Label \(item.setLabel)")
            #expect(item.setAttributes.error == "org.freedesktop.Secret.Error.IsLocked", "\(path): Attributes \(item.setAttributes)")
            #expect(item.createItem.promptRefusedWithNobodyToAsk, "\(path): a replacing CreateItem was not put to the user: \(item.createItem)")
            #expect(item.delete.promptRefusedWithNobodyToAsk, "\(path): Delete was not put to the user: \(item.delete)")
            #expect(item.createBeside.ok.map { $0.count == 7 && !$0.contains(path) } == true, "\(path): no items beside: \(item.createBeside)")
        }
        let dismissed = try #require(try provider.lastPromptNobodyAnswered().json, "tresor status --json names no unanswered prompt")
        #expect(dismissed["waitedFor"] == .string("approval") && dismissed["access"] == .string("delete"), "the last one, the deletion: \(dismissed)")

        try provider.trust([PythonClients.python])
        let read = try provider.python.keyring("get", service: "generic.example", user: "ada", expecting: password)
        #expect(read.stdout == password, "keyring's item was changed or deleted without the user: \(read.status)")
        // keyring's replacement changes the item its lookups read, not one planted beside it.
        let newer = provider.marker("keyring-replaced")
        #expect(try provider.python.keyring("set", service: "generic.example", user: "ada", password: newer).succeeded)
        #expect(try provider.python.keyring("get", service: "generic.example", user: "ada", expecting: newer).stdout == newer)
        try provider.harness.expectNoSecretLeaked()
    }

    /// The user allows a replacement and a deletion in `tresor approve`, told which each is:
    /// the change is made once allowed. The approver runs as the harness's own user, so this
    /// provider runs as root, as ``anApprovalServesOneReadThenTheClientIsAskedAgain`` does.
    @Test func aChangeTheUserAllowsIsMadeAndTheUserIsToldWhatItIs() throws {
        let (provider, _) = try providerWithToolItem(asTestUser: false)
        let replacement = provider.marker("generic-replaced")
        var stored: Harness.Result?
        let replacing = try provider.harness.approving(answer: provider.passcode) {
            // Tried again until the approver waits: before, nobody is there to ask, and it fails.
            stored = try provider.secretTool.run(["store", "--label=E2E generic again", "tresor-e2e", "generic", "user", "ada"], input: replacement)
            return stored?.succeeded == true
        }
        #expect(stored?.succeeded == true, "\(stored?.stderr ?? "")")
        #expect(replacing.stdout.contains("asks to replace the secret of") && replacing.stdout.contains("E2E generic"), "\(replacing.stdout)")
        #expect(replacing.stdout.contains("Allowed."), "\(replacing.stdout)")

        let password = provider.marker("keyring-deleted")
        #expect(try provider.python.keyring("set", service: "generic.example", user: "ada", password: password).succeeded)
        var deleted: [String: PromptedCall] = [:]
        let deleting = try provider.harness.approving(answer: provider.passcode) {
            // Tried again until the approver waits: before, nobody is there to ask.
            deleted = try provider.python.raw(
                [String: PromptedCall].self, "delete", ["service=generic.example", "username=ada"], asLibsecretClient: true)
            return deleted.values.contains { $0.completed?.dismissed == false }
        }
        #expect(deleted.count == 1 && deleted.values.allSatisfy { $0.completed?.dismissed == false }, "\(deleted)")
        #expect(deleting.stdout.contains("asks to delete"), "\(deleting.stdout)")

        try provider.trust([SecretTool.system, PythonClients.python])
        #expect(try provider.secretTool.lookup(Self.toolItem, expecting: replacement) == replacement, "the allowed replacement was not made")
        #expect(try provider.secretTool.search(Self.toolItem, expecting: [replacement]).labels == ["E2E generic again"], "one item, relabelled")
        #expect(!(try provider.python.keyring("get", service: "generic.example", user: "ada")).succeeded, "the allowed deletion was not made")
        try provider.harness.expectNoSecretLeaked()
    }

    /// The user refuses a replacement and a deletion in `tresor approve`: nothing changes, and the
    /// clients are told so by their `Prompt` call's error — a dismissed replacement would be
    /// reported as stored by libsecret, and `secret-tool store` exited 0 having stored nothing.
    @Test func aChangeTheUserRefusesFailsSayingSo() throws {
        let (provider, secret) = try providerWithToolItem(asTestUser: false)
        var stored: Harness.Result?
        let replacing = try provider.harness.approving(answer: "") {
            // Tried again until the approver waits: before, nobody is there to ask.
            stored = try provider.secretTool.run(
                ["store", "--label=E2E refused", "tresor-e2e", "generic", "user", "ada"], input: "e2e-refused-replacement")
            return stored?.stderr.contains(SecretService.nobodyToAsk) == false
        }
        #expect(replacing.stdout.contains("asks to replace the secret of") && replacing.stdout.contains("Refused."), "\(replacing.stdout)")
        #expect(stored?.succeeded == false, "secret-tool store said stored")
        #expect(
            stored?.stderr.contains("you refused to let this program replace the item's secret: nothing was stored") == true,
            "\(stored?.stderr ?? "")")

        let password = provider.marker("keyring-kept")
        #expect(try provider.python.keyring("set", service: "generic.example", user: "ada", password: password).succeeded)
        var deleted: [String: PromptedCall] = [:]
        let deleting = try provider.harness.approving(answer: "") {
            deleted = try provider.python.raw(
                [String: PromptedCall].self, "delete", ["service=generic.example", "username=ada"], asLibsecretClient: true)
            return deleted.values.contains { $0.completed?.message?.contains(SecretService.nobodyToAsk) == false }
        }
        #expect(deleting.stdout.contains("asks to delete") && deleting.stdout.contains("Refused."), "\(deleting.stdout)")
        #expect(
            deleted.count == 1
                && deleted.values.allSatisfy {
                    $0.completed?.promptError == "org.freedesktop.DBus.Error.AccessDenied"
                        && $0.completed?.message?.contains("you refused to let this program delete the item") == true
                }, "\(deleted)")

        try provider.trust([SecretTool.system, PythonClients.python])
        #expect(try provider.secretTool.lookup(Self.toolItem, expecting: secret) == secret, "a refused replacement was made")
        #expect(try provider.secretTool.search(Self.toolItem, expecting: [secret]).labels == ["E2E generic"], "one item, its label kept")
        #expect(
            try provider.python.keyring("get", service: "generic.example", user: "ada", expecting: password).stdout == password,
            "a refused deletion was made")
        try provider.harness.expectNoSecretLeaked()
    }

    /// The user allows one read in `tresor approve`: that read is served, the next is asked again.
    /// The approver runs as the harness's own user, so this provider runs as root (secret-tool known
    /// by its hash there, a generic client all the same).
    @Test func anApprovalServesOneReadThenTheClientIsAskedAgain() throws {
        let (provider, secret) = try providerWithToolItem(asTestUser: false)
        var found: String?
        let approver = try provider.harness.approving(answer: provider.passcode) {
            found = try provider.secretTool.lookup(Self.toolItem, expecting: secret)
            return found != nil
        }
        #expect(found == secret, "secret-tool got the secret once the user allowed it")
        #expect(
            approver.stdout.contains("secret-tool") && approver.stdout.contains("E2E generic"), "the user sees who asks for what: \(approver.stdout)")
        #expect(approver.stdout.contains("Allowed."), "\(approver.stdout)")
        #expect(try provider.secretTool.lookup(Self.toolItem) == nil, "one approval, one read")
        try provider.harness.expectNoSecretLeaked()
    }

    /// A generic client that waits on the locked keybag is asked about once the keybag is
    /// unlocked, and served when the user allows it: the unlock prompt says unlocked only what
    /// the client can then read. Before, it completed saying the item unlocked, and secret-tool
    /// got nothing from `GetSecrets`: the unlock was typed for nothing.
    @Test func aGenericClientWaitingOnTheLockedKeybagIsAskedOnceItIsUnlockedThenServed() throws {
        let (provider, secret) = try providerWithToolItem(asTestUser: false)
        #expect(try provider.harness.tresor(["lock"]).succeeded)
        let tresor = Harness.binaries.appendingPathComponent("tresor").path
        var found: Harness.Result?
        let approver = try provider.harness.approving(answer: provider.passcode) {
            // The user unlocks in a terminal a second after the lookup began; the passcode on
            // the subshell's standard input, never an argument.
            found = try provider.harness.run(
                URL(fileURLWithPath: "/bin/sh"),
                [
                    "-c",
                    "exec 3<&0; (sleep 1; \(tresor) unlock --passcode-stdin <&3 > /dev/null) & exec /usr/bin/secret-tool lookup tresor-e2e generic user ada < /dev/null 3<&-",
                ],
                input: provider.passcode + "\n", timeout: clientTimeout, revealing: [secret])
            return true
        }
        #expect(found?.succeeded == true && found?.stdout == secret, "secret-tool got the secret: \(found?.stderr ?? "")")
        #expect(approver.stdout.contains("E2E generic") && approver.stdout.contains("Allowed."), "\(approver.stdout)")
        try provider.harness.expectNoSecretLeaked()
    }

    @Test func trustGrantedAheadOfTimeServesSilentlyUntilTakenBack() throws {
        let (provider, secret) = try providerWithToolItem()
        #expect(try trustList(provider).trusted.isEmpty)
        // A wrong passcode trusts nothing; a program that is not a generic client is refused.
        let add = ["secret-service", "trust", "add"], passcode = provider.passcode + "\n"
        let wrong = try provider.harness.tresor(add + ["/usr/bin/secret-tool", "--passcode-stdin"], input: "e2e-not-it\n")
        #expect(!wrong.succeeded)
        let notGeneric = try provider.harness.tresor(add + ["/usr/bin/secret-tool", "/usr/bin/sha256sum", "--passcode-stdin"], input: passcode)
        #expect(!notGeneric.succeeded && notGeneric.stderr.contains("not a generic client"), "\(notGeneric.stderr)")
        let badDuration = try provider.harness.tresor(add + ["/usr/bin/secret-tool", "--for", "soon", "--passcode-stdin"], input: passcode)
        #expect(!badDuration.succeeded && badDuration.stderr.contains("--for"), "\(badDuration.stderr)")
        // A bare number has no unit to guess: 3 meant as hours would end in 3 seconds.
        let bare = try provider.harness.tresor(add + ["/usr/bin/secret-tool", "--for", "3", "--passcode-stdin"], input: passcode)
        #expect(!bare.succeeded && bare.stderr.contains("with its unit"), "\(bare.stderr)")
        #expect(try trustList(provider).trusted.isEmpty, "nothing was trusted by the refusals")

        // A bare name is found on PATH, as a shell runs it.
        let added = try provider.harness.tresor(add + ["secret-tool", "--for", "1h", "--passcode-stdin"], input: passcode)
        #expect(added.succeeded, "\(added.stderr)")
        let list = try trustList(provider)
        #expect(list.trusted.count == 1)
        #expect(list.trusted.first?.executable == "exe:/usr/bin/secret-tool" && list.trusted.first?.origin == "granted", "shown as granted: \(list)")
        #expect(list.trusted.first?.path == "/usr/bin/secret-tool", "\(list)")
        #expect(list.trusted.first?.until?.hasSuffix("Z") == true)
        let text = try provider.harness.tresor(["secret-service", "trust"])
        #expect(text.stdout.contains("granted ahead of time"), "\(text.stdout)")

        #expect(try lookupByAnyProcess(provider, revealing: secret) == secret, "trusted: served without asking")
        #expect(!provider.harness.daemonLog.contains("asks for an item that needs you"), "nobody was asked")

        // Taken back by its entry as listed, which needs no file (it may be gone or rebuilt).
        let removed = try provider.harness.tresor(["secret-service", "trust", "remove", "exe:/usr/bin/secret-tool"])
        #expect(removed.succeeded, "\(removed.stderr)")
        #expect(try trustList(provider).trusted.isEmpty)
        #expect(try lookupByAnyProcess(provider, revealing: secret) == nil, "taken back: asked again, and nobody answers")
        let again = try provider.harness.tresor(["secret-service", "trust", "remove", "/usr/bin/secret-tool"])
        #expect(!again.succeeded && again.stderr.contains("not trusted"), "\(again.stderr)")
        // An entry as listed that is no longer there is said to be untrusted; no file is looked for.
        let listedAgain = try provider.harness.tresor(["secret-service", "trust", "remove", "exe:/usr/bin/python3.11"])
        #expect(!listedAgain.succeeded && listedAgain.stderr.contains("exe:/usr/bin/python3.11 is not trusted"), "\(listedAgain.stderr)")
        try provider.harness.expectNoSecretLeaked()
    }

    /// A program installed by the system that is not a generic client keeps silent access to its
    /// own items: its group is its own.
    @Test func aRootInstalledProgramThatIsNotAGenericClientIsNotAsked() throws {
        let provider = try TresorProvider(user: try TestUser.shared.get(), trustsGenericClients: false)
        let folder = URL(fileURLWithPath: "/usr/local/lib/tresor-e2e-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let keeper = provider.secretTool.running(try SecretTool.copy(into: folder, name: "keeper"))
        let secret = provider.marker("keeper")
        let attributes: KeyValuePairs = ["tresor-e2e": "keeper"]
        try keeper.store(label: "E2E keeper", attributes, secret: secret)
        #expect(try keeper.lookup(attributes, expecting: secret) == secret)
        #expect(!provider.harness.daemonLog.contains("asks for an item that needs you"), "nobody was asked")
        try provider.harness.expectNoSecretLeaked()
    }

    /// The user adds a program to the table in config.json: the same root-installed program's
    /// reads are asked then.
    @Test func aProgramTheUserAddsInTheConfigurationIsAGenericClient() throws {
        let provider = try TresorProvider(
            configuration: #"{"secretServiceGenericClients": ["keeper"]}"#, user: try TestUser.shared.get(), trustsGenericClients: false)
        let folder = URL(fileURLWithPath: "/usr/local/lib/tresor-e2e-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let keeper = provider.secretTool.running(try SecretTool.copy(into: folder, name: "keeper"))
        let secret = provider.marker("keeper-listed")
        let attributes: KeyValuePairs = ["tresor-e2e": "keeper-listed"]
        try keeper.store(label: "E2E keeper listed", attributes, secret: secret)
        #expect(try keeper.lookup(attributes) == nil, "a generic client by the user's table: asked, and nobody answers")
        #expect(provider.harness.daemonLog.contains("asks for an item that needs you"))
        try provider.harness.expectNoSecretLeaked()
    }

    /// "For this session" remembers secret-tool under its parent chain: the same program under the
    /// same ancestors reads silently — which an attacker of the same user can rebuild — and that is
    /// all: not under other ancestors, not another generic client, not an item of the same program
    /// that needs the user each time, not after the trust is taken back.
    @Test func aRememberedApprovalServesTheSameProgramUnderTheSameParentsAndNothingMore() throws {
        let (provider, secret) = try providerWithToolItem(asTestUser: false)
        let password = provider.marker("remembered-python")
        #expect(try provider.python.keyring("set", service: "remembered.example", user: "ada", password: password).succeeded)
        // An item of secret-tool's own group that the user marked userPresence.
        let presenceItem: KeyValuePairs = ["tresor-e2e": "generic-presence"], presenceSecret = provider.marker("remembered-presence")
        try provider.secretTool.store(label: "E2E generic presence", presenceItem, secret: presenceSecret)
        let marked = try provider.harness.tresor(
            ["item", "update", "--attribute", "tresor-e2e=generic-presence", "--set", "accessControl=userPresence", "--passcode-stdin"],
            input: provider.passcode + "\n")
        try #require(marked.succeeded, "\(marked.stderr)")
        var found: String?
        let approver = try provider.harness.approving(answer: provider.passcode, arguments: ["--for-session", "1h"]) {
            found = try provider.secretTool.lookup(Self.toolItem, expecting: secret)
            return found != nil
        }
        #expect(found == secret, "\(approver.stdout) \(approver.stderr)")
        let list = try trustList(provider)
        #expect(list.trusted.count == 1 && list.trusted.first?.origin == "approved", "shown as approved: \(list)")
        #expect(list.trusted.first?.parentChain.isEmpty == false, "with the chain it holds under")

        // The same program under the same parents (this test process): served, nobody asked.
        #expect(try provider.secretTool.lookup(Self.toolItem, expecting: secret) == secret)
        // Under another parent (a shell that stays between), it is asked again; nobody answers.
        let underAShell = try provider.harness.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "/usr/bin/secret-tool lookup tresor-e2e generic user ada; true"],
            timeout: clientTimeout, revealing: [secret])
        #expect(!underAShell.stdout.contains(secret), "another chain read the remembered program's item")
        // Another generic client under the same parents gets nothing of it.
        let python = try provider.python.keyring("get", service: "remembered.example", user: "ada", expecting: password)
        #expect(!python.stdout.contains(password), "python3 was served under secret-tool's remembered approval")
        // The same program under the same parents, for its own item that needs the user: asked each
        // time, and nobody answers.
        func questions() -> Int { provider.harness.daemonLog.components(separatedBy: "asks for an item that needs you").count }
        let asked = questions()
        let read = try provider.secretTool.lookup(presenceItem, expecting: presenceSecret)
        #expect(read == nil, "a userPresence item was read under the remembered approval")
        #expect(questions() > asked, "the read was not put to the user")
        #expect(try provider.secretTool.lookup(Self.toolItem, expecting: secret) == secret, "the remembered item is still served")

        #expect(try provider.harness.tresor(["secret-service", "trust", "remove", "--all"]).succeeded)
        #expect(try provider.secretTool.lookup(Self.toolItem) == nil, "taken back: asked again")
        try provider.harness.expectNoSecretLeaked()
    }
}
