import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// A disk that fails (``PowerCutDisk/inject(_:_:)``): writes failing with `EIO`, syncs failing
/// with `EIO`, a file system gone read-only (`EROFS`). The operation fails with a clear answer and
/// is never acknowledged; what was acknowledged before stays; after a failed sync the daemon does
/// not take the unsynced data for durable — a power cut after the disk recovered keeps every
/// later acknowledged write and both databases pass `PRAGMA integrity_check`
/// (docs/SECURITY.md, "Durability").
@Suite(
    .blocksItsThread, .serialized,
    .enabled(if: PowerCutDisk.isAvailable && CrashDriver.sqlite != nil, "needs /dev/fuse, python3-fusepy, sqlite3 and root"))
struct FailingDiskTests {
    /// A home on a power-cut disk, initialised, with one item and one note acknowledged.
    final class Home {
        let harness: Harness
        let disk: PowerCutDisk
        let passcode = "fd-passcode-\(UUID().uuidString.prefix(6))"
        let note: NoteSummary

        init() throws {
            harness = try Harness(configuration: #"{"autoLockSeconds": 0}"#, onPowerCutDisk: true)
            disk = try #require(harness.disk)
            harness.secrets = [passcode]
            try harness.startDaemon()
            try expectSucceeded(harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n"))
            try expectSucceeded(harness.tresor(["item", "add", "--service", "fd", "--account", "kept", "--secret-stdin"], input: "fd-secret-kept"))
            note = try harness.json(NoteSummary.self, ["note", "new", "--title", "kept note", "--body-stdin"], input: "kept body")
        }

        @discardableResult
        func add(_ account: String) throws -> Harness.Result {
            try harness.tresor(["item", "add", "--service", "fd", "--account", account, "--secret-stdin"], input: "fd-secret-\(account)")
        }

        func has(_ account: String) throws -> Bool {
            let found = try harness.tresor(["item", "find", "--service", "fd", "--account", account, "--json"])
            guard found.succeeded else { return false }
            return try !CLIJSON.decode([KeychainItem].self, from: Data(found.stdout.utf8)).isEmpty
        }

        func notes() throws -> [NoteSummary] { try harness.json([NoteSummary].self, ["note", "list"]) }

        /// `tresord` with its log outside the home (`Harness.startDaemon` creates the log in it), for a
        /// home that cannot be written; `Harness.deinit` stops it (it finds it by its status).
        func startDaemonLoggingOutsideTheHome() throws {
            let process = Process()
            process.executableURL = Harness.binaries.appendingPathComponent("tresord")
            process.arguments = ["--home", harness.paths.home.path, "--log-level", "trace"]
            process.environment = harness.environment
            let log = harness.root.appendingPathComponent("read-only-home.log")
            try #require(FileManager.default.createFile(atPath: log.path, contents: nil))
            process.standardOutput = try FileHandle(forWritingTo: log)
            process.standardError = process.standardOutput
            try process.run()
            let deadline = Date().addingTimeInterval(15)
            while !TestDaemon.answers(socket: harness.paths.socket.path) {
                guard process.isRunning, Date() < deadline else {
                    throw HarnessError.daemonDidNotStart((try? String(contentsOf: log, encoding: .utf8)) ?? "")
                }
                usleep(20_000)
            }
        }

        /// The daemon killed, the power cut, the daemon started and unlocked with `passcode`.
        func cutPowerAndRestart(passcode: String? = nil) throws {
            harness.killDaemon()
            // One ``startDaemonLoggingOutsideTheHome()`` started is not the harness's to kill.
            if let status = try? TresorClient.connect(paths: harness.paths, startDaemon: false).status() {
                kill(status.pid, SIGKILL)
                while TestDaemon.answers(socket: harness.paths.socket.path) { usleep(20_000) }
            }
            try disk.cutPower()
            try harness.startDaemon()
            try expectSucceeded(harness.tresor(["unlock", "--passcode-stdin"], input: (passcode ?? self.passcode) + "\n"))
            let (checked, failures) = try harness.checkDatabaseIntegrity()
            #expect(failures.isEmpty && checked >= 2, "\(checked) databases checked: \(failures)")
        }
    }

    /// Every refusal the fault caused: not acknowledged, and said in words (not a bare "internal
    /// error"). An I/O error (`SQLITE_IOERR`, which a write on a disk gone read-only under an open
    /// database is too) is answered the same way by the keychain and the notes (`DatabaseFailure`).
    /// `words`: what the answer says, one of them (a keybag file's failed sync names its errno instead).
    static func expectRefused(
        _ result: Harness.Result, _ what: String, words: [String] = databaseWords, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!result.succeeded, "\(what) was acknowledged on a failing disk", sourceLocation: sourceLocation)
        #expect(!result.stderr.contains("internal error"), "\(what): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(words.contains { result.stderr.contains($0) }, "\(what): \(result.stderr)", sourceLocation: sourceLocation)
    }

