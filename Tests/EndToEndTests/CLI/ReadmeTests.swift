import Foundation
import NoteStoreFixture
import Testing
import TresorKit
import TresorTestSupport

/// Every `console` block of README.md runs as written — each command in
/// bash on a terminal of its own, in order, in a fresh `$HOME` with the default home — and
/// prints what the README shows (the lines shown, in order; ids, numbers and `…` stand for
/// whatever they are). Where a command asks, the test types: the passcode at a passcode
/// prompt, the passphrase at a passphrase prompt, a hint at the hint prompt.
///
/// What the README's examples take for granted is set up as a user would have it: the binaries
/// on `PATH`, `$GITHUB_TOKEN`, `$VPN_KEY` and `$TOKEN`, a passcode file, `db-password` and
/// `plan.png` in the working folder, an Apple Notes database on the Desktop, `$EDITOR`, a
/// desktop session bus (a private one) and a clipboard (`wl-copy` and `wl-paste` that keep it
/// in a file).
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled && FileManager.default.fileExists(atPath: "/usr/bin/jq"),
        "needs jq, dbus-daemon, secret-tool and Python keyring (scripts/test installs them)"))
struct ReadmeTests {
    static let readme = Repository.file("README.md")

    /// One `$ …` line of a console block (with its continuation lines) and the output shown under it.
    struct Example {
        var command: String
        var shown: [String]
    }

    /// The console blocks of the README, each a list of examples.
    static func consoleBlocks() throws -> [[Example]] {
        var blocks: [[Example]] = [], current: [Example]?, continuing = false
        for line in try String(contentsOf: readme, encoding: .utf8).components(separatedBy: "\n") {
            if current == nil {
                if line == "```console" { current = [] }
                continue
            }
            if line == "```" {
                blocks.append(current!)
                current = nil
            } else if continuing {
                current![current!.count - 1].command += "\n" + line
                continuing = line.hasSuffix("\\")
            } else if line.hasPrefix("$ ") {
                current!.append(Example(command: String(line.dropFirst(2)), shown: []))
                continuing = line.hasSuffix("\\")
            } else if !current!.isEmpty {
                current![current!.count - 1].shown.append(line)
            }
        }
        return blocks
    }

    @Test func everyConsoleBlockRunsAsWritten() throws {
        let blocks = try Self.consoleBlocks()
        #expect(blocks.count >= 4 && blocks.allSatisfy { !$0.isEmpty }, "the README's console blocks are found")
        let harness = try Harness()
        let passcode = "readme-passcode-\(UUID().uuidString.prefix(6))", passphrase = "readme-passphrase-\(UUID().uuidString.prefix(6))"
        harness.secrets = [passcode, passphrase]
        let home = harness.root.appendingPathComponent("ada"), work = harness.root.appendingPathComponent("work")
        for folder in [home.appendingPathComponent(".config"), home.appendingPathComponent("Desktop"), work] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try Data("db-secret\n".utf8).write(to: work.appendingPathComponent("db-password"))
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: work.appendingPathComponent("plan.png"))
        var fixture = NoteStoreFixture()
        let account = fixture.addAccount(name: "iCloud")
        let folder = fixture.addFolder(title: "Notes", account: account)
        _ = try fixture.addNote(.init(title: "Imported", text: "Imported\nfrom Apple Notes", folder: folder, account: account))
        _ = try fixture.addNote(.init(title: "Also imported", text: "Also imported\nfrom Apple Notes", folder: folder, account: account))
        try fixture.write(to: home.appendingPathComponent("Desktop/NoteStore.sqlite"))
        let clipboard = harness.root.appendingPathComponent("clipboard")
        _ = try harness.script("wl-copy", "[ \"$1\" = --clear ] && : > \"\(clipboard.path)\" || cat > \"\(clipboard.path)\"")
        _ = try harness.script("wl-paste", "cat \"\(clipboard.path)\"")
        let editor = try harness.script("editor", "printf 'Groceries\\n\\nMilk, bread\\n' > \"$1\"")
        let bus = try PrivateBus()

