import Foundation
import Testing
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A program waiting on a locked keybag is answered through the desktop's own prompter: Debian's
/// `gcr-prompter` on a display without a screen (Xvfb), the passcode typed with `xdotool`
/// (docs/SECRET-SERVICE.md, "Asking on the desktop").
@Suite(
    .blocksItsThread,
    .serialized,
    .enabled(
        if: SecretService.toolsInstalled && DesktopSession.canRun,
        "needs Xvfb, xdotool, ImageMagick's import and gcr-prompter (scripts/test installs them)")
)
struct SecretServiceDesktopPromptTests {
    /// tresord on the desktop's bus, with an item of secret-tool's, the keybag locked.
    func lockedProvider(_ desktop: DesktopSession, configuration: String? = nil) throws -> (Harness, passcode: String, secret: String) {
        let harness = try Harness(configuration: configuration, environment: ["DBUS_SESSION_BUS_ADDRESS": desktop.busAddress])
        let passcode = "e2e-desktop-passcode-\(UUID().uuidString.prefix(6))"
        harness.secrets = [passcode]
        try harness.startDaemon(extraArguments: ["--secret-service"])
        try waitUntil("tresord to own org.freedesktop.secrets") { harness.daemonLog.contains("Secret Service answering") }
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        // secret-tool is a generic client: trusted, so that what waits here is the keybag alone.
        let trusted = try harness.tresor(["secret-service", "trust", "add", SecretTool.system.path, "--passcode-stdin"], input: passcode + "\n")
        #expect(trusted.succeeded, "\(trusted.stderr)")
        let secret = "e2e-desktop-secret-\(UUID().uuidString.prefix(6))"
        let tool = SecretTool(harness: harness)
        try tool.store(label: "E2E desktop", ["tresor-e2e": "desktop"], secret: secret)
        #expect(try harness.tresor(["lock"]).succeeded)
        return (harness, passcode, secret)
    }

    @Test func theDesktopsPrompterUnlocksForAWaitingSecretToolLookup() throws {
        let desktop = try DesktopSession()
        let (harness, passcode, secret) = try lockedProvider(desktop)
        // secret-tool lookup on a locked keybag: it calls Unlock, then Prompt, and waits.
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Unlock Tresor")
        let screenshot = try desktop.screenshot("secret-service-unlock-prompt")
        #expect(FileManager.default.fileExists(atPath: screenshot.path))
        try desktop.xdotool("type", "--delay", "20", passcode)
        try desktop.xdotool("key", "Return")
        let result = try lookup.finish(timeout: 30)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout == secret)
        let status = try harness.status()
        #expect(status.keybag == .unlocked)
        #expect(status.unlockedBy == "the passcode in the desktop's prompter, for \(SecretTool.system.path)")
        #expect(harness.daemonLog.contains("the passcode was given in the desktop's prompter"))
        try harness.expectNoSecretLeaked()
    }

    @Test func cancelInThePrompterTellsTheClientAtOnceAndAWrongPasscodeAsksAgain() throws {
        let desktop = try DesktopSession()
        let (harness, _, _) = try lockedProvider(desktop)
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Unlock Tresor")
        try desktop.xdotool("type", "--delay", "20", "e2e-not-the-passcode")
        try desktop.xdotool("key", "Return")
        // Asked again, saying the passcode was wrong; then Cancel (Escape).
        usleep(1_000_000)
        try desktop.waitForWindow("Unlock Tresor")
        try desktop.xdotool("key", "Escape")
        let started = Date()
        let result = try lookup.finish(timeout: 30)
        #expect(Date().timeIntervalSince(started) < 10, "the client learns of the refusal without waiting out a timeout")
        #expect(result.stdout.isEmpty, "nothing read: \(result.stdout)")
        #expect(try harness.status().keybag == .locked)
        #expect(harness.daemonLog.contains("a wrong passcode in the desktop's prompter"))
        try harness.expectNoSecretLeaked()
    }
}

extension SecretServiceDesktopPromptTests {
    /// A wrong passcode typed each time the prompter asks: the program is told why rather than
    /// dismissed (which secret-tool would show as "not found"), and `tresor status` says it.
    @Test func wrongPasscodesInThePrompterTellTheProgramWhy() throws {
        let desktop = try DesktopSession()
        let (harness, _, _) = try lockedProvider(desktop)
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        for attempt in 1...3 {
            if attempt > 1 { usleep(1_000_000) }
            try desktop.waitForWindow("Unlock Tresor")
            try desktop.xdotool("type", "--delay", "20", "e2e-not-the-passcode-\(attempt)")
            try desktop.xdotool("key", "Return")
        }
        let result = try lookup.finish(timeout: 30)
        #expect(!result.succeeded && result.stdout.isEmpty, "nothing read: \(result.stdout)")
        #expect(result.stderr.contains("Tresor is locked: the passcode typed in the desktop's prompter was wrong each time"), "\(result.stderr)")
        let status = try harness.tresor(["status"])
        #expect(status.stdout.contains("Unanswered:") && status.stdout.contains("was wrong each time"), "\(status.stdout)")
        #expect(status.stdout.contains("Keybag:     locked"), "\(status.stdout)")
        try harness.expectNoSecretLeaked()
    }

