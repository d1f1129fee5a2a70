import Foundation
import Testing
import TresorTestSupport

/// On a terminal, `tresor backup create`, `verify` and `restore` show a
/// progress bar of bytes and items on standard error; anywhere else they stay quiet.
@Suite(.blocksItsThread, .serialized) struct BackupProgressTests {
    /// A bar as `ProgressBar.updateBytes` draws it: `Label [###   ] 12/128 MiB, 3 items`.
    static func bar(_ label: String) -> Regex<Substring> {
        try! Regex("\(label) \\[#* *\\] [0-9]+/[0-9]+ MiB, [0-9]+ items")
    }

    @Test func createVerifyAndRestoreShowABarOnATerminalAndNothingElsewhere() throws {
        let home = try BackupHome()
        // Large enough that each operation outlasts the CLI's first look at the daemon's progress.
        try home.noteWithALargeAttachment("progress", mebibytes: 256)
        let file = home.harness.root.appendingPathComponent("progress.tresor-backup")
        let (createArguments, createInput) = home.createCommand(out: file.path)

        let created = try home.harness.onTerminal(createArguments, input: createInput, timeout: 180)
        #expect(created.status == 0, "\(created.text)")
        #expect(created.text.contains(Self.bar("Backing up")), "\(created.text)")
        let verified = try home.harness.onTerminal(
            ["backup", "verify", file.path, "--passphrase-stdin"], input: home.backupPassphrase + "\n", timeout: 180)
        #expect(verified.status == 0, "\(verified.text)")
        #expect(verified.text.contains(Self.bar("Verifying")), "\(verified.text)")
        let restored = try home.harness.onTerminal(
            ["backup", "restore", file.path, "--passcode-stdin"], input: "\(home.passcode)\n\(home.backupPassphrase)\n", timeout: 180)
        #expect(restored.status == 0, "\(restored.text)")
        #expect(restored.text.contains(Self.bar("Restoring")), "\(restored.text)")

        // Not on a terminal: the same commands print their reports and no bar.
        let quiet = try home.harness.tresor(createArguments, input: createInput)
        try expectSucceeded(quiet)
        #expect(!quiet.stderr.contains(Self.bar("Backing up")) && !quiet.stdout.contains(Self.bar("Backing up")), "\(quiet.stderr)")
        let quietRestore = try home.harness.tresor(
            ["backup", "restore", file.path, "--passcode-stdin"], input: "\(home.passcode)\n\(home.backupPassphrase)\n")
        try expectSucceeded(quietRestore)
        #expect(
            !quietRestore.stderr.contains(Self.bar("Restoring")) && !quietRestore.stdout.contains(Self.bar("Restoring")), "\(quietRestore.stderr)")
    }
}
