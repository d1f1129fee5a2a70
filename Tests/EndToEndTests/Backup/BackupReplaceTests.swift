import Foundation
import Testing
import TresorModel
import TresorProtocol
import TresorTestSupport

/// `tresor backup restore --on-conflict replace` puts the backup's version of a note in place
/// of the home's, and loses no edit made here since: the home's version — a plain note's and a
/// locked note's, with the attachments the backup does not bring back — is kept in Recently
/// Deleted (docs/BACKUP.md, "Restoring").
@Suite(.blocksItsThread) struct BackupReplaceTests {
    @Test func aNoteReplacedByARestoreIsKeptAsItWasInRecentlyDeleted() throws {
        let home = try BackupHome()
        let passphrase = home.notesPassphrase
        try expectSucceeded(home.harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n"))
        let plain = try home.newNote("plain")
        try home.attach("in-the-backup", to: plain, kind: "file", size: 4_000)
        let locked = try home.newNote("locked")
        try expectSucceeded(home.harness.tresor(["note", "lock", locked]))
        let file = home.harness.root.appendingPathComponent("replace.tresor-backup")
        _ = try home.backup(to: file)

        // Edited here after the backup; an attachment added here only.
        let newerPlain = home.marked("newer-plain"), newerLocked = home.marked("newer-locked")
        try expectSucceeded(home.harness.tresor(["note", "edit", plain, "--body-stdin"], input: newerPlain))
        // The passphrase opens a secure session, in which the locked note is edited.
        try expectSucceeded(home.harness.tresor(["note", "show", locked, "--passphrase-stdin"], input: passphrase + "\n"))
        try expectSucceeded(home.harness.tresor(["note", "edit", locked, "--body-stdin"], input: newerLocked))
        try home.attach("only-here", to: plain, kind: "file", size: 3_000)

        let dryRun = try home.harness.tresor(
            ["backup", "restore", file.path, "--passcode-stdin", "--on-conflict", "replace", "--dry-run"],
            input: "\(home.passcode)\n\(home.backupPassphrase)\n")
        #expect(dryRun.stdout.contains("would be kept in Recently Deleted"), "\(dryRun.stdout) \(dryRun.stderr)")
        let restored = try home.harness.tresor(
            ["backup", "restore", file.path, "--passcode-stdin", "--on-conflict", "replace"], input: "\(home.passcode)\n\(home.backupPassphrase)\n")
        try expectSucceeded(restored)
        #expect(restored.stdout.contains("Replaced: 2 notes") && restored.stdout.contains("are kept in Recently Deleted"), "\(restored.stdout)")

        // The backup's versions are the notes now, with the backup's attachment.
        let shownPlain = try home.harness.json(OpenedNote.self, ["note", "show", plain])
        #expect(shownPlain.body == home.bodies["plain"] && shownPlain.attachments.map(\.name) == ["in-the-backup"])
        let shownLocked = try home.harness.json(OpenedNote.self, ["note", "show", locked, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(shownLocked.body == home.bodies["locked"] && shownLocked.summary.isLocked)

        // The home's versions are in Recently Deleted, whole: brought back, they open as they were.
        let trash = try home.harness.json([NoteSummary].self, ["note", "trash", "list"])
        #expect(trash.count == 2, "\(trash.map(\.title))")
        let keptPlain = try #require(trash.first { $0.title == shownPlain.summary.title && $0.id != plain })
        let keptLocked = try #require(trash.first { $0.title == shownLocked.summary.title && $0.id != locked })
        #expect(keptLocked.isLocked)
        for kept in [keptPlain, keptLocked] { try expectSucceeded(home.harness.tresor(["note", "trash", "restore", kept.id])) }
        let openedPlain = try home.harness.json(OpenedNote.self, ["note", "show", keptPlain.id])
        #expect(openedPlain.body == newerPlain && openedPlain.attachments.map(\.name) == ["only-here"])
        let attachment = try #require(openedPlain.attachments.first)
        let exported = home.harness.root.appendingPathComponent("only-here.out")
        try expectSucceeded(home.harness.tresor(["note", "export-attachment", keptPlain.id, attachment.id, "--out", exported.path]))
        #expect(try Data(contentsOf: exported) == home.attachmentBytes["only-here"])
        let openedLocked = try home.harness.json(OpenedNote.self, ["note", "show", keptLocked.id, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(openedLocked.body == newerLocked && openedLocked.summary.isLocked)
    }
}