    /// Whether a visible window named `title` shows now.
    func windowShows(_ desktop: DesktopSession, _ title: String) -> Bool {
        !((try? desktop.run("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", title])) ?? "").isEmpty
    }

    /// Three programs waiting on the locked keybag at once (git, a browser and secret-tool after a
    /// login): the user is asked once, and the passcode typed there lets all three go on.
    @Test func programsWaitingTogetherAreAskedOnceAndAllGoOn() throws {
        let desktop = try DesktopSession()
        let (harness, passcode, secret) = try lockedProvider(desktop)
        let lookups = try (0..<3).map { _ in
            try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        }
        try desktop.waitForWindow("Unlock Tresor")
        try waitUntil("the three clients to wait") {
            harness.daemonLog.components(separatedBy: "a Secret Service client waits for the keybag:").count - 1 == 3
        }
        #expect(harness.daemonLog.components(separatedBy: "the desktop is asked already").count - 1 == 2)
        try desktop.xdotool("type", "--delay", "20", passcode)
        try desktop.xdotool("key", "Return")
        for lookup in lookups { #expect(try lookup.finish(timeout: 30).stdout == secret) }
        // No second question for a keybag unlocked already.
        usleep(1_500_000)
        #expect(!windowShows(desktop, "Unlock Tresor"), "asked again after the keybag was unlocked")
        try harness.expectNoSecretLeaked()
    }

    /// A question on the desktop nobody answers (`"desktopPromptSeconds"`, 10 here) is closed, the
    /// program that waited is told no, and the log and `tresor status` say why. A `tresor unlock`
    /// meanwhile would still have served it.
    @Test func aPromptNobodyAnswersTellsTheProgramAndStatusWhy() throws {
        let desktop = try DesktopSession()
        let (harness, _, _) = try lockedProvider(desktop, configuration: #"{"desktopPromptSeconds": 10}"#)
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Unlock Tresor")
        let result = try lookup.finish(timeout: 60)
        // Told no as its `Prompt` call's error, held while the desktop asked (short of D-Bus's 25 s).
        #expect(!result.succeeded && result.stdout.isEmpty, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("Tresor is locked: nobody answered the desktop's prompt in time"), "\(result.stderr)")
        #expect(!windowShows(desktop, "Unlock Tresor"))
        #expect(harness.daemonLog.contains("nobody answered the desktop's prompter within 10 s"))
        let status = try harness.tresor(["status"])
        #expect(status.stdout.contains("Unanswered:") && status.stdout.contains("nobody answered the desktop's prompt in time"), "\(status.stdout)")
        #expect(status.stdout.contains("Keybag:     locked"), "\(status.stdout)")
    }

    /// A question nobody waits for any more is taken off the desktop: the program that waited
    /// left the bus, or the keybag was unlocked in a terminal meanwhile.
    @Test func aQuestionNobodyWaitsForIsClosed() throws {
        let desktop = try DesktopSession()
        let (harness, passcode, secret) = try lockedProvider(desktop)
        let leaving = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Unlock Tresor")
        leaving.killWithoutWarning()
        try waitUntil("the unlock question to close once its program left", seconds: 10) { !windowShows(desktop, "Unlock Tresor") }
        #expect(try harness.status().keybag == .locked)

        let waiting = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Unlock Tresor")
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try waiting.finish(timeout: 30).stdout == secret)
        try waitUntil("the unlock question to close once the keybag was unlocked in a terminal", seconds: 10) {
            !windowShows(desktop, "Unlock Tresor")
        }
        try harness.expectNoSecretLeaked()
    }

    /// A TresorKit application (ProbeAlpha) reading its item that needs the user: on a desktop the
    /// question goes to the desktop's prompter, as a Secret Service client's does; the passcode
    /// typed there allows that one read, and Escape refuses the next.
    @Test func anApplicationsReadThatNeedsYouIsAskedInTheDesktopsPrompter() throws {
        let desktop = try DesktopSession()
        let (harness, passcode, _) = try lockedProvider(desktop)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let probe = harness.root.appendingPathComponent("alpha")
        try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("ProbeAlpha"), to: probe)
        let registered = try harness.tresor(
            ["app", "register", "--id", "TESTP.app", "--team", "TESTP", "--exe", probe.path, "--passcode-stdin"], input: passcode + "\n")
        try #require(registered.succeeded, "\(registered.stderr)")
        let secret = "e2e-desktop-app-secret-\(UUID().uuidString.prefix(6))"
        let added = try harness.tresor(
            [
                "item", "add", "--service", "vault.example.com", "--account", "recovery", "--group", "TESTP.app", "--user-presence",
                "--secret-stdin", "--passcode-stdin",
            ], input: passcode + "\n" + secret)
        try #require(added.succeeded, "\(added.stderr)")
        let arguments = ["get", "vault.example.com", "recovery", "TESTP.app"]

        let read = try BackgroundProcess(harness: harness, executable: probe, arguments: arguments)
        try desktop.waitForWindow("Allow access to a secret")
        try desktop.xdotool("type", "--delay", "20", passcode)
        try desktop.xdotool("key", "Return")
        #expect(try read.finish(timeout: 30).stdout.hasPrefix(secret))

        let again = try BackgroundProcess(harness: harness, executable: probe, arguments: arguments)
        try desktop.waitForWindow("Allow access to a secret")
        try desktop.xdotool("key", "Escape")
        let refused = try again.finish(timeout: 30)
        #expect(!refused.stdout.contains(secret) && refused.stdout.contains("did not allow"), "\(refused.stdout)")
        try harness.expectNoSecretLeaked()
    }

    /// An item that needs the user present: its `Unlock` prompt asks on the desktop, the passcode
    /// typed there allows one read, and the next read asks again.
    @Test func anItemThatNeedsYouIsAllowedOnceInTheDesktopsPrompter() throws {
        let desktop = try DesktopSession()
        let (harness, passcode, secret) = try lockedProvider(desktop)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let marked = try harness.tresor(
            ["item", "update", "--attribute", "tresor-e2e=desktop", "--set", "accessControl=userPresence", "--passcode-stdin"], input: passcode + "\n"
        )
        try #require(marked.succeeded, "\(marked.stderr)")
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Allow access to a secret")
        _ = try desktop.screenshot("secret-service-presence-prompt")
        try desktop.xdotool("type", "--delay", "20", passcode)
        try desktop.xdotool("key", "Return")
        let result = try lookup.finish(timeout: 30)
        #expect(result.stdout == secret, "\(result.stderr)")
        // One read: the next lookup asks again, and Escape refuses it.
        let again = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Allow access to a secret")
        try desktop.xdotool("key", "Escape")
        #expect(try again.finish(timeout: 30).stdout.isEmpty)
        try harness.expectNoSecretLeaked()
    }

    /// A locked provider that trusts no generic client, and a `secret-tool lookup` of its item
    /// waiting on the desktop's one question: unlock, and allow this read.
    func genericClientWaitingOnTheKeybag(_ desktop: DesktopSession) throws -> (Harness, passcode: String, lookup: BackgroundProcess, secret: String) {
        let (harness, passcode, secret) = try lockedProvider(desktop)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try harness.tresor(["secret-service", "trust", "remove", "--all"]).succeeded)
        #expect(try harness.tresor(["lock"]).succeeded)
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Unlock Tresor and allow a read")
        try desktop.xdotool("type", "--delay", "20", passcode)
        return (harness, passcode, lookup, secret)
    }

    /// A generic client nobody trusts, on a locked keybag: the passcode is typed once, and unlocks
    /// the keybag and allows that one read; the next read is asked about again.
    @Test func aGenericClientOnALockedKeybagIsAskedOnceToUnlockAndAllowItsRead() throws {
        let desktop = try DesktopSession()
        let (harness, _, lookup, secret) = try genericClientWaitingOnTheKeybag(desktop)
        try desktop.xdotool("key", "Return")
        #expect(try lookup.finish(timeout: 30).stdout == secret)
        #expect(harness.daemonLog.components(separatedBy: "the passcode was given in the desktop's prompter").count - 1 == 1)
        #expect(!harness.daemonLog.contains("asks for an item that needs you"), "asked a second time, to allow the read")
        #expect(try harness.status().keybag == .unlocked)
        // Allowed once: the same program's next read is put to the user.
        let again = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Allow access to a secret")
        try desktop.xdotool("key", "Escape")
        #expect(try again.finish(timeout: 30).stdout.isEmpty)
        try harness.expectNoSecretLeaked()
    }

    /// The question's box "for this session" remembers the program as an approval's does.
    @Test func aGenericClientRememberedInTheUnlockQuestionReadsSilentlyAfterwards() throws {
        let desktop = try DesktopSession()
        let (harness, _, lookup, secret) = try genericClientWaitingOnTheKeybag(desktop)
        try desktop.xdotool("key", "alt+r")  // the box's mnemonic ticks it
        try desktop.xdotool("key", "alt+u")  // Unlock
        #expect(try lookup.finish(timeout: 30).stdout == secret)
        #expect(try harness.tresor(["secret-service", "trust"]).stdout.contains("approved for this session"))
        let again = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        #expect(try again.finish(timeout: 30).stdout == secret, "remembered: no prompt this time")
        try harness.expectNoSecretLeaked()
    }

    /// An unlocked provider that trusts no generic client, a `secret-tool lookup` of its item
    /// waiting, and the prompter showing the question with the passcode typed.
    func genericClientAsking(_ desktop: DesktopSession) throws -> (Harness, lookup: BackgroundProcess, secret: String) {
        let (harness, passcode, secret) = try lockedProvider(desktop)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try harness.tresor(["secret-service", "trust", "remove", "--all"]).succeeded)
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Allow access to a secret")
        try desktop.xdotool("type", "--delay", "20", passcode)
        return (harness, lookup, secret)
    }

    /// A generic client nobody trusts: its read is put to the user in the desktop's prompter, and
    /// the passcode typed there allows that one read (docs/SECURITY.md, "Generic clients").
    @Test func aGenericClientsReadIsAllowedOnceInTheDesktopsPrompter() throws {
        let desktop = try DesktopSession()
        let (harness, lookup, secret) = try genericClientAsking(desktop)
        try desktop.xdotool("key", "Return")
        #expect(try lookup.finish(timeout: 30).stdout == secret)
        try harness.expectNoSecretLeaked()
    }

    /// A generic client nobody trusts replaces its item: the desktop's prompter says it is a
    /// change, not a read; Cancel there fails `secret-tool store` saying so (libsecret would report
    /// a dismissed replacement as stored), and the passcode typed there lets one replacement through.
    @Test func aGenericClientsReplacementIsAskedInTheDesktopsPrompterAsAChange() throws {
        let desktop = try DesktopSession()
        let (harness, passcode, _) = try lockedProvider(desktop)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try harness.tresor(["secret-service", "trust", "remove", "--all"]).succeeded)
        let refused = try BackgroundProcess(
            harness: harness, executable: SecretTool.system, arguments: ["store", "--label=E2E desktop", "tresor-e2e", "desktop"],
            input: "e2e-desktop-refused")
        try desktop.waitForWindow("Allow a change to a secret")
        try desktop.xdotool("key", "Escape")
        let told = try refused.finish(timeout: 30)
        #expect(!told.succeeded && told.stderr.contains("you refused to let this program replace"), "\(told.status): \(told.stderr)")
        let replacement = "e2e-desktop-replaced-\(UUID().uuidString.prefix(6))"
        harness.secrets.append(replacement)
        let store = try BackgroundProcess(
            harness: harness, executable: SecretTool.system, arguments: ["store", "--label=E2E desktop", "tresor-e2e", "desktop"], input: replacement)
        try desktop.waitForWindow("Allow a change to a secret")
        try desktop.xdotool("type", "--delay", "20", passcode)
        try desktop.xdotool("key", "Return")
        #expect(try store.finish(timeout: 30).succeeded)
        #expect(try harness.tresor(["secret-service", "trust", "add", SecretTool.system.path, "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try SecretTool(harness: harness).lookup(["tresor-e2e": "desktop"], expecting: replacement) == replacement)
        try harness.expectNoSecretLeaked()
    }

    /// The prompter's box "for this session": the same program under the same parents reads
    /// silently afterwards, and `tresor secret-service trust` shows it as approved.
    @Test func aGenericClientRememberedInTheDesktopsPrompterReadsSilentlyAfterwards() throws {
        let desktop = try DesktopSession()
        let (harness, lookup, secret) = try genericClientAsking(desktop)
        try desktop.xdotool("key", "alt+r")  // the box's mnemonic ticks it
        try desktop.xdotool("key", "alt+a")  // Allow
        #expect(try lookup.finish(timeout: 30).stdout == secret)
        let listed = try harness.tresor(["secret-service", "trust"])
        #expect(listed.stdout.contains("approved for this session"), "\(listed.stdout)")
        let again = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        #expect(try again.finish(timeout: 30).stdout == secret, "remembered: no prompt this time")
        try harness.expectNoSecretLeaked()
    }
}
