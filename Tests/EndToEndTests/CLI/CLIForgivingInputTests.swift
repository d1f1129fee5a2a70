import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Global options before or after the command, `--version`, "did you
/// mean", aliases, and completion scripts for bash, zsh and fish that offer real candidates.
@Suite(.blocksItsThread, .serialized) struct CLIForgivingInputTests {
    static let passcode = "e2e-forgiving-passcode"

    func initialized() throws -> Harness {
        let harness = try Harness.initialized(passcode: Self.passcode)
        return harness
    }

    @Test func globalOptionsGoBeforeOrAfterTheCommand() throws {
        let harness = try initialized()
        let other = harness.root.appendingPathComponent("other-home").path
        for arguments in [
            ["--json", "status"], ["status", "--json"], ["--home", harness.paths.home.path, "--json", "status"],
            ["--home=\(harness.paths.home.path)", "status", "--json"],
        ] {
            let result = try harness.tresor(arguments)
            #expect(result.succeeded, "\(arguments): \(result.stderr)")
            #expect((try? CLIJSON.decode(DaemonStatus.self, from: Data(result.stdout.utf8)))?.home == harness.paths.home.path, "\(arguments)")
        }
        #expect(try harness.tresor(["item", "--json", "add", "--service", "order", "--secret-stdin"], input: "s").stdout.contains("\"id\""))
        #expect(try harness.tresor(["--verbose", "item", "get", "--service", "nothing"]).stderr.contains("OSStatus -25300"))
        // --home before the command names another home: its own (not started) daemon.
        let elsewhere = try harness.tresor(["--home", other, "daemon", "status"])
        #expect(elsewhere.status == 3 && elsewhere.stdout.contains(other), "\(elsewhere.stdout)\(elsewhere.stderr)")

        let version = try harness.tresor(["--version"])
        #expect(version.succeeded && version.stdout == "\(TresorVersion.current)\n")
        let daemonVersion = try harness.run(Harness.binaries.appendingPathComponent("tresord"), ["--version"])
        #expect(daemonVersion.stdout == "\(TresorVersion.current)\n")
    }

    @Test func mistypedCommandsAndOptionsGetSuggestions() throws {
        let harness = try Harness()
        for (arguments, suggestion) in [
            (["staus"], "did you mean `tresor status`?"), (["item", "gte"], "did you mean `tresor item get`?"),
            (["note", "lsit"], "did you mean `tresor note list`?"), (["ntoe", "list"], "did you mean `tresor note`?"),
            (["item", "get", "--sevice", "x"], "Did you mean '--service'?"),
        ] {
            let result = try harness.tresor(arguments)
            #expect(result.status != 0 && result.stderr.contains(suggestion), "\(arguments): \(result.stderr)")
        }
        #expect(try harness.tresor(["frobnicate"]).stderr.contains("`tresor --help` lists the commands"))
        #expect(try harness.tresor(["help", "item"]).stdout.contains("Add, read, find"), "help is not a mistyped command")
    }

    @Test func aliasesNameTheSameCommands() throws {
        let harness = try initialized()
        #expect(try harness.tresor(["item", "add", "--service", "alias.example", "--secret-stdin"], input: "a").succeeded)
        for alias in ["list", "ls", "find"] {
            #expect(try harness.tresor(["item", alias, "--service", "alias.example"]).stdout.contains("service: alias.example"), "item \(alias)")
        }
        #expect(try harness.tresor(["item", "rm", "--service", "alias.example"]).stdout.contains("Deleted 1 item"))
        let note = try harness.json(NoteSummary.self, ["note", "new"], input: "Alias\nbody\n")
        #expect(try harness.tresor(["note", "ls"]).stdout.contains(note.id))
        #expect(try harness.tresor(["note", "rm", "Alias"]).stdout.contains("Moved note \(note.id) to Recently Deleted"))
        #expect(try harness.tresor(["note", "folder", "create"], input: "Shelf\n").succeeded)
        #expect(try harness.tresor(["note", "folder", "ls"]).stdout.contains("Shelf"))
        #expect(try harness.tresor(["note", "folder", "rm"], input: "Shelf\n").succeeded)
    }

