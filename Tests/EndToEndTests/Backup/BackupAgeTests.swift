import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The backup is an age file: Debian's stock `age -d` opens it, and what it prints is the record
/// stream docs/FORMAT.md describes — read here by a parser of this test's own, not Tresor's.
/// And the reverse: an age file that `age -p` made is not taken for a backup.
@Suite(.blocksItsThread, .serialized, .enabled(if: AgeCommand.isInstalled, "needs Debian's age (scripts/test installs it)"))
struct BackupAgeTests {
    @Test func stockAgeDecryptsABackupToTheDocumentedRecordStream() throws {
        let home = try BackupHome()
        try home.addEveryItem()
        try home.addNotes()
        let file = home.harness.root.appendingPathComponent("age.tresor-backup")
        let report = try home.backup(to: file)
        let plain = home.harness.root.appendingPathComponent("payload")
        try AgeCommand.run(["-d", "-o", plain.path, file.path], passphrase: home.backupPassphrase)
        let payload = try Data(contentsOf: plain)

        let magic = Data("tresor-backup\n".utf8)
        #expect(payload.prefix(magic.count) == magic)
        #expect(payload[magic.count] == 1, "record stream version 1")
        var offset = magic.count + 1
        var kinds: [UInt8] = []
        var json: [UInt8: [[String: Any]]] = [:]
        var pieceBytes = 0
        while offset < payload.count {
            let kind = payload[offset]
            let length = payload[(offset + 1)..<(offset + 5)].reduce(0) { $0 << 8 | Int($1) }
            let body = payload[(offset + 5)..<(offset + 5 + length)]
            offset += 5 + length
            kinds.append(kind)
            switch kind {
            case UInt8(ascii: "B"): pieceBytes += body.count
            case UInt8(ascii: "E"): #expect(body.isEmpty)
            default:
                let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any], "kind \(kind) holds a JSON object")
                json[kind, default: []].append(object)
            }
        }
        #expect(offset == payload.count, "records fill the payload exactly")
        #expect(kinds.first == UInt8(ascii: "M") && kinds.last == UInt8(ascii: "Z"))
        let manifest = try #require(json[UInt8(ascii: "M")]?.first)
        #expect(manifest["format"] as? String == "tresor-backup" && manifest["version"] as? Int == 1)
        #expect((manifest["keychains"] as? [String]) == ["login"])
        // Items in the clear inside the payload, device-bound ones sealed; none passcode-set.
        let items = json[UInt8(ascii: "I")] ?? []
        #expect(items.count == 4 * 3 + 1)
        #expect(items.allSatisfy { ($0["item"] as? [String: Any])?["secret"] is String })
        let deviceBound = json[UInt8(ascii: "D")] ?? []
        #expect(deviceBound.count == 4 * 3)
        #expect(deviceBound.allSatisfy { $0["sealed"] is String && $0["protectionClass"] as? String != "whenPasscodeSetThisDeviceOnly" })
        #expect((json[UInt8(ascii: "N")] ?? []).count == report.count(.note, .backedUp))
        let locked = try #require((json[UInt8(ascii: "N")] ?? []).first { $0["locked"] != nil })
        #expect(locked["body"] == nil, "a locked note carries its ciphertext, no body")
        // The trailer counts what came before it.
        let trailer = try #require(json[UInt8(ascii: "Z")]?.first)
        let counted = try #require(trailer["records"] as? [String: Int])
        #expect(counted.values.reduce(0, +) == kinds.count - 1)
        #expect(trailer["attachmentBytes"] as? Int == pieceBytes)
        #expect(pieceBytes > 3_000_000)
    }

    /// `backup create --out -` writes the backup to standard output — stock `age` opens what a
    /// pipe received, the report goes to standard error — and leaves nothing in the home, also
    /// when the reader goes away early.
    @Test func aBackupWrittenToStandardOutputIsOneStockAgeOpensAndLeavesNothingBehind() throws {
        let home = try BackupHome()
        try home.newNote("piped")
        let file = home.harness.root.appendingPathComponent("piped.age")
        let tresor = Harness.binaries.appendingPathComponent("tresor").path
        let (command, input) = home.createCommand(out: "-")
        // The backup waits in a folder of $TMPDIR on its way out: nothing may stay there.
        let temporary = home.harness.root.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let piped = try home.harness.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "TMPDIR=\"\(temporary.path)\" exec \"$0\" \"$@\" > \"\(file.path)\"", tresor, "--home", home.harness.paths.home.path] + command,
            input: input)
        try expectSucceeded(piped)
        #expect(piped.stdout.isEmpty && piped.stderr.contains("1 note to standard output"), "\(piped.stderr)")
        let plain = home.harness.root.appendingPathComponent("piped.payload")
        try AgeCommand.run(["-d", "-o", plain.path, file.path], passphrase: home.backupPassphrase)
        #expect(try Data(contentsOf: plain).prefix(14) == Data("tresor-backup\n".utf8))

        let cut = try home.harness.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "set -o pipefail; TMPDIR=\"\(temporary.path)\" \"$0\" \"$@\" | true", tresor, "--home", home.harness.paths.home.path] + command,
            input: input)
        #expect(cut.status == 1 && cut.stderr.contains("standard output") && !cut.stderr.contains("Backed up"), "\(cut.status) \(cut.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.path)
        #expect(left.isEmpty, "\(left)")
    }

    /// An age file of the same passphrase whose payload is not a record stream.
    @Test func anAgeFileThatIsNotABackupIsRefusedAndTheHomeIsLeftByteForByte() throws {
        let home = try BackupHome()
        try home.newNote("own")
        let input = home.harness.root.appendingPathComponent("text"), file = home.harness.root.appendingPathComponent("foreign.age")
        try Data("just some text, not a backup\n".utf8).write(to: input)
        try AgeCommand.run(["-p", "-o", file.path, input.path], passphrase: home.backupPassphrase)
        let before = try home.homeSnapshot()
        let (result, _) = try home.restore(file, passphrase: home.backupPassphrase)
        #expect(!result.succeeded && result.stdout.contains("not a Tresor backup"), "\(result.stdout)")
        #expect(try home.homeSnapshot() == before)
    }
}
