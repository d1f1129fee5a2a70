import Foundation
import Testing
import TresorKit
import TresorTestSupport

/// `tresor note edit` in `$EDITOR` names the version it showed (docs/FORMAT.md, "Revisions and
/// merges"): a change made to the note while the editor was open — here by another `tresor`,
/// run from inside the editor — is merged with the edit, or the edit becomes a conflict copy.
/// No line of either is lost.
@Suite(.blocksItsThread, .serialized) struct NoteEditMergeTests {
    static let passcode = "e2e-edit-merge-passcode"

    func initialized() throws -> Harness {
        let harness = try Harness.initialized(passcode: Self.passcode)
        return harness
    }

    /// Edits note `id` in an editor that first has another `tresor` replace the note with
    /// `meanwhile`, then runs `edit` (a sed script) on the file it was given.
    func editWhileChangedElsewhere(_ harness: Harness, _ id: String, meanwhile: String, edit: String) throws -> Harness.Screen {
        let changed = harness.root.appendingPathComponent("meanwhile.txt")
        try Data(meanwhile.utf8).write(to: changed)
        let editor = try harness.script(
            "editor-merge",
            """
            tresor note edit \(id) < "\(changed.path)" > /dev/null
            sed -i '\(edit)' "$1"
            """)
        var environment = harness.environment(withScripts: ["EDITOR": editor.path])
        environment["PATH"] = Harness.binaries.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        return try harness.onTerminal(["note", "edit", id], environment: environment)
    }

    @Test func anEditOfOtherLinesIsMergedWithTheChangeMadeMeanwhile() throws {
        let harness = try initialized()
        let note = try harness.json(NoteSummary.self, ["note", "new"], input: "Groceries\nMilk\nBread\nEggs\n")
        let screen = try editWhileChangedElsewhere(
            harness, note.id, meanwhile: "Groceries\nMilk\nBread\nEggs\nButter\n", edit: "s/^Milk$/Oat milk/")
        #expect(screen.status == 0 && screen.text.contains("merged with a change made meanwhile"), "\(screen.text)")
        let body = try harness.json(OpenedNote.self, ["note", "show", note.id]).body
        #expect(body.contains("Oat milk") && body.contains("Butter") && !body.contains("\nMilk"), "both edits kept: \(body)")
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).count == 1, "no copy was needed")
    }

    @Test func anEditOfTheSameLineBecomesAConflictCopy() throws {
        let harness = try initialized()
        let note = try harness.json(NoteSummary.self, ["note", "new"], input: "Groceries\nMilk\nBread\n")
        let screen = try editWhileChangedElsewhere(harness, note.id, meanwhile: "Groceries\nGoat milk\nBread\n", edit: "s/^Milk$/Oat milk/")
        #expect(screen.status == 0 && screen.text.contains("conflict copy"), "\(screen.text)")
        #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).body.contains("Goat milk"), "the note keeps the other version")
        let copies = try harness.json([NoteSummary].self, ["note", "list"]).filter { $0.id != note.id }
        #expect(copies.count == 1 && copies[0].title.contains("conflict copy"), "\(copies.map(\.title))")
        let copy = try #require(copies.first)
        #expect(try harness.json(OpenedNote.self, ["note", "show", copy.id]).body.contains("Oat milk"), "and the edit is kept whole")
    }

    /// A closed terminal (`SIGHUP`) or a `kill` (`SIGTERM`) while the editor is open ends the
    /// edit with the note's file wiped: the text is not left in the runtime folder.
    @Test(arguments: ["HUP", "TERM"]) func anEditEndedByASignalLeavesNoFileBehind(signal: String) throws {
        let harness = try initialized()
        let note = try harness.json(NoteSummary.self, ["note", "new"], input: "Codes\nDoor code e2e-4711\n")
        let recorded = harness.root.appendingPathComponent("edited-file-\(signal)")
        let editor = try harness.script(
            "editor-ended-by-\(signal)",
            """
            echo "$1" > "\(recorded.path)"
            p=$PPID
            while [ "$(cat /proc/$p/comm)" != tresor ]; do p=$(cut -d' ' -f4 /proc/$p/stat); done
            kill -\(signal) "$p"
            sleep 5
            """)
        let screen = try? harness.onTerminal(["note", "edit", note.id], environment: harness.environment(withScripts: ["EDITOR": editor.path]))
        let file = try String(contentsOf: recorded, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(file.hasSuffix("/note.txt"), "\(file)")
        #expect(screen?.status != 0, "the edit ended with the signal: \(screen?.text ?? "")")
        #expect(!FileManager.default.fileExists(atPath: file), "the note's file was left behind")
        #expect(!FileManager.default.fileExists(atPath: (file as NSString).deletingLastPathComponent), "its folder was left behind")
        #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).body.contains("Door code e2e-4711"), "the note is as it was")
    }

    /// An edit whose save fails — here the daemon is stopped while the editor is open — is not
    /// lost: its file stays, the error says where and how to save it, and that command saves it.
    @Test func anEditThatCannotBeSavedIsKeptAndSaysHowToSaveIt() throws {
        let harness = try initialized()
        let note = try harness.json(NoteSummary.self, ["note", "new"], input: "Groceries\nMilk\n")
        let editor = try harness.script(
            "editor-daemon-stops",
            """
            tresor daemon stop > /dev/null
            sed -i 's/^Milk$/Oat milk/' "$1"
            """)
        var environment = harness.environment(withScripts: ["EDITOR": editor.path])
        environment["PATH"] = Harness.binaries.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let screen = try harness.onTerminal(["note", "edit", note.id], environment: environment)
        #expect(screen.status != 0, "\(screen.text)")
        let kept = try #require(
            screen.text.firstMatch(of: /Your text is kept in (\S+note\.txt)/).map { String($0.1) }, "\(screen.text)")
        #expect(screen.text.contains("tresor note edit \(note.id) < \(kept)"), "\(screen.text)")
        #expect(try String(contentsOfFile: kept, encoding: .utf8).contains("Oat milk"))

        harness.stopDaemon()
        try harness.startDaemon()
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let saved = try harness.tresor(["note", "edit", note.id], input: try String(contentsOfFile: kept, encoding: .utf8))
        #expect(saved.succeeded, "\(saved.stderr)")
        #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).body.contains("Oat milk"))
        try FileManager.default.removeItem(atPath: kept)
    }
}