    /// Each shell's completion script, run as the shell runs it, offers the home's note ids,
    /// keychains, services and application ids.
    @Test func completionScriptsOfferRealCandidates() throws {
        let harness = try initialized()
        let note = try harness.json(NoteSummary.self, ["note", "new"], input: "Completed title\nbody\n")
        #expect(try harness.tresor(["item", "add", "--service", "completion.example", "--secret-stdin"], input: "c").succeeded)
        #expect(try harness.tresor(["keychain", "create", "vault", "--passcode-stdin"], input: "vault-passcode\n").succeeded)
        harness.secrets.append("vault-passcode")
        try harness.registerTestRunner(id: "TEAMC.completer", team: "TEAMC", passcode: Self.passcode)
        let scripts = harness.root.appendingPathComponent("completions")
        try FileManager.default.createDirectory(at: scripts, withIntermediateDirectories: true)
        for shell in ["bash", "zsh", "fish"] {
            let script = try harness.tresor(["--generate-completion-script", shell])
            #expect(script.succeeded)
            try Data(script.stdout.utf8).write(to: scripts.appendingPathComponent(shell))
        }
        var environment = harness.environment
        environment["PATH"] = Harness.binaries.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")

        // bash: the completion function itself, over COMP_WORDS as bash fills them.
        func bash(_ line: String) throws -> [String] {
            let words = line.split(separator: " ", omittingEmptySubsequences: false).map { "'\($0)'" }.joined(separator: " ")
            let program = """
                source \(scripts.appendingPathComponent("bash").path)
                COMP_WORDS=(\(words)); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
                _tresor tresor "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; printf '%s\\n' "${COMPREPLY[@]}"
                """
            return try harness.run(URL(fileURLWithPath: "/bin/bash"), ["-c", program], environment: environment).stdout.split(separator: "\n").map(
                String.init)
        }
        #expect(try bash("tresor note show ").contains(note.id))
        #expect(try bash("tresor note show \(note.id.prefix(4))") == [note.id])
        #expect(try bash("tresor item get --service ").contains("completion.example"))
        #expect(try bash("tresor item find --keychain ").contains("vault"))
        #expect(try bash("tresor app remove ").contains("TEAMC.completer"))
        #expect(try bash("tresor note show ").allSatisfy { !$0.contains("Completed title") }, "bash shows no descriptions: titles stay off the line")

        // fish: `complete -C` lists what fish would offer, with descriptions.
        let fish = try harness.run(
            URL(fileURLWithPath: "/usr/bin/fish"),
            ["-c", "source \(scripts.appendingPathComponent("fish").path); complete -C 'tresor note show '"], environment: environment)
        #expect(fish.stdout.contains("\(note.id)\tCompleted title"), "\(fish.stdout)\(fish.stderr)")
        let fishServices = try harness.run(
            URL(fileURLWithPath: "/usr/bin/fish"),
            ["-c", "source \(scripts.appendingPathComponent("fish").path); complete -C 'tresor item get --service '"], environment: environment)
        #expect(fishServices.stdout.contains("completion.example"), "\(fishServices.stdout)\(fishServices.stderr)")

        // zsh: the candidate call the script makes, as zsh makes it (zsh's completion system
        // needs a terminal of its own to run whole).
        let zshScript = try String(contentsOf: scripts.appendingPathComponent("zsh"), encoding: .utf8)
        #expect(zshScript.contains("---completion note show -- positional@0"), "the zsh script asks tresor for note candidates")
        environment["SAP_SHELL"] = "zsh"
        let zsh = try harness.run(
            URL(fileURLWithPath: "/usr/bin/zsh"),
            ["-c", "tresor ---completion note show -- positional@0 3 0 tresor note show ''"], environment: environment)
        #expect(zsh.stdout.contains("\(note.id):Completed title"), "\(zsh.stdout)\(zsh.stderr)")
    }
}
