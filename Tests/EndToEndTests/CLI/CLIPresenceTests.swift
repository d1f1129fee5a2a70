import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The `tresor` tool is not a skeleton key (docs/SECURITY.md, "Terminal sessions"): any process
/// of the user can run it, so it reveals a secret, replaces one or touches another
/// application's item only with the user present — the passcode, a terminal session opened with
/// the passcode in *that* terminal (`tresor unlock --for`), or an item the user marked readable by
/// scripts. Terminals are real ones: `script(1)` gives each command line a pseudo-terminal and a
/// session of its own, as a terminal emulator does.
@Suite(.blocksItsThread, .serialized) struct CLIPresenceTests {
    static let passcode = "e2e-presence-passcode"
    static let secret = "e2e-presence-secret-\(UUID().uuidString.prefix(6))"

    func initialized() throws -> Harness {
        let harness = try Harness.initialized(passcode: Self.passcode)
        try #require(try harness.tresor(["item", "add", "--service", "mail", "--account", "ada", "--secret-stdin"], input: Self.secret).succeeded)
        return harness
    }

    /// `shell` run by `sh` in a terminal of its own (a new pty and session), with the harness's
    /// environment and `tresor` on `PATH`; its output as the terminal showed it.
    func inTerminal(_ harness: Harness, _ shell: String, revealing: [String] = []) throws -> Harness.Result {
        var environment = harness.environment
        environment["PATH"] = Harness.binaries.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["TRESOR_TEST_PASSCODE"] = Self.passcode
        return try harness.run(
            URL(fileURLWithPath: "/usr/bin/script"), ["-qec", shell, "/dev/null"], environment: environment, timeout: 60, revealing: revealing)
    }

