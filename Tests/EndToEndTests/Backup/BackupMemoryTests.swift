import Foundation
import Testing
import TresorKeybag
import TresorKit
import TresorNotes
import TresorProtocol
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A backup streams: a 2 GiB attachment goes into a backup and out into another home while the
/// daemon's peak resident memory grows by no more than a fixed ceiling — whatever the size, a
/// record and a chunk at a time (docs/FORMAT.md, "Backups").
///
/// The home is given its attachment in this process, by a `NotesStore` whose upload limit is
/// raised (the daemon takes at most 256 MiB in one upload; a backup carries any size). Needs
/// 8 GiB of free disk: the attachment, the backup and the restored copy.
@Suite(.blocksItsThread, .serialized, .enabled(if: freeDiskBytes() > 8 << 30, "needs 8 GiB of free disk"))
struct BackupMemoryTests {
    static let size = 2 << 30
    /// Peak RSS growth allowed to a backup or a restore of any size (the scrypt run at work
    /// factor 14 takes 16 MiB of it).
    static let ceiling = 64 << 20

    @Test func aTwoGiBAttachmentIsBackedUpAndRestoredWithinAFixedMemoryCeiling() throws {
        let home = try BackupHome()
        let note = try home.newNote("big")
        home.harness.stopDaemon()
        try Self.addAttachment(of: Self.size, to: note, home: home)
        try home.harness.startDaemon()
        try expectSucceeded(home.harness.tresor(["unlock", "--passcode-stdin"], input: home.passcode + "\n"))

        let file = home.harness.root.appendingPathComponent("big.tresor-backup")
        let backupGrowth = try Self.peakGrowth(of: home.harness) { _ = try home.backup(to: file) }
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0 > Self.size)
        #expect(backupGrowth < Self.ceiling, "the backup grew the daemon's peak memory by \(backupGrowth >> 20) MiB")

        let other = try BackupHome(name: "b")
        other.harness.secrets += home.harness.secrets
        var report: BackupReport?
        let restoreGrowth = try Self.peakGrowth(of: other.harness) { report = try other.restore(file, passphrase: home.backupPassphrase).1 }
        #expect(report?.count(.attachment, .restored) == 1)
        #expect(restoreGrowth < Self.ceiling, "the restore grew the daemon's peak memory by \(restoreGrowth >> 20) MiB")
        let shown = try other.harness.json(OpenedNote.self, ["note", "show", note])
        #expect(shown.attachments.map(\.byteCount) == [Self.size])
        print("BackupMemoryTests: peak RSS growth, backup \(backupGrowth >> 20) MiB, restore \(restoreGrowth >> 20) MiB")
    }

    /// Adds an attachment of `size` bytes to `note`, a MiB at a time, in this process.
    static func addAttachment(of size: Int, to note: String, home: BackupHome) throws {
        let keybag = try Keybag.open(paths: home.harness.paths)
        try keybag.unlock(passcode: try Passcode(home.passcode))
        let store = try NotesStore(paths: home.harness.paths, keybag: keybag, settings: .production.withAttachmentByteLimit(size))
        let upload = try store.beginAttachment(to: note, kind: .file, name: "big")
        var piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        for index in 0..<(size >> 20) {
            piece[0] = UInt8(truncatingIfNeeded: index)
            try upload.append(piece)
        }
        _ = try upload.finish()
    }

    /// How much `body` raised the peak resident memory of the harness's daemon (`VmHWM`, reset
    /// before through `/proc/PID/clear_refs`).
    static func peakGrowth(of harness: Harness, _ body: () throws -> Void) throws -> Int {
        let pid = try harness.status().pid
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
        let before = try memory(pid, "VmRSS")
        try body()
        return try memory(pid, "VmHWM") - before
    }

    static func memory(_ pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) * 1024
    }
}

/// The bytes free for this user in the temporary folder's file system.
func freeDiskBytes() -> Int {
    var info = statvfs()
    guard statvfs(FileManager.default.temporaryDirectory.path, &info) == 0 else { return 0 }
    return Int(info.f_bavail) * Int(info.f_frsize)
}