        var environment: [String: String] = [
            "HOME": home.path, "USER": "ada", "LOGNAME": "ada", "LANG": "C.UTF-8", "TERM": "dumb",
            "PATH": [Harness.binaries.path, harness.root.appendingPathComponent("bin").path, "/usr/bin", "/bin"].joined(separator: ":"),
            "XDG_RUNTIME_DIR": harness.root.appendingPathComponent("run").path,
            "GITHUB_TOKEN": "ghp_readme\(UUID().uuidString.prefix(6))", "VPN_KEY": "vpn-key", "TOKEN": "ghp_readme-token",
            "CI_TOKEN": "ci-readme-token",
            "EDITOR": editor.path, "WAYLAND_DISPLAY": "wayland-readme", "TRESOR_CLIP_TIME": "1",
        ]
        environment.merge(bus.environment) { $1 }
        defer {
            // The default home's daemon, and the one of the home the backup example restores into.
            for homeArguments in [[], ["--home", home.appendingPathComponent("restored").path]] {
                _ = try? Harness.execute(
                    Harness.binaries.appendingPathComponent("tresor"), homeArguments + ["daemon", "stop"], environment: environment)
            }
        }

        for (number, block) in blocks.enumerated() {
            for example in block {
                let ran = try Self.onTerminal(
                    example.command, in: work, environment: environment,
                    answers: [("passphrase", passphrase), ("passcode", passcode), ("Hint", "the usual"), ("[y/N]", "n")], harness: harness)
                #expect(ran.status == 0, "block \(number + 1): `\(example.command)` failed: \(ran.text)")
                var text = ran.text.replacingOccurrences(of: "\r", with: "")
                    .replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)  // jq's colours on a terminal
                if getuid() == 0 {
                    // The README shows a user's view: a daemon running as root knows even system
                    // programs by their hash, not their path (docs/SECRET-SERVICE.md).
                    text = text.replacingOccurrences(of: "exe-sha256:[0-9a-f]{64}", with: "exe:/usr/bin/secret-tool", options: .regularExpression)
                }
                let actual = text.components(separatedBy: "\n").map { Self.normalized($0, home: home.path) }
                var remaining = actual[...]
                for shown in example.shown where !shown.isEmpty || !example.shown.allSatisfy(\.isEmpty) {
                    let pattern = Self.pattern(shown)
                    guard let found = remaining.firstIndex(where: { $0.range(of: pattern, options: .regularExpression) != nil }) else {
                        Issue.record("block \(number + 1): `\(example.command)` did not show \"\(shown)\"; it showed:\n\(ran.text)")
                        break
                    }
                    remaining = actual[(found + 1)...]
                }
            }
        }
        #expect(!harness.transcript.contains(passcode) && !harness.transcript.contains(passphrase), "a typed secret was echoed")
    }

    /// A line for comparison: the test's `$HOME` as the README's, ids, numbers and runs of
    /// spaces the same whatever they are.
    static func normalized(_ line: String, home: String) -> String {
        line.replacingOccurrences(of: home, with: "/home/ada")
            .replacingOccurrences(of: #"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"#, with: "<id>", options: .regularExpression)
            .replacingOccurrences(of: #"[0-9]+"#, with: "N", options: .regularExpression)
            .replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
            .trimmingCharacters(in: .whitespaces)
    }

    /// What a shown line must match: itself (normalized, a trailing `# comment` dropped), `…`
    /// standing for anything.
    static func pattern(_ shown: String) -> String {
        let uncommented = shown.replacingOccurrences(of: #"\s{2,}# .*$"#, with: "", options: .regularExpression)
        let escaped = NSRegularExpression.escapedPattern(for: normalized(uncommented, home: "\u{0}"))
        return "^" + escaped.replacingOccurrences(of: "…", with: ".*") + "$"
    }

    /// Runs `command` with bash on a pseudo-terminal, typing each answer when a prompt whose
    /// last line contains its key (any case) ends the screen.
    static func onTerminal(_ command: String, in folder: URL, environment: [String: String], answers: [(String, String)], harness: Harness) throws
        -> Harness.Screen
    {
        let prompts = answers.map { Terminal.Prompt(endingWith: ":", "[y/N]", containing: $0.0, send: $0.1) }
        let request = try Terminal.request(
            ["/bin/bash", "-c", command], prompts: prompts, directory: folder.path, environment: environment, timeout: 60)
        return try Terminal.screen(try harness.run(Terminal.python, Terminal.driverArguments, input: request, timeout: 90))
    }
}
