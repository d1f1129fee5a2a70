import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// An attachment goes out of the home a piece at a time: `tresor note export-attachment` of the
/// 256 MiB attachment raises neither tresord's nor the CLI's peak
/// resident memory by more than a fixed ceiling far below its size — the store opens it a chunk
/// at a time, the daemon writes each chunk to the socket as it is opened, and the CLI writes
/// each piece to the file as it arrives — and every byte comes back (docs/API.md, "Attachments on
/// the wire").
@Suite(.blocksItsThread, .serialized) struct AttachmentStreamingTests {
    static let passcode = "e2e-stream-passcode"
    static let size = 256 << 20
    /// Peak resident memory an export may add to either process, whatever the attachment's size.
    static let ceiling = 64 << 20

    @Test func exportingALargeAttachmentStaysWithinAFixedMemoryCeiling() throws {
        let harness = try Harness()
        harness.secrets = [Self.passcode]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let file = harness.root.appendingPathComponent("film.bin")
        try Self.writeGenerated(Self.size, to: file)
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "Film", "--body-stdin"], input: "big")
        let attached = try harness.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path])
        #expect(attached.byteCount == Self.size)

        let pid = try harness.status().pid
        // The attach above raised the daemon's peak: start it afresh from what it holds now.
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
        let daemonBefore = try #require(Self.memoryBytes(pid, "VmRSS"))
        let out = harness.root.appendingPathComponent("back.bin")
        let (exported, cliPeak) = try Self.runMeasuringPeak(harness, ["note", "export-attachment", note.id, attached.id, "--out", out.path])
        let daemonGrowth = try #require(Self.memoryBytes(pid, "VmHWM")) - daemonBefore
        #expect(exported.succeeded, "\(exported.stderr)")
        #expect(try Self.sha256(of: out) == Self.sha256(of: file), "the exported bytes differ from the attached ones")
        // The CLI's whole peak: a `tresor` process holds about 20 MiB before any attachment.
        #expect(cliPeak < Self.ceiling + (32 << 20), "tresor note export-attachment peaked at \(cliPeak >> 20) MiB for \(Self.size >> 20) MiB")
        #expect(daemonGrowth < Self.ceiling, "tresord's peak grew by \(daemonGrowth >> 20) MiB to answer with \(Self.size >> 20) MiB")
        print(
            "AttachmentStreamingTests: \(Self.size >> 20) MiB exported; tresor peak \(cliPeak >> 20) MiB, "
                + "tresord peak growth \(daemonGrowth >> 20) MiB")
    }

    /// A locked note's attachment streams both ways too: attaching 64 MiB to a locked note (its
    /// chunks sealed under the note key as they arrive) and exporting it with the passphrase (opened
    /// a chunk at a time) each raise tresord's peak by less than the fixed ceiling, byte for byte.
    @Test func aLockedNotesLargeAttachmentStreamsBothWays() throws {
        let harness = try Harness()
        let passphrase = "e2e-stream-passphrase"
        harness.secrets = [Self.passcode, passphrase]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let set = try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n")
        #expect(set.succeeded, "\(set.stderr)")
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "Plans", "--body-stdin"], input: "plans")
        #expect(try harness.tresor(["note", "lock", note.id]).succeeded)  // the session `set` opened
        let size = 64 << 20
        let file = harness.root.appendingPathComponent("scan.png")
        try Self.writeGenerated(size, to: file)

        let pid = try harness.status().pid
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
        var before = try #require(Self.memoryBytes(pid, "VmRSS"))
        let (attach, _) = try Self.runMeasuringPeak(
            harness, ["note", "attach", note.id, "--kind", "image", "--file", file.path, "--passphrase-stdin", "--json"], input: passphrase + "\n")
        let attachGrowth = try #require(Self.memoryBytes(pid, "VmHWM")) - before
        #expect(attach.succeeded, "\(attach.stderr)")
        let attached = try CLIJSON.decode(AttachmentInfo.self, from: Data(attach.stdout.utf8))
        #expect(attached.byteCount == size)
        #expect(attachGrowth < Self.ceiling, "tresord's peak grew by \(attachGrowth >> 20) MiB to seal \(size >> 20) MiB")

        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
        before = try #require(Self.memoryBytes(pid, "VmRSS"))
        let out = harness.root.appendingPathComponent("scan-back.png")
        let (exported, _) = try Self.runMeasuringPeak(
            harness, ["note", "export-attachment", note.id, attached.id, "--out", out.path, "--passphrase-stdin"], input: passphrase + "\n")
        let exportGrowth = try #require(Self.memoryBytes(pid, "VmHWM")) - before
        #expect(exported.succeeded, "\(exported.stderr)")
        #expect(try Self.sha256(of: out) == Self.sha256(of: file), "the exported bytes differ from the attached ones")
        #expect(exportGrowth < Self.ceiling, "tresord's peak grew by \(exportGrowth >> 20) MiB to open \(size >> 20) MiB")
        print(
            "AttachmentStreamingTests: locked \(size >> 20) MiB; tresord peak growth attach \(attachGrowth >> 20) MiB, export \(exportGrowth >> 20) MiB"
        )
    }

    /// An export that fails part way — the attachment's file damaged in its third chunk, so the
    /// daemon has sent two chunks when it finds out — leaves no file behind, and with `--force`
    /// leaves the file it was to replace as it was; an existing file is not overwritten without
    /// `--force`.
    @Test func anExportCutShortLeavesNoFileBehind() throws {
        let harness = try Harness()
        harness.secrets = [Self.passcode]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let file = harness.root.appendingPathComponent("five.bin")
        try Self.writeGenerated(5 << 20, to: file)
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "Five", "--body-stdin"], input: "five")
        let attached = try harness.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path])

        let existing = harness.root.appendingPathComponent("existing.bin")
        try Data("keep me".utf8).write(to: existing)
        let refused = try harness.tresor(["note", "export-attachment", note.id, attached.id, "--out", existing.path])
        #expect(!refused.succeeded && refused.stderr.contains("--force"))
        #expect(try Data(contentsOf: existing) == Data("keep me".utf8))
        #expect(try harness.tresor(["note", "export-attachment", note.id, attached.id, "--out", existing.path, "--force"]).succeeded)
        #expect(try Self.sha256(of: existing) == Self.sha256(of: file))
        try Data("keep me".utf8).write(to: existing)

        // One byte flipped two and a half MiB in: the third chunk no longer opens.
        let stored = try #require(FileManager.default.contentsOfDirectory(at: harness.paths.attachmentsFolder, includingPropertiesForKeys: nil).first)
        let handle = try FileHandle(forUpdating: stored)
        try handle.seek(toOffset: 5 << 19)
        let byte = try #require(handle.readData(ofLength: 1).first)
        try handle.seek(toOffset: 5 << 19)
        try handle.write(contentsOf: [byte ^ 0xFF])
        try handle.close()

        let out = harness.root.appendingPathComponent("cut.bin")
        let cut = try harness.tresor(["note", "export-attachment", note.id, attached.id, "--out", out.path])
        #expect(!cut.succeeded)
        #expect(!FileManager.default.fileExists(atPath: out.path), "a partial export was left behind")
        let forced = try harness.tresor(["note", "export-attachment", note.id, attached.id, "--out", existing.path, "--force"])
        #expect(!forced.succeeded)
        #expect(try Data(contentsOf: existing) == Data("keep me".utf8), "a failed --force export changed the file it was to replace")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: harness.root.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
        #expect(harness.daemonLog.contains("attachment get failed while answering"))
    }

    /// An export killed part way leaves nothing at the name it was writing: the bytes go to a
    /// hidden file beside it, renamed to that name only once whole and synced — never a short file
    /// that looks like the attachment. The next export to that name is not hindered.
    @Test func anExportKilledPartWayLeavesNothingAtItsName() throws {
        let harness = try Harness()
        harness.secrets = [Self.passcode]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let file = harness.root.appendingPathComponent("long.bin")
        try Self.writeGenerated(64 << 20, to: file)
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "Long", "--body-stdin"], input: "long")
        let attached = try harness.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path])

        let out = harness.root.appendingPathComponent("back.bin")
        let process = Process()
        process.executableURL = Harness.binaries.appendingPathComponent("tresor")
        process.arguments = ["note", "export-attachment", note.id, attached.id, "--out", out.path]
        process.environment = harness.environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Killed once a MiB of the 64 is written, wherever it is being written.
        var written = 0
        while process.isRunning && written < 1 << 20 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: harness.root.path)) ?? []
            written =
                names.filter { $0.contains("back.bin") }.compactMap { name in
                    (try? FileManager.default.attributesOfItem(atPath: harness.root.appendingPathComponent(name).path))?[.size] as? Int
                }.max() ?? 0
            if written < 1 << 20 { usleep(500) }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilEnded()
        try #require(process.terminationReason == .uncaughtSignal, "the export ended before it was killed")
        #expect(!FileManager.default.fileExists(atPath: out.path), "a killed export left a partial file at its name")

        let again = try harness.tresor(["note", "export-attachment", note.id, attached.id, "--out", out.path])
        #expect(again.succeeded, "\(again.stderr)")
        #expect(try Self.sha256(of: out) == Self.sha256(of: file))
    }

    /// A large attachment damaged in its first chunk is refused with the daemon's error — the
    /// chunk is opened before the answer begins —, not an answer cut short at its first byte.
    @Test func aDamagedFirstChunkIsAnErrorAnswer() throws {
        let harness = try Harness()
        harness.secrets = [Self.passcode]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let file = harness.root.appendingPathComponent("three.bin")
        try Self.writeGenerated(3 << 20, to: file)
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "Three", "--body-stdin"], input: "three")
        let attached = try harness.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path])
        // One byte flipped half a MiB in: the first chunk no longer opens.
        let stored = try #require(FileManager.default.contentsOfDirectory(at: harness.paths.attachmentsFolder, includingPropertiesForKeys: nil).first)
        let handle = try FileHandle(forUpdating: stored)
        try handle.seek(toOffset: 1 << 19)
        let byte = try #require(handle.readData(ofLength: 1).first)
        try handle.seek(toOffset: 1 << 19)
        try handle.write(contentsOf: [byte ^ 0xFF])
        try handle.close()

        let out = harness.root.appendingPathComponent("first.bin")
        let refused = try harness.json(ErrorResponse.self, ["note", "export-attachment", note.id, attached.id, "--out", out.path])
        #expect(refused.error.code == .decode, "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        #expect(!harness.daemonLog.contains("attachment get failed while answering"), "the answer had begun")
    }

    /// Writes `size` bytes to `url` a MiB at a time, no two MiB alike (a chunk out of place shows).
    static func writeGenerated(_ size: Int, to url: URL) throws {
        try #require(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in block.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            block[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        for index in 0..<(size >> 20) {
            withUnsafeBytes(of: UInt32(index)) { block.replaceSubrange(0..<4, with: $0) }
            try handle.write(contentsOf: block)
        }
    }

    /// `tresor` with `arguments`, sampling its peak resident memory (`VmHWM`) until it exits.
    /// - Returns: how it ended, and its peak, in bytes.
    static func runMeasuringPeak(_ harness: Harness, _ arguments: [String], input: String = "") throws -> (Harness.Result, Int) {
        let out = harness.root.appendingPathComponent("cli.out"), err = harness.root.appendingPathComponent("cli.err")
        let stdin = harness.root.appendingPathComponent("cli.in")
        for file in [out, err] { try #require(FileManager.default.createFile(atPath: file.path, contents: nil)) }
        try #require(FileManager.default.createFile(atPath: stdin.path, contents: Data(input.utf8)))
        defer { unlink(stdin.path) }
        let process = Process()
        process.executableURL = Harness.binaries.appendingPathComponent("tresor")
        process.arguments = arguments
        process.environment = harness.environment
        process.standardInput = try FileHandle(forReadingFrom: stdin)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        var peak = 0
        while process.isRunning {
            // Nil once it has exited, before it is reaped.
            if let bytes = memoryBytes(process.processIdentifier, "VmHWM") { peak = max(peak, bytes) }
            usleep(2_000)
        }
        process.waitUntilEnded()
        let result = Harness.Result(
            status: process.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
            stderr: try String(contentsOf: err, encoding: .utf8))
        harness.record(process.executableURL!, arguments, output: result.stdout + result.stderr)
        return (result, peak)
    }

    /// A field of `/proc/PID/status` given in kB, in bytes; nil when the process has none.
    static func memoryBytes(_ pid: Int32, _ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "").map { $0 * 1024 }
    }

    /// The SHA-256 of the file at `url`, by `sha256sum`.
    static func sha256(of url: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [url.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilEnded()
        try #require(process.terminationStatus == 0)
        return String(text.prefix(64))
    }
}
