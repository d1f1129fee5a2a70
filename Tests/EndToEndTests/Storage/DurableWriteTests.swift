import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// docs/SECURITY.md, "Durability": the daemon answers a write only once it is on the disk. Each
/// test attaches `strace` to the running daemon and makes every `fsync`/`fdatasync` of one path
/// fail with EIO — the SQLite WAL a commit must sync, the folder a new attachment's name must be
/// synced in, the home folder an atomically replaced file is renamed in. A write whose answer
/// does not wait for that sync is acknowledged anyway (what `synchronous = NORMAL` and a
/// best-effort folder sync did); one that waits is refused. Once strace has let go, the same
/// write succeeds and everything acknowledged before is still there.
@Suite(.blocksItsThread, .serialized) struct DurableWriteTests {
    static let passcode = "e2e-durable-passcode"
    static let canTrace = getuid() == 0 && FileManager.default.isExecutableFile(atPath: FailingSyncs.strace)

    @Test(.enabled(if: canTrace, "needs root and strace (scripts/test installs it)"))
    func aKeychainItemIsAnsweredOnlyOnceItsCommitIsSynced() throws {
        let harness = try home()
        try expectSucceeded(harness.tresor(["item", "add", "--service", "durable.before", "--account", "ada", "--secret-stdin"], input: "s-before"))
        try FailingSyncs.during(harness, paths: [harness.paths.loginKeychain.path + "-wal"]) {
            let added = try harness.tresor(["item", "add", "--service", "durable.cut", "--account", "ada", "--secret-stdin"], input: "s-cut")
            #expect(!added.succeeded, "an item was acknowledged although its commit was never synced")
        }
        try expectSucceeded(harness.tresor(["item", "add", "--service", "durable.after", "--account", "ada", "--secret-stdin"], input: "s-after"))
        for (service, secret) in [("durable.before", "s-before"), ("durable.after", "s-after")] {
            let got = try harness.tresor(["item", "get", "--service", service, "--passcode-stdin"], input: Self.passcode + "\n")
            #expect(got.succeeded && got.stdout.contains(secret), "\(service): \(got.stderr)")
        }
    }

    @Test(.enabled(if: canTrace, "needs root and strace (scripts/test installs it)"))
    func aNoteIsAnsweredOnlyOnceItsCommitIsSynced() throws {
        let harness = try home()
        let before = try harness.json(NoteSummary.self, ["note", "new", "--title", "durable before", "--body-stdin"], input: "body before")
        try FailingSyncs.during(harness, paths: [harness.paths.notesDatabase.path + "-wal"]) {
            let created = try harness.tresor(["note", "new", "--title", "durable cut", "--body-stdin"], input: "body cut")
            #expect(!created.succeeded, "a note was acknowledged although its commit was never synced")
            let edited = try harness.tresor(["note", "edit", before.id, "--body-stdin"], input: "body edited")
            #expect(!edited.succeeded, "an edit was acknowledged although its commit was never synced")
        }
        try expectSucceeded(harness.tresor(["note", "edit", before.id, "--body-stdin"], input: "body edited"))
        let shown = try harness.tresor(["note", "show", before.id])
        #expect(shown.stdout.contains("body edited"), "\(shown.stderr)")
    }

    @Test(.enabled(if: canTrace, "needs root and strace (scripts/test installs it)"))
    func anAttachmentIsAnsweredOnlyOnceItsFileAndFolderAreSynced() throws {
        let harness = try home()
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "durable attachment", "--body-stdin"], input: "body")
        let file = harness.root.appendingPathComponent("picture.bin")
        try Data(repeating: 7, count: 10_000).write(to: file)
        let attach = ["note", "attach", note.id, "--kind", "file", "--file", file.path, "--name", "picture.bin"]
        // The file's own fsync was always there; the folder's, which makes its name durable, is
        // what this checks.
        try FailingSyncs.during(harness, paths: [harness.paths.attachmentsFolder.path]) {
            let attached = try harness.tresor(attach)
            #expect(!attached.succeeded, "an attachment was acknowledged although its folder was never synced")
        }
        try expectSucceeded(harness.tresor(attach))
        let files = try FileManager.default.contentsOfDirectory(atPath: harness.paths.attachmentsFolder.path)
        #expect(files.count == 1, "the refused attachment left a file behind: \(files)")
    }

    @Test(.enabled(if: canTrace, "needs root and strace (scripts/test installs it)"))
    func aPasscodeChangeIsAnsweredOnlyOnceTheReplacedKeybagIsSynced() throws {
        let harness = try home()
        let new = Self.passcode + "-new"
        harness.secrets.append(new)
        // The home folder: where the keybag (and the attempts file) is renamed into place.
        try FailingSyncs.during(harness, paths: [harness.paths.home.path]) {
            let changed = try harness.tresor(["passcode", "change", "--passcode-stdin"], input: "\(Self.passcode)\n\(new)\n\(new)\n")
            #expect(!changed.succeeded, "a passcode change was acknowledged although the keybag's rename was never synced")
        }
        // The old or the new keybag, never neither: one of the two passcodes opens it.
        harness.killDaemon()
        try harness.startDaemon()
        let opened = try [Self.passcode, new].filter {
            try harness.tresor(["unlock", "--passcode-stdin"], input: $0 + "\n").succeeded
        }
        #expect(opened.count == 1, "passcodes that open the keybag after the refused change: \(opened.count)")
        try expectSucceeded(harness.tresor(["passcode", "change", "--passcode-stdin"], input: "\(opened.first ?? "")\n\(new)-2\n\(new)-2\n"))
    }

    /// An initialised, unlocked home with a running daemon.
    func home() throws -> Harness {
        let harness = try Harness()
        harness.secrets = [Self.passcode]
        try harness.startDaemon()
        try expectSucceeded(harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n"))
        return harness
    }
}

/// `strace` attached to the daemon, failing every `fsync` and `fdatasync` of the given paths
/// (`-P` matches a file descriptor by the path it is open on) with EIO.
enum FailingSyncs {
    static let strace = "/usr/bin/strace"

    /// Runs `body` while the syncs of `paths` fail, and checks that at least one was tried.
    static func during(_ harness: Harness, paths: [String], sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) throws {
        let pid = try harness.status().pid
        let log = harness.root.appendingPathComponent("strace-\(UUID().uuidString.prefix(6)).log")
        let messages = harness.root.appendingPathComponent("strace-messages.log")
        _ = FileManager.default.createFile(atPath: messages.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: strace)
        process.arguments =
            [
                "-f", "-p", "\(pid)", "-e", "trace=fsync,fdatasync", "-e", "inject=fsync,fdatasync:error=EIO",
                "-e", "signal=none", "-o", log.path,
            ] + paths.flatMap { ["-P", $0] }
        process.standardError = try FileHandle(forWritingTo: messages)
        try process.run()
        defer {
            // strace inherits the test runner's blocked SIGINT and SIGTERM: SIGKILL it, and the
            // kernel detaches it from the daemon, which runs on untouched.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilEnded()
        }
        // Attached once it says so (all threads at once, with -f).
        let deadline = Date().addingTimeInterval(10)
        while !((try? String(contentsOf: messages, encoding: .utf8)) ?? "").contains("attached") {
            guard process.isRunning, Date() < deadline else {
                Issue.record("strace did not attach: \((try? String(contentsOf: messages, encoding: .utf8)) ?? "")", sourceLocation: sourceLocation)
                return
            }
            usleep(20_000)
        }
        try body()
        let trace = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(trace.contains("(INJECTED)"), "no sync of \(paths) was tried: \(trace)", sourceLocation: sourceLocation)
    }
}