    /// What a database (keychain or notes) answers when the disk fails or turned read-only.
    static let databaseWords = ["the disk failed to read or write", "the disk is read-only: nothing was changed"]

    @Test func aWriteErrorIsRefusedAndLosesNothingAcknowledged() throws {
        let home = try Home()
        try home.disk.inject(.writeError)
        Self.expectRefused(try home.add("written"), "item add")
        Self.expectRefused(try home.harness.tresor(["note", "new", "--title", "written note", "--body-stdin"], input: "body"), "note new")
        Self.expectRefused(try home.harness.tresor(["note", "edit", home.note.id, "--body-stdin"], input: "new body"), "note edit")
        #expect(try home.has("kept"), "reads are still served")
        try home.disk.inject(.writeError, false)
        #expect(try !home.has("written"), "the refused add is not visible")
        #expect(try home.notes().map(\.title) == ["kept note"])
        try expectSucceeded(home.add("after"))

        try home.cutPowerAndRestart()
        #expect(try home.has("kept") && home.has("after"))
        #expect(try !home.has("written"))
        #expect(try home.notes().map(\.title) == ["kept note"])
    }

    /// The fsyncgate case: a failed sync drops the data it was to write (the kernel marks the
    /// pages clean), so a later sync that succeeds does not bring it back. The daemon must refuse
    /// the operation, never show it as done, and keep every later acknowledged write durable.
    @Test func aFailedSyncIsNeverAcknowledgedNorTakenForDurable() throws {
        let home = try Home()
        try home.disk.inject(.syncError)
        Self.expectRefused(try home.add("unsynced"), "item add")
        Self.expectRefused(try home.harness.tresor(["note", "new", "--title", "unsynced note", "--body-stdin"], input: "body"), "note new")
        let newPasscode = "fd-new-passcode-\(UUID().uuidString.prefix(6))"
        home.harness.secrets.append(newPasscode)
        Self.expectRefused(
            try home.harness.tresor(["passcode", "change", "--passcode-stdin"], input: "\(home.passcode)\n\(newPasscode)\n\(newPasscode)\n"),
            "passcode change", words: ["Input/output error"])
        try home.disk.inject(.syncError, false)
        #expect(try !home.has("unsynced"), "a refused add is not shown as done")
        #expect(try home.notes().map(\.title) == ["kept note"])
        try expectSucceeded(home.add("after"))
        try expectSucceeded(home.harness.tresor(["note", "edit", home.note.id, "--body-stdin"], input: "edited after"))

        try home.cutPowerAndRestart()
        #expect(try home.has("kept") && home.has("after"), "acknowledged before and after the failed syncs")
        #expect(try !home.has("unsynced"))
        let shown = try home.harness.tresor(["note", "show", home.note.id])
        #expect(shown.stdout.contains("edited after"), "\(shown.stdout)\(shown.stderr)")
    }

    @Test func aReadOnlyDiskServesReadsAndRefusesChangesClearly() throws {
        let home = try Home()
        try home.disk.inject(.readOnly)
        Self.expectRefused(try home.add("refused"), "item add")
        Self.expectRefused(try home.harness.tresor(["note", "new", "--title", "refused note", "--body-stdin"], input: "body"), "note new")
        #expect(try home.has("kept"))
        #expect(try home.notes().map(\.title) == ["kept note"])
        // Writable again: the same daemon writes.
        try home.disk.inject(.readOnly, false)
        try expectSucceeded(home.add("resumed"))
        try expectSucceeded(home.harness.tresor(["note", "new", "--title", "resumed note", "--body-stdin"], input: "body"))

        // A daemon started on the home remounted read-only serves reads too.
        try home.disk.inject(.readOnly)
        home.harness.stopDaemon()
        try home.disk.remountReadOnly()
        try home.startDaemonLoggingOutsideTheHome()
        try expectSucceeded(home.harness.tresor(["unlock", "--passcode-stdin"], input: home.passcode + "\n"))
        #expect(try home.has("kept") && home.has("resumed"))
        #expect(try home.notes().map(\.title).sorted() == ["kept note", "resumed note"])
        Self.expectRefused(try home.add("refused"), "item add after a restart")
        Self.expectRefused(
            try home.harness.tresor(["note", "new", "--title", "refused note", "--body-stdin"], input: "body"), "note new after a restart")
        // Remounted writable under it: the same daemon writes, its databases opened anew, and
        // what it wrote survives a power cut.
        try home.disk.inject(.readOnly, false)
        try expectSucceeded(home.add("after the remount"))
        try expectSucceeded(home.harness.tresor(["note", "edit", home.note.id, "--body-stdin"], input: "edited after the remount"))
        try home.cutPowerAndRestart()
        #expect(try home.has("kept") && home.has("resumed") && home.has("after the remount"))
        #expect(try !home.has("refused"))
        let shown = try home.harness.tresor(["note", "show", home.note.id])
        #expect(shown.stdout.contains("edited after the remount"), "\(shown.stdout)\(shown.stderr)")
    }
}
