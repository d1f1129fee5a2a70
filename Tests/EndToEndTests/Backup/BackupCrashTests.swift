import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The crash driver's kills, for backups: the daemon is SIGKILLed at random moments of a restore
/// — while the file is read and staged, while the journals commit, while the files move in —
/// then restarted; the home is then either untouched or fully restored, never in between, and
/// nothing of the backup is left in the clear in the staging area a kill left behind. And a
/// backup killed midway leaves the file it was to replace as it was.
///
/// `TRESOR_BACKUP_CRASH_KILLS=<n>` sets the number of kills (6 by default); each restores into
/// a new home (~3 s here). The CLI is the crash driver's copy that starts no daemon.
@Suite(.blocksItsThread, .serialized) struct BackupCrashTests {
    static let kills = Int(ProcessInfo.processInfo.environment["TRESOR_BACKUP_CRASH_KILLS"] ?? "") ?? 6

    @Test func aDaemonKilledDuringARestoreLeavesTheHomeUntouchedOrFullyRestored() throws {
        // The backup: items, notes, and attachments large enough that a restore takes a while.
        let source = try BackupHome()
        for index in 0..<40 {
            try expectSucceeded(
                source.harness.tresor(
                    ["item", "add", "--service", "bk.crash.\(index)", "--account", "ada", "--secret-stdin"], input: source.marked("secret")))
        }
        for index in 0..<12 { try source.newNote("note-\(index)") }
        for index in 0..<3 { try source.attach("big-\(index)", to: try #require(source.noteIDs["note-\(index)"]), kind: "file", size: 6_000_000) }
        let file = source.harness.root.appendingPathComponent("crash.tresor-backup")
        _ = try source.backup(to: file)
        let backedUpItems = Set(try source.harness.json([KeychainItem].self, ["item", "find"]).map(\.id))
        let backedUpNotes = Set(try source.notes().values.map(\.id))

        var outcomes: [String: Int] = [:]
        for round in 0..<Self.kills {
            let target = try CrashTarget(passphrase: source.backupPassphrase, secrets: source.harness.secrets)
            let untouched = try target.state()
            let full = (items: untouched.items.union(backedUpItems), notes: untouched.notes.union(backedUpNotes))
            // Spread the kills over the whole restore: its length measured by a rehearsal.
            let window = try target.restoreWindow(file)
            // Every other kill waits for the commit marker, so the commit's own moments — journals
            // running, files moving in — are hit too, not only the long staging before them.
            let atCommit = round % 2 == 1
            let delay =
                atCommit ? Double.random(in: 0...0.004) : Double(round) / Double(max(1, Self.kills - 1)) * window * Double.random(in: 0.8...1.0)
            let result = try target.restoreKillingTheDaemon(file, after: delay, atCommit: atCommit)

            // What the kill left in the staging area holds nothing in the clear.
            let staging = target.harness.paths.home.appendingPathComponent("restore-staging")
            for (url, data) in try target.harness.homeFiles() where url.path.hasPrefix(staging.path) {
                #expect(data.range(of: Data(BackupHome.marker.utf8)) == nil, "a marker in the clear in \(url.lastPathComponent) after the kill")
            }
            try target.daemon.start()
            #expect(!FileManager.default.fileExists(atPath: staging.path), "the restart completed or removed the staged restore")
            let restored = try target.expectRestoredOrUntouched(
                untouched: untouched, full: full, acknowledged: result.succeeded, source: source,
                "round \(round), killed \(String(format: "%.2f", delay)) s in")
            if restored {
                // A second restore adds nothing.
                let again = try target.tresor(["backup", "restore", file.path, "--passcode-stdin", "--json"], input: target.secretsInput)
                let report = try CLIJSON.decode(BackupReport.self, from: Data(again.stdout.utf8))
                #expect(report.count(.note, .restored) == 0 && report.count(.item, .restored) == 0)
            } else {
                // Untouched: restoring now restores everything.
                try expectSucceeded(target.tresor(["backup", "restore", file.path, "--passcode-stdin"], input: target.secretsInput))
                let now = try target.state()
                #expect(now.items == full.items && now.notes == full.notes)
            }
            outcomes[result.succeeded ? "acknowledged" : restored ? "completed after the restart" : "untouched", default: 0] += 1
            if atCommit { #expect(restored, "killed after the commit marker: the restart completes the restore") }
            try target.harness.expectNoSecretLeaked()
            #expect(!target.harness.daemonLog.contains(BackupHome.marker))
        }
        print("BackupCrashTests: \(Self.kills) kills during restores: \(outcomes.sorted { $0.key < $1.key })")
    }

    @Test func aBackupKilledMidwayLeavesTheFileItWasToReplaceAsItWas() throws {
        let target = try CrashTarget(passphrase: "bk-backup-passphrase-midway", secrets: [])
        let note = try target.harness.json(NoteSummary.self, ["note", "new", "--title", "midway", "--body-stdin", "--json"], input: "midway")
        let big = target.harness.root.appendingPathComponent("big")
        try Data((0..<40_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: big)
        try expectSucceeded(target.tresor(["note", "attach", note.id, "--kind", "file", "--file", big.path]))
        let file = target.harness.root.appendingPathComponent("midway.tresor-backup")
        let old = Data("the previous backup".utf8)
        try old.write(to: file)
        let process = try target.start(
            ["backup", "create", "--out", file.path, "--passcode-stdin", "--work-factor", "14"],
            input: "\(target.passcode)\n\(target.passphrase)\n\(target.passphrase)\n")
        // Killed once the partial file has grown.
        let partial = file.path + ".partial"
        let deadline = Date().addingTimeInterval(30)
        while ((try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0) < 4_000_000 && Date() < deadline { usleep(2_000) }
        target.daemon.kill()
        process.waitUntilEnded()
        #expect(process.terminationStatus != 0)
        #expect(try Data(contentsOf: file) == old, "the previous backup is whole")
        try target.daemon.start()
        try expectSucceeded(target.tresor(["unlock", "--passcode-stdin"], input: target.passcode + "\n"))
        try expectSucceeded(
            target.tresor(
                ["backup", "create", "--out", file.path, "--passcode-stdin", "--work-factor", "14"],
                input: "\(target.passcode)\n\(target.passphrase)\n\(target.passphrase)\n"))
        #expect(!FileManager.default.fileExists(atPath: partial))
        try expectSucceeded(target.tresor(["backup", "verify", file.path, "--passphrase-stdin"], input: target.passphrase + "\n"))
    }
}
