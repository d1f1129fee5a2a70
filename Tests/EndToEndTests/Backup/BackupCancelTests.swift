import Foundation
import Testing
import TresorModel
import TresorProtocol
import TresorTestSupport

/// Ctrl-C on `tresor backup create` or `restore` cancels it in the daemon: the client's
/// connection closes, and the operation stops at its next chunk of the file — no backup file
/// of every secret appears after all, nothing is restored (docs/API.md, "Backups").
@Suite(.blocksItsThread, .serialized) struct BackupCancelTests {
    /// Starts `tresor ARGUMENTS` in `home`, its input written and closed.
    static func start(_ home: BackupHome, _ arguments: [String], input: String, standardError: Pipe? = nil) throws -> Process {
        try startWithInput(
            Harness.binaries.appendingPathComponent("tresor"), arguments, input: input, environment: home.harness.environment,
            standardError: standardError)
    }

    /// Waits until `working` — a file the operation writes as it goes — holds some bytes, then
    /// ends `process` — killed: the test runner blocks SIGINT in the processes it starts, and for
    /// the daemon Ctrl-C and a kill are the same, the client's connection closed — and waits
    /// until the daemon removed `working`.
    static func interrupt(_ process: Process, whileWriting working: URL, in home: BackupHome, failing operation: String) throws {
        let deadline = Date().addingTimeInterval(120)
        waitUntil(working.path, holdsBytesWhile: process)
        #expect(process.isRunning, "the operation ended before it could be interrupted")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        while Date() < deadline, FileManager.default.fileExists(atPath: working.path) { usleep(10_000) }
        // The daemon says it failed (cancelled), then lets the next operation in.
        while Date() < deadline, !home.harness.daemonLog.contains("backup: \(operation) failed") { usleep(10_000) }
        #expect(home.harness.daemonLog.contains("backup: \(operation) failed"))
        usleep(200_000)
    }

    /// Waits until the file at `path` holds some bytes, or `process` ended (two minutes at most).
    static func waitUntil(_ path: String, holdsBytesWhile process: Process) {
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, process.isRunning, ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int ?? 0) == 0 {
            usleep(2_000)
        }
    }

    /// The daemon killed while a backup is written: the CLI says the daemon stopped before it
    /// answered and that whether it took effect is not known — not an "unexpected answer".
    @Test func aDaemonKilledMidRequestIsSaidToHaveStoppedBeforeItAnswered() throws {
        let home = try BackupHome()
        try home.noteWithALargeAttachment("large", mebibytes: 192)
        let file = home.harness.root.appendingPathComponent("killed.tresor-backup")
        let stderr = Pipe()
        let create = home.createCommand(out: file.path)
        let process = try Self.start(home, create.arguments, input: create.input, standardError: stderr)
        let partial = file.path + ".partial"
        Self.waitUntil(partial, holdsBytesWhile: process)
        home.harness.killDaemon()
        process.waitUntilExit()
        let said = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 1 && said.contains("tresord stopped before it answered"), "\(said)")
        #expect(said.contains("whether this took effect is not known"), "\(said)")
        // The partial file of the backup the daemon never finished goes at its next start.
        #expect(FileManager.default.fileExists(atPath: partial))
        try home.harness.startDaemon()
        #expect(!FileManager.default.fileExists(atPath: partial) && !FileManager.default.fileExists(atPath: file.path))
        #expect(home.harness.daemonLog.contains("removed the partial file of a backup interrupted by a crash"))
    }

    static func holdsAFile(_ folder: URL) -> Bool { !((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).isEmpty }

    @Test func aBackupOrRestoreWhoseClientIsInterruptedIsCancelled() throws {
        let home = try BackupHome()
        try home.noteWithALargeAttachment("large", mebibytes: 192)
        let file = home.harness.root.appendingPathComponent("cancel.tresor-backup")
        let create = home.createCommand(out: file.path)

        let partial = URL(fileURLWithPath: file.path + ".partial")
        try Self.interrupt(try Self.start(home, create.arguments, input: create.input), whileWriting: partial, in: home, failing: "create")
        #expect(!FileManager.default.fileExists(atPath: file.path), "no backup written after the cancel")
        #expect(!FileManager.default.fileExists(atPath: partial.path))

        // Whole this time; restored into another home, interrupted before it commits.
        _ = try home.backup(to: file)
        let other = try BackupHome(name: "b")
        other.harness.secrets += home.harness.secrets
        let before = try other.harness.homeSnapshot()
        let restore = ["backup", "restore", file.path, "--passcode-stdin"]
        // The attachment is staged in the home's restore staging folder as it is read.
        let staging = other.harness.paths.home.appendingPathComponent("restore-staging")
        let process = try Self.start(other, restore, input: "\(other.passcode)\n\(home.backupPassphrase)\n")
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, process.isRunning, !Self.holdsAFile(staging.appendingPathComponent("attachments")) { usleep(2_000) }
        try Self.interrupt(process, whileWriting: staging, in: other, failing: "restore")
        #expect(BackupHome.differences(before, try other.harness.homeSnapshot()).isEmpty)
        #expect(try other.harness.json([NoteSummary].self, ["note", "list"]).isEmpty, "nothing restored after the cancel")
        // The next operation is not cancelled by the last one's client.
        let (_, report) = try other.restore(file, passphrase: home.backupPassphrase)
        #expect(try #require(report).count(.note, .restored) == 1)
    }
}
