import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Damaged SQLite pages (not just altered cells): a clear error, the daemon keeps serving,
/// the keybag and the file are left alone.
@Suite(.blocksItsThread, .serialized) struct CorruptedDatabaseTests {
    @Test func damagedPagesGiveAClearErrorAndTheDaemonStaysUp() throws {
        let harness = try Harness.initialized(passcode: "e2e-pages-passcode")
        for index in 0..<40 {
            let result = try harness.tresor(
                ["item", "add", "--service", "svc-\(index)", "--account", "a", "--label", String(repeating: "L", count: 300), "--secret-stdin"],
                input: "secret-\(index)\n")
            #expect(result.succeeded)
        }
        harness.stopDaemon()
        // Fold the WAL into the main file, so that the pages below hold the items.
        let file = harness.paths.loginKeychain
        let checkpoint = try harness.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            ["-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')", file.path])
        #expect(checkpoint.succeeded, "\(checkpoint.stderr)")

        // Overwrite every page but the first (the header) with garbage.
        var bytes = try Data(contentsOf: file)
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        #expect(bytes.count > 3 * pageSize, "the database should span several pages")
        for page in 1..<(bytes.count / pageSize) where page % 2 == 1 {
            for offset in (page * pageSize)..<((page + 1) * pageSize) { bytes[offset] = UInt8(truncatingIfNeeded: offset &* 31 &+ 7) }
        }
        try bytes.write(to: file)

        try harness.startDaemon()
        #expect(try harness.status().keybag == .lockedSinceStart)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: "e2e-pages-passcode\n").succeeded)
        var refused = 0
        for arguments in [["item", "find"], ["item", "get", "--service", "svc-3", "--account", "a"]] {
            let result = try harness.tresor(arguments + ["--json"])
            if result.succeeded { continue }  // the pages that survived may hold it
            refused += 1
            let error = try CLIJSON.decode(ErrorResponse.self, from: Data(result.stdout.utf8)).error
            #expect([.decode, .internal, .itemNotFound].contains(error.code), "\(error)")
            #expect(!error.message.isEmpty)
            #expect(!error.message.contains("DatabaseError"), "a clear message, not a type name: \(error.message)")
        }
        #expect(refused > 0, "with every other page overwritten, listing every item cannot succeed")
        #expect(harness.daemonIsRunning)
        #expect(try harness.status().keybag == .unlocked, "the keybag is not touched by a damaged keychain")
        try harness.expectNoSecretLeaked()
    }
}