    /// The attack: a script (here the test runner, which has no terminal) runs the genuine
    /// `tresor` and reads a secret of its group. Before, it got it; now it gets `passcodeRequired`.
    @Test func aProcessWithoutTheUserGetsNoSecret() throws {
        let harness = try initialized()
        let get = try harness.tresor(["item", "get", "--service", "mail", "--account", "ada"])
        #expect(get.status == 1)
        #expect(!get.stdout.contains(Self.secret))
        #expect(get.stderr.contains("tresor unlock --for"), "the error says what to do: \(get.stderr)")
        let json = try harness.json(ErrorResponse.self, ["item", "get", "--service", "mail", "--account", "ada"])
        #expect(json.error.code == .passcodeRequired)
        let found = try harness.tresor(["item", "find", "--service", "mail", "--show-secrets", "--json"])
        #expect(found.status == 1 && !found.stdout.contains(Self.secret))
        // Replacing the secret is refused too (a script could swap in its own), and changes nothing.
        let replaced = try harness.tresor(["item", "update", "--service", "mail", "--secret-stdin"], input: "planted")
        #expect(replaced.status == 1)
        // The passcode is still the user at the keyboard.
        let withPasscode = try harness.tresor(
            ["item", "get", "--service", "mail", "--account", "ada", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(withPasscode.stdout == Self.secret)
        try harness.expectNoSecretLeaked()
    }

    /// A terminal session opened with `tresor unlock --for` serves the terminal it was opened in,
    /// and nothing else: not the test runner, not another terminal.
    @Test func aTerminalSessionServesItsTerminalOnly() throws {
        let harness = try initialized()
        let same = try inTerminal(
            harness,
            """
            printf '%s\\n' "$TRESOR_TEST_PASSCODE" | tresor unlock --passcode-stdin --for 10m &&
            tresor item get --service mail --account ada && echo && tresor status
            """, revealing: [Self.secret])
        #expect(same.succeeded, "\(same.stdout)")
        #expect(same.stdout.contains(Self.secret), "the same terminal reads without the passcode: \(same.stdout)")
        #expect(same.stdout.contains("Terminal:   pts/"), "status names the terminal: \(same.stdout)")
        let sessions = try harness.status().terminalSessions ?? []
        #expect(sessions.count == 1 && sessions.first?.keychain == "login")

        // Another terminal (another session), and a process without one, are not served.
        let other = try inTerminal(harness, "tresor item get --service mail --account ada --passcode-stdin < /dev/null")
        #expect(!other.succeeded)
        #expect(!other.stdout.contains(Self.secret))
        #expect(try harness.tresor(["item", "get", "--service", "mail", "--account", "ada"]).status == 1)
        try harness.expectNoSecretLeaked()
    }

    /// A session ends when it expires and when the keybag locks — an unlock afterwards does not
    /// bring it back.
    @Test func aTerminalSessionEndsWithALockAndWithTime() throws {
        let harness = try initialized()
        let locked = try inTerminal(
            harness,
            """
            printf '%s\\n' "$TRESOR_TEST_PASSCODE" | tresor unlock --passcode-stdin --for 10m &&
            tresor lock && printf '%s\\n' "$TRESOR_TEST_PASSCODE" | tresor unlock --passcode-stdin &&
            tresor item get --service mail --account ada --passcode-stdin < /dev/null
            """)
        #expect(!locked.succeeded)
        #expect(!locked.stdout.contains(Self.secret), "\(locked.stdout)")
        #expect(try harness.status().terminalSessions == nil)

        let expired = try inTerminal(
            harness,
            """
            printf '%s\\n' "$TRESOR_TEST_PASSCODE" | tresor unlock --passcode-stdin --for 1s && sleep 2 &&
            tresor item get --service mail --account ada --passcode-stdin < /dev/null
            """)
        #expect(!expired.succeeded)
        #expect(!expired.stdout.contains(Self.secret), "\(expired.stdout)")
        try harness.expectNoSecretLeaked()
    }

    /// A session needs a terminal, a passcode and a sensible length; none of these refusals
    /// unlocks anything or opens a session.
    @Test func aTerminalSessionNeedsATerminal() throws {
        let harness = try initialized()
        try #require(try harness.tresor(["lock"]).succeeded)
        let noTerminal = try harness.tresor(["unlock", "--passcode-stdin", "--for", "10m"], input: Self.passcode + "\n")
        #expect(noTerminal.status == 1)
        #expect(noTerminal.stderr.contains("not run from a terminal"), "\(noTerminal.stderr)")
        #expect(try harness.status().keybag == .locked, "a refused session unlocks nothing")
        for length in ["0", "2h", "ten", "-5m"] {
            let refused = try harness.tresor(["unlock", "--passcode-stdin", "--for", length], input: Self.passcode + "\n")
            #expect(refused.status != 0, "--for \(length)")
        }
        #expect(try harness.status().terminalSessions == nil)
        try harness.expectNoSecretLeaked()
    }

    /// A script without a terminal session can still be let through, one read at a time, by
    /// the user answering in `tresor approve`.
    @Test func aScriptCanBeAllowedInTresorApprove() throws {
        let harness = try initialized()
        var get = Harness.Result(status: -1, stdout: "", stderr: "")
        let approved = try harness.approving(answer: Self.passcode) {
            get = try harness.run(
                Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--service", "mail", "--account", "ada"], revealing: [Self.secret])
            return get.succeeded
        }
        #expect(get.stdout == Self.secret)
        #expect(approved.stdout.contains("mail") && approved.stdout.contains("Allowed."), "\(approved.stdout)")
        try harness.expectNoSecretLeaked()
    }

    /// An item the user marked readable by scripts is read without them; marking an existing
    /// item needs the passcode, and a `userPresence` item cannot be marked.
    @Test func itemsReadableByScripts() throws {
        let harness = try initialized()
        let scriptSecret = "e2e-script-secret"
        try #require(
            try harness.tresor(["item", "add", "--service", "ci", "--readable-by-scripts", "--secret-stdin"], input: scriptSecret).succeeded)
        let get = try harness.tresor(["item", "get", "--service", "ci"])
        #expect(get.stdout == scriptSecret)

        let mark = ["item", "update", "--service", "mail", "--set", "readableByScripts=true"]
        let unproved = try harness.json(ErrorResponse.self, mark)
        #expect(unproved.error.code == .passcodeRequired)
        #expect(try harness.tresor(["item", "get", "--service", "mail"]).status == 1, "not marked")
        let marked = try inTerminal(
            harness,
            """
            printf '%s\\n' "$TRESOR_TEST_PASSCODE" | tresor unlock --passcode-stdin --for 1m && tresor \(mark.joined(separator: " "))
            """)
        #expect(marked.succeeded, "\(marked.stdout)")
        #expect(try harness.tresor(["item", "get", "--service", "mail"]).stdout == Self.secret)

        let both = try harness.json(
            ErrorResponse.self, ["item", "add", "--service", "both", "--user-presence", "--readable-by-scripts", "--secret-stdin"], input: "x")
        #expect(both.error.code == .param)
        try harness.expectNoSecretLeaked()
    }

    /// Another application's items: the CLI lists them, but changing, deleting or planting one
    /// needs the user present.
    @Test func anotherApplicationsItemsNeedTheUserToChange() throws {
        let harness = try initialized()
        let probe = harness.root.appendingPathComponent("alpha")
        try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("ProbeAlpha"), to: probe)
        try #require(
            try harness.tresor(
                ["app", "register", "--id", "TEAMA.alpha", "--team", "TEAMA", "--exe", probe.path, "--passcode-stdin"], input: Self.passcode + "\n"
            ).succeeded)
        #expect(try harness.run(probe, ["add", "alpha-svc", "acct"], input: "alpha-secret").stdout.hasPrefix("added"))

        let renamed = try harness.json(ErrorResponse.self, ["item", "update", "--service", "alpha-svc", "--set", "label=Mine"])
        #expect(renamed.error.code == .passcodeRequired)
        let deleted = try harness.json(ErrorResponse.self, ["item", "delete", "--service", "alpha-svc"])
        #expect(deleted.error.code == .passcodeRequired)
        let planted = try harness.json(
            ErrorResponse.self, ["item", "add", "--service", "alpha-svc2", "--group", "TEAMA.alpha", "--secret-stdin"], input: "x")
        #expect(planted.error.code == .passcodeRequired)
        #expect(try harness.run(probe, ["get", "alpha-svc", "acct"]).stdout == "alpha-secret\n", "untouched")
        #expect(try harness.run(probe, ["get", "alpha-svc2", "acct"]).stdout.contains("itemNotFound"))

        // With the passcode, the user may.
        let allowed = try harness.tresor(["item", "delete", "--service", "alpha-svc", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(allowed.stdout.contains("Deleted 1 item"), "\(allowed.stderr)")
        try harness.expectNoSecretLeaked()
    }

    /// `tresor item add` and `item generate` into another application's group from a script: the
    /// answer says "give it with --passcode-stdin", and that works — with the secret on standard
    /// input too, the passcode's line first.
    @Test func addingToAnotherApplicationsGroupFromAScriptTakesThePasscodeOnStandardInput() throws {
        let harness = try initialized()
        try #require(
            try harness.tresor(
                ["app", "register", "--id", "TEAMA.alpha", "--team", "TEAMA", "--exe", "/bin/true", "--passcode-stdin"], input: Self.passcode + "\n"
            ).succeeded)
        let refused = try harness.tresor(["item", "add", "--service", "planted", "--group", "TEAMA.alpha", "--secret-stdin"], input: "x")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--passcode-stdin"), "the answer names the way: \(refused.stderr)")

        // Not among the harness's scanned secrets: `item get` prints it, as asked.
        let secret = "e2e-planted-\(UUID().uuidString.prefix(6))"
        let added = try harness.tresor(
            ["item", "add", "--service", "planted", "--group", "TEAMA.alpha", "--secret-stdin", "--passcode-stdin"],
            input: Self.passcode + "\n" + secret)
        #expect(added.succeeded, "\(added.stderr)")
        let read = try harness.tresor(["item", "get", "--service", "planted", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(read.stdout == secret, "the secret is the rest of standard input, without the passcode's line")

        let generated = try harness.tresor(
            ["item", "generate", "--service", "generated", "--group", "TEAMA.alpha", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(generated.succeeded, "\(generated.stderr)")
        #expect(generated.stdout.contains("to group TEAMA.alpha"))

        let wrong = try harness.tresor(
            ["item", "add", "--service", "wrong", "--group", "TEAMA.alpha", "--secret-stdin", "--passcode-stdin"], input: "not-it\nx")
        #expect(wrong.status != 0, "a wrong passcode adds nothing")
        try harness.expectNoSecretLeaked()
    }

    /// The answer "give it with --passcode-stdin" must be true wherever it can be given: every
    /// command whose help speaks of the passcode takes `--passcode-stdin` (walked over the whole
    /// command tree as argument-parser describes it).
    @Test func everyCommandThatCanNeedThePasscodeTakesPasscodeStdin() throws {
        let harness = try Harness()
        let dump = try harness.tresor(["--experimental-dump-help"])
        try #require(dump.succeeded, "\(dump.stderr)")
        let tree = try JSONDecoder().decode(HelpDump.self, from: Data(dump.stdout.utf8))
        var walked = 0
        func walk(_ command: HelpDump.Command, _ path: [String]) {
            let name = (path + [command.commandName]).dropFirst().joined(separator: " ")
            guard let subcommands = command.subcommands, !subcommands.isEmpty else {
                walked += 1
                let text = ([command.abstract, command.discussion] + (command.arguments ?? []).map(\.abstract)).compactMap { $0 }.joined(
                    separator: " ")
                let flags = Set((command.arguments ?? []).flatMap { $0.names ?? [] }.map(\.name))
                if text.localizedCaseInsensitiveContains("passcode") {
                    #expect(flags.contains("passcode-stdin"), "`tresor \(name)` speaks of the passcode but takes no --passcode-stdin")
                }
                return
            }
            for subcommand in subcommands { walk(subcommand, path + [command.commandName]) }
        }
        walk(tree.command, [])
        #expect(walked > 50, "the whole tree was walked (\(walked) commands)")
    }

    /// What `--experimental-dump-help` prints, as far as this test reads it.
    struct HelpDump: Decodable {
        var command: Command
        struct Command: Decodable {
            var commandName: String
            var abstract: String?
            var discussion: String?
            var arguments: [Argument]?
            var subcommands: [Command]?
        }
        struct Argument: Decodable {
            var abstract: String?
            var names: [Name]?
        }
        struct Name: Decodable { var name: String }
    }

    /// Without a passcode there is nothing to prove presence with: the CLI's own items read as
    /// before (`tresor doctor` and docs/SECURITY.md say what that leaves open).
    @Test func withoutAPasscodeTheCLIsOwnItemsReadAsBefore() throws {
        let harness = try Harness()
        try harness.startDaemon()
        try #require(try harness.tresor(["init", "--no-passcode"]).succeeded)
        try #require(try harness.tresor(["item", "add", "--service", "mail", "--secret-stdin"], input: Self.secret).succeeded)
        #expect(try harness.tresor(["item", "get", "--service", "mail"]).stdout == Self.secret)
        let session = try harness.json(ErrorResponse.self, ["unlock", "--for", "10m"])
        #expect(session.error.code == .noPasscodeSet)
    }
}
