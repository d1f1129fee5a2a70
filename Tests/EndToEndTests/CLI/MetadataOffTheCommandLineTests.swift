import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// docs/CLI.md, "What never goes on the command line": no note title, body, folder name, search word, hint or item label needs
/// to be on a command line, where `ps` shows it to every local user. Every documented form runs
/// with a unique marker in each such value while another thread reads every process's command
/// line, as `ps` does; the editor and clipboard programs tresor starts record their own
/// command lines and their parents'.
@Suite(.blocksItsThread, .serialized) struct MetadataOffTheCommandLineTests {
    static let passcode = "e2e-meta-passcode"
    static let passphrase = "e2e-meta-passphrase"

    @Test func noDocumentedCommandPutsTitlesLabelsFoldersWordsOrHintsOnACommandLine() throws {
        let harness = try Harness.initialized(passcode: Self.passcode, secrets: [Self.passphrase])
        #expect(try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(Self.passphrase)\n\(Self.passphrase)\n").succeeded)
        let mark = { (what: String) in "\(what)-\(UUID().uuidString.prefix(8))" }
        let label = mark("LABEL"), description = mark("DESCRIPTION"), comment = mark("COMMENT"), newLabel = mark("RELABEL"),
            newComment = mark("RECOMMENT"), generatedLabel = mark("GENLABEL"), title = mark("TITLE"), folder = mark("FOLDER"),
            secondTitle = mark("TITLE2"), thirdTitle = mark("TITLE3"), editedTitle = mark("EDITED"), retitled = mark("RETITLED"),
            otherFolder = mark("FOLDER2"), spareFolder = mark("FOLDER3"), word = "quokka\(UUID().uuidString.prefix(6).lowercased())",
            attachment = mark("ATTACHMENT"), hint = mark("HINT"), editorTitle = mark("EDITORTITLE"), editorRetitled = mark("EDITORRETITLED"),
            secret = mark("secret")
        let markers = [
            label, description, comment, newLabel, newComment, generatedLabel, title, folder, secondTitle, thirdTitle,
            editedTitle, retitled, otherFolder, spareFolder, word, attachment, hint, editorTitle, editorRetitled, secret,
        ]
        harness.secrets += [secret]

        // The programs tresor starts write down their command line and their parent's.
        let log = harness.root.appendingPathComponent("command-lines.log")
        let record = "tr '\\0' ' ' < /proc/$PPID/cmdline >> \"$COMMAND_LOG\"; echo >> \"$COMMAND_LOG\"; echo \"$0 $*\" >> \"$COMMAND_LOG\""
        let newEditor = try harness.script("editor-new", "\(record)\nprintf '%s\\n\\nWritten in the editor\\n' \"$EDITOR_TITLE\" > \"$1\"")
        // The title goes in through the shell's own printf, never as another program's argument.
        let editEditor = try harness.script(
            "editor-edit", "\(record)\n{ printf '%s\\n' \"$EDITOR_TITLE\"; tail -n +2 \"$1\"; } > \"$1.new\" && mv \"$1.new\" \"$1\"")
        let clipboardFile = harness.root.appendingPathComponent("clipboard")
        _ = try harness.script("wl-copy", "\(record)\n[ \"$1\" = --clear ] && : > \"\(clipboardFile.path)\" || cat > \"\(clipboardFile.path)\"")
        _ = try harness.script("wl-paste", "\(record)\ncat \"\(clipboardFile.path)\"")
        let tools = harness.environment(withScripts: ["COMMAND_LOG": log.path, "WAYLAND_DISPLAY": "wayland-test", "TRESOR_CLIP_TIME": "1"])

        let watcher = CommandLineWatcher(watchingFor: markers + ["CONTROL-MARKER-ps-sees-this"])
        // A positive control: a command line with a marker, which the watcher must see.
        _ = try harness.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "sleep 0.5", "CONTROL-MARKER-ps-sees-this"])

        var arguments: [[String]] = []
        func tresor(_ words: [String], _ input: String, environment: [String: String]? = nil, sourceLocation: SourceLocation = #_sourceLocation)
            throws -> Harness.Result
        {
            arguments.append(words)
            let result = try harness.run(Harness.binaries.appendingPathComponent("tresor"), words, input: input, environment: environment)
            #expect(result.succeeded, "tresor \(words.joined(separator: " ")): \(result.stderr)", sourceLocation: sourceLocation)
            return result
        }

        // Items: the label, description and comment are lines before the secret.
        _ = try tresor(
            [
                "item", "add", "--service", "meta.example", "--account", "ada", "--label", "-", "--description", "-", "--comment", "-",
                "--secret-stdin",
            ],
            "\(label)\n\(description)\n\(comment)\n\(secret)")
        let found = try tresor(["item", "find", "--label", "-", "--json"], "\(label)\n")
        #expect(try CLIJSON.decode([KeychainItem].self, from: Data(found.stdout.utf8)).first?.attributes?.description == description)
        let got = try harness.run(
            Harness.binaries.appendingPathComponent("tresor"), ["item", "get", "--label", "-", "--passcode-stdin"],
            input: "\(label)\n\(Self.passcode)\n", revealing: [secret])
        arguments.append(["item", "get", "--label", "-", "--passcode-stdin"])
        #expect(got.stdout == secret, "\(got.stderr)")
        _ = try tresor(["item", "update", "--label", "-", "--set", "label=-", "--set", "comment=-"], "\(label)\n\(newLabel)\n\(newComment)\n")
        let relabelled = try CLIJSON.decode(
            [KeychainItem].self, from: Data(try tresor(["item", "find", "--label", "-", "--json"], "\(newLabel)\n").stdout.utf8))
        #expect(relabelled.first?.attributes?.comment == newComment)
        _ = try tresor(["item", "get", "--label", "-", "--clip", "--passcode-stdin"], "\(newLabel)\n\(Self.passcode)\n", environment: tools)
        _ = try tresor(["item", "generate", "--service", "generated.example", "--label", "-"], "\(generatedLabel)\n")
        _ = try tresor(["item", "delete", "--label", "-"], "\(generatedLabel)\n")

        // Notes: the first line is the title; options given as - come first, in --help's order.
        let first = try CLIJSON.decode(NoteSummary.self, from: Data(try tresor(["note", "new", "--json"], "\(title)\nThe body\n").stdout.utf8))
        #expect(first.title == title)
        let second = try CLIJSON.decode(
            NoteSummary.self,
            from: Data(try tresor(["note", "new", "--folder", "-", "--json"], "\(folder)\n\(secondTitle)\nIn a folder\n").stdout.utf8))
        #expect(second.title == secondTitle && second.folder == folder)
        _ = try tresor(["note", "new", "--title", "-", "--folder", "-"], "\(thirdTitle)\n\(folder)\nAll of this is the body, about \(word)\n")
        #expect(try tresor(["note", "list", "--folder", "-"], "\(folder)\n").stdout.contains(thirdTitle))
        #expect(try tresor(["note", "search"], "\(word)\n").stdout.contains(thirdTitle))
        #expect(try tresor(["note", "show", "-"], "\(title)\n").stdout.contains("The body"))
        _ = try tresor(["note", "edit", "-"], "\(title)\n\(editedTitle)\n\nA new body\n")
        _ = try tresor(["note", "edit", String(first.id.prefix(8)), "--title", "-"], "\(retitled)\n")
        _ = try tresor(["note", "edit", String(first.id.prefix(8)), "--folder", "-"], "\(otherFolder)\n")
        _ = try tresor(["note", "folder", "create"], "\(spareFolder)\n")
        _ = try tresor(["note", "folder", "delete", "-"], "\(spareFolder)\n")
        let file = harness.root.appendingPathComponent("attachment.bin")
        try Data("attached bytes".utf8).write(to: file)
        _ = try tresor(["note", "attach", String(first.id.prefix(8)), "--kind", "image", "--file", file.path, "--name", "-"], "\(attachment)\n")
        _ = try tresor(["note", "lock", String(first.id.prefix(8)), "--passphrase-stdin"], "\(Self.passphrase)\n")
        _ = try tresor(["note", "passphrase", "hint", "--set", "--passphrase-stdin"], "\(hint)\n\(Self.passphrase)\n")
        #expect(try harness.tresor(["note", "passphrase", "hint"]).stdout.contains(hint))

        // On a terminal, note new and note edit open $EDITOR over a file whose name says nothing.
        let created = try harness.onTerminal(
            ["note", "new"], environment: ["EDITOR": newEditor.path, "EDITOR_TITLE": editorTitle, "COMMAND_LOG": log.path])
        #expect(created.status == 0 && created.text.contains("Created note"), "\(created.text)")
        arguments.append(["note", "new"])
        let id = try #require(try harness.json([NoteSummary].self, ["note", "list"]).first { $0.title == editorTitle }?.id)
        let edited = try harness.onTerminal(
            ["note", "edit", String(id.prefix(6))], environment: ["EDITOR": editEditor.path, "EDITOR_TITLE": editorRetitled, "COMMAND_LOG": log.path])
        #expect(edited.status == 0, "\(edited.text)")
        arguments.append(["note", "edit", String(id.prefix(6))])
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).contains { $0.title == editorRetitled })
        usleep(2_500_000)  // the clipboard is cleared after 1 s; its helper's command line too is watched

        let (seen, tresorProcesses) = watcher.stop()
        #expect(seen.contains { $0.contains("CONTROL-MARKER-ps-sees-this") }, "the watcher sees command lines")
        #expect(tresorProcesses > 0, "the watcher sees tresor's command lines")
        let leaked = seen.filter { !$0.contains("CONTROL-MARKER-ps-sees-this") }
        #expect(leaked.isEmpty, "confidential text on a command line: \(leaked)")
        for words in arguments {
            #expect(!markers.contains { marker in words.contains { $0.contains(marker) } }, "\(words)")
        }
        let started = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(
            started.contains("editor-new") && started.contains("editor-edit") && started.contains("wl-copy") && started.contains("clear-clipboard"),
            "the editor, the clipboard tools and the clearing helper ran: \(started)")
        #expect(!markers.contains(where: started.contains), "a program tresor started got confidential text in its arguments: \(started)")
        #expect(try String(contentsOf: clipboardFile, encoding: .utf8).isEmpty, "the clipboard was cleared")
        try harness.expectNoSecretLeaked()
    }
}
