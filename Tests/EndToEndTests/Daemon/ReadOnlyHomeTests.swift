import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// docs/SECURITY.md, "Durability": a home whose file system is remounted read-only still opens
/// and serves every read — after a clean stop (no `-wal` left) and after a crash (a `-wal` with
/// commits in it) — while each write is refused in words; once it is writable again, the same
/// daemon writes (no restart), and what it wrote is there after one.
@Suite(.blocksItsThread, .serialized) struct ReadOnlyHomeTests {
    static let words = "the disk is read-only: nothing was changed"
    static let passcode = "e2e-read-only-passcode"

    @Test(.enabled(if: Tmpfs.canMount, "mounting a tmpfs needs root"))
    func aReadOnlyHomeServesReadsAndRefusesWritesInWords() throws {
        let harness = try Harness()
        // The home alone on the tmpfs: the daemon's socket folder stays writable, as
        // $XDG_RUNTIME_DIR is when only the data disk turns read-only.
        let disk = try Tmpfs(size: "16m", at: harness.paths.home)
        defer {
            harness.stopDaemon()
            disk.unmount()
        }
        harness.secrets = [Self.passcode]
        try harness.startDaemon()
        try expectSucceeded(harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n"))
        try expectSucceeded(harness.tresor(["item", "add", "--service", "ro.clean", "--account", "ada", "--secret-stdin"], input: "secret one"))
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "read-only note", "--body-stdin"], input: "body one")
        let picture = harness.root.appendingPathComponent("picture.bin")
        try Data(repeating: 9, count: 30_000).write(to: picture)
        let attachment = try harness.json(
            AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", picture.path, "--name", "picture.bin"])

        // After a clean stop: the databases alone, no -wal.
        harness.stopDaemon()
        try disk.remount(readOnly: true)
        try expectReadsWork(harness, note: note.id, attachment: attachment.id, services: ["ro.clean"])
        try expectWritesRefused(harness, note: note.id)

        // Writable again: the same daemon writes, its stores opened anew.
        try disk.remount(readOnly: false)
        try expectSucceeded(harness.tresor(["item", "add", "--service", "ro.crash", "--account", "ada", "--secret-stdin"], input: "secret two"))
        try expectSucceeded(harness.tresor(["note", "edit", note.id, "--body-stdin"], input: "body two"))

        // After a crash: commits still in the -wal, which must be read too.
        harness.killDaemon()
        try disk.remount(readOnly: true)
        // This time the CLI starts the daemon itself, as it does for a user (its log goes nowhere).
        try expectReadsWork(
            harness, note: note.id, attachment: attachment.id, services: ["ro.clean", "ro.crash"], body: "body two", startedByTheCLI: true)
        try expectWritesRefused(harness, note: note.id)

        // Writable again under the daemon the CLI started: it writes, and the writes are read
        // back by it and by a daemon started afterwards.
        try disk.remount(readOnly: false)
        try expectSucceeded(harness.tresor(["item", "add", "--service", "ro.after", "--account", "ada", "--secret-stdin"], input: "secret three"))
        try expectSucceeded(harness.tresor(["note", "edit", note.id, "--body-stdin"], input: "body three"))
        let added = try harness.json(NoteSummary.self, ["note", "new", "--title", "after the remount", "--body-stdin"], input: "body four")
        harness.stopDaemon()
        try harness.startDaemon()
        try expectSucceeded(harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n"))
        for service in ["ro.clean", "ro.crash", "ro.after"] {
            let got = try harness.tresor(["item", "get", "--service", service, "--passcode-stdin"], input: Self.passcode + "\n")
            #expect(got.succeeded && got.stdout.contains("secret"), "item get \(service): \(got.stderr)")
        }
        let shown = try harness.tresor(["note", "show", note.id])
        #expect(shown.succeeded && shown.stdout.contains("body three"), "note show: \(shown.stdout)\(shown.stderr)")
        let listed = try harness.tresor(["note", "list"])
        #expect(listed.stdout.contains(added.title), "note list: \(listed.stdout)\(listed.stderr)")
    }

    /// Starts the daemon on the read-only home (or lets `tresor unlock` start it), unlocks it and
    /// reads everything back.
    func expectReadsWork(
        _ harness: Harness, note: String, attachment: String, services: [String], body: String = "body one",
        startedByTheCLI: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        if !startedByTheCLI { try harness.startDaemon() }
        let unlocked = try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(unlocked.succeeded, "unlock: \(unlocked.stderr)", sourceLocation: sourceLocation)
        for service in services {
            let got = try harness.tresor(["item", "get", "--service", service, "--passcode-stdin"], input: Self.passcode + "\n")
            #expect(got.succeeded && got.stdout.contains("secret"), "item get \(service): \(got.stderr)", sourceLocation: sourceLocation)
        }
        let listed = try harness.tresor(["note", "list"])
        #expect(listed.succeeded && listed.stdout.contains("read-only note"), "note list: \(listed.stderr)", sourceLocation: sourceLocation)
        let shown = try harness.tresor(["note", "show", note])
        #expect(shown.succeeded && shown.stdout.contains(body), "note show: \(shown.stderr)", sourceLocation: sourceLocation)
        let exported = try harness.tresor(["note", "export-attachment", note, attachment, "--out", "-"])
        #expect(exported.succeeded && exported.stdout.utf8.count == 30_000, "export-attachment: \(exported.stderr)", sourceLocation: sourceLocation)
    }

    func expectWritesRefused(_ harness: Harness, note: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let writes = [
            ("item add", try harness.tresor(["item", "add", "--service", "ro.refused", "--account", "ada", "--secret-stdin"], input: "refused")),
            ("note new", try harness.tresor(["note", "new", "--title", "refused", "--body-stdin"], input: "refused")),
            ("note edit", try harness.tresor(["note", "edit", note, "--body-stdin"], input: "refused")),
        ]
        for (operation, result) in writes {
            #expect(
                !result.succeeded && result.stderr.contains(Self.words), "\(operation): \(result.stdout)\(result.stderr)",
                sourceLocation: sourceLocation)
        }
    }
}
