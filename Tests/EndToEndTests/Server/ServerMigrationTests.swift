import Crypto
import Foundation
import Testing
import TresorCrypto
import TresorNotes
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `tresor server migrate` (docs/WEB.md, "Moving a home's web accounts to a server"):
/// a home's web accounts, registered and filled through the embedded web API of a running
/// daemon, moved by the real binary into a fresh PostgreSQL database, then served from it by a
/// real `tresord` in server mode — signed in with the old passwords, the same notes, bodies,
/// attachments byte for byte, shares, pins, folders, Recently Deleted and a locked note that
/// opens with its passphrase. Run again it writes nothing; killed midway it finishes on the
/// next run; it refuses a wrong passcode and a password in the URL; it prints no secret.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct ServerMigrationTests {
    static let passcode = "e2e-migrate-home-passcode"
    static let serverPasscode = "e2e-migrate-server-passcode"

    /// `tresor server migrate` of `home`'s home into `database`, the passcode on standard input.
    static func migrate(_ home: Harness, database: String, keyFile: URL, passcode: String = passcode) throws -> Harness.Result {
        try home.tresor(
            ["server", "migrate", "--from", home.paths.home.path, "--database", database, "--server-key-file", keyFile.path, "--passcode-stdin"],
            input: passcode + "\n")
    }

    /// ``migrate(_:database:keyFile:passcode:)``, sampling the process's peak resident memory
    /// (`VmHWM`) until it exits.
    /// - Returns: how it ended, and the last peak read, in bytes.
    static func migrateMeasuringPeak(_ home: Harness, database: String, keyFile: URL) throws -> (Harness.Result, Int) {
        let arguments = [
            "server", "migrate", "--from", home.paths.home.path, "--database", database, "--server-key-file", keyFile.path, "--passcode-stdin",
        ]
        let out = home.root.appendingPathComponent("migrate.out"), err = home.root.appendingPathComponent("migrate.err")
        for file in [out, err] { try #require(FileManager.default.createFile(atPath: file.path, contents: nil)) }
        let process = Process()
        process.executableURL = Harness.binaries.appendingPathComponent("tresor")
        process.arguments = arguments
        // One malloc arena: memory freed by one thread is reused by the next, so the peak
        // measures what the migration holds rather than how many threads freed something.
        process.environment = home.environment.merging(["MALLOC_ARENA_MAX": "1"]) { $1 }
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data((passcode + "\n").utf8))
        try input.fileHandleForWriting.close()
        var peak = 0
        while process.isRunning {
            if let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
            {
                peak = max(peak, kib * 1024)
            }
            usleep(5_000)
        }
        process.waitUntilEnded()
        let result = Harness.Result(
            status: process.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
            stderr: try String(contentsOf: err, encoding: .utf8))
        home.record(process.executableURL!, arguments, output: result.stdout + result.stderr)
        return (result, peak)
    }

    /// Signs `name` in on `server` (the migrated database), declaring its tokens secret.
    static func signIn(_ name: String, _ password: String, on server: WebServerAddress, _ harness: Harness) throws -> WebBrowser {
        var browser = WebBrowser(server)
        let answer = try browser.signIn(name, password)
        #expect(answer.status == 200, "\(name) signs in on the server with the password of the home: \(answer.status)")
        harness.secrets += [browser.token, browser.originToken].compactMap { $0 }
        return browser
    }

    static func notes(_ browser: WebBrowser, _ path: String = "/api/notes") throws -> [[String: Any]] {
        try #require(try browser.get(path).json?["notes"] as? [[String: Any]])
    }

    /// What a page sees of an account's notes: each note's summary fields that a move keeps,
    /// its body (or locked record) and its attachments' bytes.
    static func snapshot(_ browser: WebBrowser) throws -> [String: String] {
        var seen: [String: String] = [:]
        for (list, path) in [("notes", "/api/notes"), ("deleted", "/api/recently-deleted")] {
            for summary in try notes(browser, path) {
                let id = try #require(summary["id"] as? String)
                var line = "\(list)"
                for key in [
                    "title", "folder", "folderID", "isPinned", "created", "modified", "revision", "deleted", "isShared", "owner", "attachmentCount",
                ] {
                    line += " \(key)=\(summary[key] ?? "-")"
                }
                line += " generation=\((summary["lock"] as? [String: Any])?["generation"] ?? "-")"
                let opened = try #require(try browser.get("/api/notes/\(id)").json)
                line += " participants=\(opened["participants"] ?? "-")"
                if let locked = opened["locked"] as? [String: Any] {
                    line += " locked=" + ["salt", "iterations", "iv", "tag", "ciphertext"].map { "\(locked[$0] ?? "")" }.joined(separator: ",")
                } else {
                    line += " body=\(opened["body"] ?? "")"
                }
                for attachment in (opened["attachments"] as? [[String: Any]]) ?? [] {
                    let attachmentID = try #require(attachment["id"] as? String)
                    let bytes = try browser.get("/api/notes/\(id)/attachments/\(attachmentID)").body
                    line += " attachment=\(attachmentID),\(attachment["name"] ?? ""),\(attachment["kind"] ?? ""),\(bytes.count),"
                    line += SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
                }
                seen[id] = line
            }
        }
        return seen
    }

    static func rowCounts(_ database: String) async throws -> [String] {
        var counts: [String] = []
        for table in ["accounts", "passphrases", "folders", "notes", "participants", "attachments", "attachment_chunks", "attachment_uploads"] {
            counts.append("\(table)=\(try await TestPostgres.texts("SELECT COUNT(*)::text FROM \(table)", database: database).joined())")
        }
        return counts
    }

    @Test func movesWebAccountsNotesSharesAttachmentsAndLockedNotes() async throws {
        let home = try Harness()
        let embedded = try home.startWebDaemon(passcode: Self.passcode)
        let (alice, alicePassword) = try WebBrowser.registered("alice", on: embedded, home)
        let (bob, bobPassword) = try WebBrowser.registered("bob", on: embedded, home)
        let marker = "MIGRATE-MARKER-\(UUID().uuidString.prefix(8))"
        home.secrets.append(marker)

        // alice: a pinned note in a folder, one in Recently Deleted, one shared with bob holding
        // an attachment of four chunks, and one locked (with an attachment of two chunks).
        let pinned = try alice.createNote(title: "\(marker) pinned", body: "\(marker) pinned body", extra: ["folder": "Work", "isPinned": true])
        let deleted = try alice.createNote(title: "\(marker) deleted", body: "\(marker) deleted body")
        #expect(try alice.delete("/api/notes/\(deleted)").status == 204)
        let shared = try alice.createNote(title: "\(marker) shared", body: "\(marker) shared body")
        #expect(try alice.post("/api/notes/\(shared)/participants", ["name": "bob"]).status == 201)
        var bytes = Data(count: 3 * 1024 * 1024 + 4321)
        for index in stride(from: 0, to: bytes.count, by: 512) { bytes[index] = UInt8(truncatingIfNeeded: index / 512 &* 7) }
        bytes.replaceSubrange(0..<marker.utf8.count, with: Data(marker.utf8))
        let uploaded = try alice.request("POST", "/api/notes/\(shared)/attachments?kind=file&name=\(marker).bin", raw: bytes)
        #expect(uploaded.status == 201, "\(uploaded.text)")

        let passphrase = "e2e-migrate-passphrase-\(UUID().uuidString.prefix(8))"
        let hint = "\(marker) hint"
        home.secrets.append(passphrase)
        let iterations = try #require(try alice.get("/api/passphrase").json?["minimumIterations"] as? Int)
        let material = try WebLockedNotesTests.Material(passphrase, iterations: iterations, hint: hint)
        home.secrets.append(LockedNoteCrypto.passphraseProof(material.key).base64EncodedString())
        #expect(try alice.post("/api/passphrase", material.json).status == 200)
        let passphraseID = try #require((try alice.get("/api/passphrase").json?["current"] as? [String: Any])?["id"] as? Int)
        let lockedBody = "\(marker) locked body"
        let locked = try alice.createNote(title: "\(marker) locked", body: lockedBody)
        let image = Data((0..<(1024 * 1024 + 777)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let imageID = try #require(
            try alice.request("POST", "/api/notes/\(locked)/attachments?kind=image&name=scan.png", raw: image).json?["id"] as? String)
        let noteKey = LockedNoteCrypto.newNoteKey()
        let lockRequest = try WebLockedNotesTests().lockRequest(
            passphraseID: passphraseID, noteKey: noteKey, passphraseKey: material.key, body: lockedBody, attachments: [imageID: image])
        #expect(try alice.post("/api/notes/\(locked)/lock", lockRequest).status == 200)

        // bob: a note of his own; the local account: one that stays in the home.
        _ = try bob.createNote(title: "\(marker) bob", body: "\(marker) bob body", extra: ["folder": "Home"])
        #expect(try home.tresor(["note", "new"], input: "\(marker) local\n\(marker) local body\n").succeeded)

        let aliceBefore = try Self.snapshot(alice), bobBefore = try Self.snapshot(bob)
        #expect(aliceBefore.count == 4 && bobBefore.count == 2, "\(aliceBefore.count) \(bobBefore.count)")

        // The move, while the home's daemon runs.
        let database = try await TestPostgres.freshDatabase()
        let databaseName = TestPostgres.databaseName(of: database)
        let keyFile = try home.writeServerKey()
        let first = try Self.migrate(home, database: database, keyFile: keyFile)
        #expect(first.succeeded, "\(first.stdout)\(first.stderr)")
        #expect(first.stdout.contains("web accounts: 2 moved, 0 already present, 0 skipped"), "\(first.stdout)")
        #expect(first.stdout.contains("notes: 5 moved, 0 already present, 0 skipped"), "\(first.stdout)")
        #expect(first.stdout.contains("attachments: 2 moved"), "\(first.stdout)")
        #expect(first.stdout.contains("passphrase records: 1 moved"), "\(first.stdout)")
        #expect(first.stdout.contains("1 of its notes stay in the home"), "the local account's note is not moved: \(first.stdout)")
        #expect(first.stdout.contains("shares: 1 moved, 0 already present, 0 skipped"), "\(first.stdout)")
        #expect(first.stderr.contains("web accounts 2 of 2, notes 6 of 6, attachments 2 of 2"), "progress: \(first.stderr)")

        // Nothing readable in the database: no marker in any row.
        let dump = try await TestPostgres.dump(database: databaseName)
        #expect(!dump.isEmpty && !dump.contains(marker) && !dump.contains(marker.lowercased()), "a marker is in the clear in the database")
        #expect(!dump.contains(alicePassword) && !dump.contains(passphrase))
        let counts = try await Self.rowCounts(databaseName)

        // A server on that database serves them as the home did.
        let serverHarness = try Harness()
        let server = try serverHarness.startWebDaemon(
            passcode: Self.serverPasscode, extraArguments: ["--database", database, "--server-key-file", keyFile.path])
        let aliceThere = try Self.signIn("alice", alicePassword, on: server, serverHarness)
        let bobThere = try Self.signIn("bob", bobPassword, on: server, serverHarness)
        serverHarness.secrets += [marker, passphrase]
        #expect(try Self.snapshot(aliceThere) == aliceBefore)
        #expect(try Self.snapshot(bobThere) == bobBefore)
        #expect(try aliceThere.get("/api/notes/\(shared)/attachments/\(try #require(uploaded.json?["id"] as? String))").body == bytes)
        #expect(try Self.notes(aliceThere, "/api/recently-deleted").compactMap { $0["id"] as? String } == [deleted])
        #expect(try bobThere.get("/api/notes/\(shared)").json?["body"] as? String == "\(marker) shared body", "the share holds")
        #expect(try bobThere.get("/api/notes/\(pinned)").status == 404)
        var wrong = WebBrowser(server)
        #expect(try wrong.signIn("alice", bobPassword).status == 401)

        // The locked note opens in the "browser" with its passphrase, its image byte for byte.
        let state = try #require(try aliceThere.get("/api/passphrase").json)
        #expect((state["current"] as? [String: Any])?["hasHint"] as? Bool == true)
        let opened = try WebLockedNotesTests().open(aliceThere, locked, with: material.key)
        #expect(opened.body == lockedBody)
        let sealedChunks = try aliceThere.get("/api/notes/\(locked)/attachments/\(imageID)").body
        #expect(sealedChunks.count == image.count + 2 * 28, "two chunks sealed under the note key")

        // Again: everything already there, nothing written twice.
        let again = try Self.migrate(home, database: database, keyFile: keyFile)
        #expect(again.succeeded, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("web accounts: 0 moved, 2 already present, 0 skipped"), "\(again.stdout)")
        #expect(again.stdout.contains("shares: 0 moved, 1 already present, 0 skipped"), "\(again.stdout)")
        #expect(again.stdout.contains("notes: 0 moved, 5 already present, 0 skipped"), "\(again.stdout)")
        #expect(again.stdout.contains("attachments: 0 moved, 2 already present, 0 skipped"), "\(again.stdout)")
        #expect(try await Self.rowCounts(databaseName) == counts)
        #expect(try Self.snapshot(aliceThere) == aliceBefore)

        for output in [first.stdout + first.stderr, again.stdout + again.stderr] {
            #expect(!output.contains(marker) && !output.contains(alicePassword) && !output.contains(bobPassword) && !output.contains("hint"))
        }
        try home.expectNoSecretLeaked()
        try serverHarness.expectNoSecretLeaked()
    }

    @Test func finishesAfterAKillMidwayAndRefusesWhatItShould() async throws {
        let home = try Harness()
        let embedded = try home.startWebDaemon(passcode: Self.passcode)
        let (alice, alicePassword) = try WebBrowser.registered("alice", on: embedded, home)
        let marker = "MIGRATE-KILL-\(UUID().uuidString.prefix(8))"
        home.secrets.append(marker)
        let note = try alice.createNote(title: "\(marker) big", body: "\(marker) body")
        var bytes = Data(count: 30 * 1024 * 1024 + 5)
        for index in stride(from: 0, to: bytes.count, by: 1024) { bytes[index] = UInt8(truncatingIfNeeded: index / 1024) }
        let uploaded = try alice.request("POST", "/api/notes/\(note)/attachments?kind=file&name=big.bin", raw: bytes)
        let attachment = try #require(uploaded.json?["id"] as? String)
        _ = try alice.createNote(title: "\(marker) after", body: "\(marker) after body")

        let database = try await TestPostgres.freshDatabase()
        let databaseName = TestPostgres.databaseName(of: database)
        let keyFile = try home.writeServerKey()

        // A password in the URL on the command line: refused before anything is asked or written.
        let withPassword = database.replacingOccurrences(of: "://", with: "://").replacingOccurrences(of: "@", with: ":not-a-real-password@")
        let refused = try home.tresor(
            ["server", "migrate", "--from", home.paths.home.path, "--database", withPassword, "--server-key-file", keyFile.path, "--passcode-stdin"],
            input: Self.passcode + "\n")
        #expect(!refused.succeeded && refused.stderr.contains("PGPASSWORD"), "\(refused.stderr)")
        let direct = try home.run(
            Harness.binaries.appendingPathComponent("tresor-server-migrate"),
            ["--from", home.paths.home.path, "--database", withPassword, "--server-key-file", keyFile.path], input: Self.passcode + "\n")
        #expect(direct.status == 64 && direct.stderr.contains("PGPASSWORD"), "\(direct.stderr)")

        // A wrong passcode: a clear error, nothing written (not even the schema).
        let wrongPasscode = try Self.migrate(home, database: database, keyFile: keyFile, passcode: "not-the-passcode")
        #expect(!wrongPasscode.succeeded && wrongPasscode.stderr.lowercased().contains("passcode"), "\(wrongPasscode.stderr)")
        #expect(
            try await TestPostgres.texts(
                "SELECT COUNT(*)::text FROM information_schema.tables WHERE table_schema = current_schema()", database: databaseName) == ["0"])

        // Killed while it writes the 30 MiB attachment.
        let process = Process()
        process.executableURL = Harness.binaries.appendingPathComponent("tresor")
        process.arguments = [
            "server", "migrate", "--from", home.paths.home.path, "--database", database, "--server-key-file", keyFile.path, "--passcode-stdin",
        ]
        process.environment = home.environment
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data((Self.passcode + "\n").utf8))
        try input.fileHandleForWriting.close()
        var seen = ""
        let deadline = Date().addingTimeInterval(120)
        while !seen.contains("attachments 1 of 1"), Date() < deadline, process.isRunning {
            let data = errors.fileHandleForReading.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
        }
        usleep(150_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilEnded()
        home.record(process.executableURL!, process.arguments!, output: seen)
        #expect(process.terminationReason == .uncaughtSignal, "killed midway: \(seen)")
        let finished = try await TestPostgres.texts("SELECT COUNT(*)::text FROM attachments", database: databaseName)
        #expect(finished == ["0"], "the kill came before the attachment was complete")
        #expect(
            try await TestPostgres.texts("SELECT COUNT(*)::text FROM attachment_uploads", database: databaseName) == ["1"],
            "it was being written: an unfinished upload")

        // The rerun writes the 30 MiB attachment; a third run finds it there and only reads it.
        // Writing it costs a few chunks of memory more than reading it, not the attachment.
        let (rerun, peak) = try Self.migrateMeasuringPeak(home, database: database, keyFile: keyFile)
        #expect(rerun.succeeded, "\(rerun.stdout)\(rerun.stderr)")
        let (third, reading) = try Self.migrateMeasuringPeak(home, database: database, keyFile: keyFile)
        #expect(third.stdout.contains("attachments: 0 moved, 1 already present, 0 skipped"), "\(third.stdout)")
        #expect(
            peak > 0 && reading > 0 && peak - reading < 20 << 20,
            "writing 30 MiB grew the migrator's peak memory from \(reading >> 20) to \(peak >> 20) MiB")
        #expect(rerun.stdout.contains("web accounts: 0 moved, 1 already present"), "\(rerun.stdout)")
        #expect(rerun.stdout.contains("attachments: 1 moved, 0 already present"), "\(rerun.stdout)")
        #expect(try await TestPostgres.texts("SELECT COUNT(*)::text FROM attachment_uploads", database: databaseName) == ["0"])
        #expect(try await TestPostgres.texts("SELECT COUNT(*)::text FROM notes", database: databaseName) == ["2"])
        #expect(try await TestPostgres.texts("SELECT COUNT(*)::text FROM attachment_chunks", database: databaseName) == ["31"])

        let serverHarness = try Harness()
        let server = try serverHarness.startWebDaemon(
            passcode: Self.serverPasscode, extraArguments: ["--database", database, "--server-key-file", keyFile.path])
        let aliceThere = try Self.signIn("alice", alicePassword, on: server, serverHarness)
        #expect(try aliceThere.get("/api/notes/\(note)/attachments/\(attachment)").body == bytes, "complete and identical")
        #expect(try Self.notes(aliceThere).count == 2)
        try home.expectNoSecretLeaked()
        try serverHarness.expectNoSecretLeaked()
    }
}
