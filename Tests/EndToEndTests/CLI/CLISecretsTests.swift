import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Secrets typed on a terminal are asked for with echo off (twice for a new
/// one), `item generate` stores strong random secrets, `--clip` copies to the clipboard and
/// clears it.
@Suite(.blocksItsThread, .serialized) struct CLISecretsTests {
    static let passcode = "e2e-secrets-passcode"

    func initialized() throws -> Harness {
        let harness = try Harness.initialized(passcode: Self.passcode)
        return harness
    }

    @Test func itemAddAndUpdateAskForTheSecretTwiceWithEchoOff() throws {
        let harness = try initialized()
        let secret = "typed-\(UUID().uuidString.prefix(8))", rotated = "rotated-\(UUID().uuidString.prefix(8))"
        harness.secrets += [secret, rotated]
        // No --secret-stdin: asked on the terminal.
        let added = try harness.onTerminal(
            ["item", "add", "--service", "typed.example", "--readable-by-scripts"], answers: [("Secret:", secret), ("Secret again:", secret)])
        #expect(added.status == 0 && added.text.contains("Added generic password"), "\(added.text)")
        #expect(!added.text.contains(secret), "the typed secret was echoed")
        #expect(
            try harness.run(Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--service", "typed.example"], revealing: [secret])
                .stdout == secret)

        // --secret-stdin with the terminal as standard input: asked too, not read with echo on.
        let updated = try harness.onTerminal(
            ["item", "update", "--service", "typed.example", "--secret-stdin"], answers: [("Secret:", rotated), ("Secret again:", rotated)])
        #expect(updated.status == 0 && updated.text.contains("Updated 1 item"), "\(updated.text)")
        #expect(!updated.text.contains(rotated))
        #expect(
            try harness.run(Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--service", "typed.example"], revealing: [rotated])
                .stdout == rotated)

        // Two different secrets: refused, nothing stored.
        let differ = try harness.onTerminal(
            ["item", "add", "--service", "differ.example"], answers: [("Secret:", "one-\(secret)"), ("Secret again:", "two-\(secret)")])
        #expect(differ.status == 1 && differ.text.contains("the two new secrets differ"), "\(differ.text)")
        #expect(try harness.json(ErrorResponse.self, ["item", "find", "--service", "differ.example"]).error.code == .itemNotFound)

        // A label asked on the terminal (echo on: it is not a secret), then the secret.
        let labelled = try harness.onTerminal(
            ["item", "add", "--service", "labelled.example", "--label", "-"],
            answers: [("Label:", "Typed label"), ("Secret:", secret), ("Secret again:", secret)])
        #expect(labelled.status == 0 && labelled.text.contains("Typed label"), "\(labelled.text)")
        #expect(try harness.json([KeychainItem].self, ["item", "find", "--service", "labelled.example"]).first?.attributes?.label == "Typed label")

        // Without a terminal and without --secret-stdin, it says how to give one.
        let noTerminal = try harness.run(
            URL(fileURLWithPath: "/usr/bin/setsid"),
            ["--wait", Harness.binaries.appendingPathComponent("tresor").path, "item", "add", "--service", "none.example"], input: "")
        #expect(noTerminal.status == 1 && noTerminal.stderr.contains("--secret-stdin"), "\(noTerminal.stderr)")
    }

    /// A hint describes one passphrase: changing the passphrase on a terminal asks for the new
    /// one's hint; a script that says nothing keeps the old hint and is told so.
    /// Standard input is read no further than the largest thing it may carry: an endless one
    /// (`< /dev/zero`) is refused in words, not read until memory runs out; nothing is added.
    @Test func anEndlessStandardInputIsRefusedNotReadToItsEnd() throws {
        let harness = try initialized()
        let tresor = Harness.binaries.appendingPathComponent("tresor").path
        let endless = try harness.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", #"exec "$0" item add --service endless.example --secret-stdin < /dev/zero"#, tresor],
            timeout: 60)
        #expect(endless.status == 1 && endless.stderr.contains("standard input holds more than 2 MB"), "\(endless.status) \(endless.stderr)")
        let large = try harness.tresor(["note", "new", "--body-stdin"], input: "Title\n" + String(repeating: "x", count: 3 * 1024 * 1024))
        #expect(large.status == 1 && large.stderr.contains("standard input holds more than 2 MB"), "\(large.stderr)")
        #expect(try harness.json(ErrorResponse.self, ["item", "find"]).error.code == .itemNotFound, "nothing added")
    }

    /// An argument that is not UTF-8 is refused: read with its bytes replaced, `\xff\xfe` and
    /// `\xfa\xfb` would both be "��", one item.
    @Test func anArgumentThatIsNotUTF8IsRefused() throws {
        let harness = try initialized()
        let tresor = Harness.binaries.appendingPathComponent("tresor").path
        let added = try harness.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", #"exec "$0" item add --service "$(printf '\377\376')" --secret-stdin"#, tresor], input: "x\n")
        #expect(added.status == 64 && added.stderr.contains("argument 4 is not UTF-8 text"), "\(added.status) \(added.stderr)")
        #expect(try harness.json(ErrorResponse.self, ["item", "find"]).error.code == .itemNotFound, "nothing added")
    }

    @Test func changingTheNotesPassphraseAsksForANewHint() throws {
        let harness = try initialized()
        let first = "first-\(UUID().uuidString.prefix(8))", second = "second-\(UUID().uuidString.prefix(8))",
            third = "third-\(UUID().uuidString.prefix(8))"
        harness.secrets += [first, second, third]
        try #require(
            try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin", "--hint"], input: "\(first)\n\(first)\nthe old hint\n").succeeded)

        let changed = try harness.onTerminal(
            ["note", "passphrase", "change"],
            answers: [
                ("Current notes passphrase:", first), ("New notes passphrase:", second), ("New notes passphrase again:", second),
                ("Hint (shown after three wrong entries; empty for none):", "the new hint"),
            ])
        #expect(changed.status == 0 && changed.text.contains("Notes passphrase changed."), "\(changed.text)")
        #expect(try harness.tresor(["note", "passphrase", "hint"]).stdout.contains("the new hint"))

        let scripted = try harness.tresor(["note", "passphrase", "change", "--passphrase-stdin"], input: "\(second)\n\(third)\n\(third)\n")
        #expect(scripted.succeeded, "\(scripted.stderr)")
        #expect(scripted.stderr.contains("The old hint was kept"), "\(scripted.stderr)")
        #expect(try harness.tresor(["note", "passphrase", "hint"]).stdout.contains("the new hint"))
    }

    @Test func generateStoresStrongRandomSecrets() throws {
        let harness = try initialized()
        func generated(_ arguments: [String]) throws -> String {
            let result = try harness.tresor(["item", "generate", "--readable-by-scripts"] + arguments + ["--print"])
            #expect(result.succeeded, "\(result.stderr)")
            #expect(result.stderr.contains("about ") && result.stderr.contains(" bits"))
            return result.stdout.trimmingCharacters(in: .newlines)
        }
        let plain = try generated(["--service", "gen.default"])
        #expect(plain.count == 24)
        for characters in ["abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", "!#$%&()*+,-./:;<=>?@[]^_{|}~"] {
            #expect(plain.contains { characters.contains($0) }, "one of each class: \(characters)")
        }
        #expect(
            try harness.run(Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--service", "gen.default"], revealing: [plain]).stdout
                == plain,
            "what is printed is what is stored")
        let digits = try generated(["--service", "gen.digits", "--length", "40", "--characters", "digits"])
        #expect(digits.count == 40 && digits.allSatisfy(\.isNumber))
        let words = try generated(["--service", "gen.words", "--words", "6", "--separator", " "])
        #expect(words.split(separator: " ").count == 6 && words.allSatisfy { $0.isLowercase || $0 == " " || $0 == "-" })
        #expect(
            Set((0..<20).map { _ in (try? generated(["--service", "gen.\(UUID().uuidString)", "--length", "12"])) ?? "" }).count == 20,
            "never the same")
        // Without --print, nothing of the secret is printed.
        let quiet = try harness.tresor(["item", "generate", "--readable-by-scripts", "--service", "gen.quiet"])
        #expect(quiet.succeeded && quiet.stdout.hasPrefix("Added generic password"))
        let stored = try harness.run(Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--service", "gen.quiet"]).stdout
        #expect(stored.count == 24 && !quiet.stdout.contains(stored))
        let bad = try harness.tresor(["item", "generate", "--service", "gen.bad", "--length", "2"])
        #expect(bad.status == 1 && bad.stderr.contains("between 4 and 4096"))
        #expect(try harness.tresor(["item", "generate", "--service", "gen.bad", "--characters", "emoji"]).stderr.contains("unknown character class"))
        #expect(try harness.json(ErrorResponse.self, ["item", "find", "--service", "gen.bad"]).error.code == .itemNotFound)
    }

    /// `--clip` gives the secret to wl-copy on its standard input (a fake one here, on PATH) and
    /// clears the clipboard after TRESOR_CLIP_TIME seconds — unless it holds something else by then.
    @Test func clipCopiesTheSecretAndClearsItAfterAWhile() throws {
        let harness = try initialized()
        let secret = "clip-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(secret)
        #expect(try harness.tresor(["item", "add", "--service", "clip.example", "--readable-by-scripts", "--secret-stdin"], input: secret).succeeded)
        let clipboard = harness.root.appendingPathComponent("clipboard"), calls = harness.root.appendingPathComponent("calls")
        _ = try harness.script(
            "wl-copy", "echo \"wl-copy $*\" >> \"\(calls.path)\"; [ \"$1\" = --clear ] && : > \"\(clipboard.path)\" || cat > \"\(clipboard.path)\"")
        _ = try harness.script("wl-paste", "cat \"\(clipboard.path)\"")
        let environment = harness.environment(withScripts: ["WAYLAND_DISPLAY": "wayland-test", "TRESOR_CLIP_TIME": "2"])

        let copied = try harness.run(
            Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--service", "clip.example", "--clip"], environment: environment)
        #expect(copied.succeeded && copied.stdout.isEmpty && copied.stderr.contains("cleared in 2 s"), "\(copied.stderr)")
        #expect(try String(contentsOf: clipboard, encoding: .utf8) == secret)
        #expect(!(try String(contentsOf: calls, encoding: .utf8)).contains(secret), "the secret is never an argument")
        Thread.sleep(forTimeInterval: 4)
        #expect(try String(contentsOf: clipboard, encoding: .utf8).isEmpty, "cleared")

        // Something else copied meanwhile is left alone.
        #expect(
            try harness.run(
                Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--service", "clip.example", "--clip"], environment: environment
            ).succeeded)
        try Data("copied by the user".utf8).write(to: clipboard)
        Thread.sleep(forTimeInterval: 4)
        #expect(try String(contentsOf: clipboard, encoding: .utf8) == "copied by the user")

        // No clipboard tool: a clear error, and nothing printed.
        var bare = harness.environment
        bare["WAYLAND_DISPLAY"] = nil
        bare["DISPLAY"] = nil
        let none = try harness.run(
            Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--service", "clip.example", "--clip"], environment: bare)
        #expect(none.status == 1 && none.stdout.isEmpty && none.stderr.contains("wl-copy"))
        // item generate --clip copies what it stored.
        #expect(
            try harness.run(
                Harness.binaries.appendingPathComponent("tresor"),
                ["item", "generate", "--readable-by-scripts", "--service", "clip.generated", "--clip"], environment: environment
            ).succeeded)
        let generated = try String(contentsOf: clipboard, encoding: .utf8)
        #expect(generated.count == 24)
        #expect(
            try harness.run(
                Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--service", "clip.generated"], revealing: [generated]
            ).stdout == generated)
    }
}
