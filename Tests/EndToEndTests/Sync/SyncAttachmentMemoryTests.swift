import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// An attachment syncs a piece at a time both ways (docs/SYNC.md, "Attachments"): one of
/// 128 MiB goes from one device to the server and on to another while neither device's
/// `tresord` grows its peak resident memory by more than a fixed ceiling of half its size (a
/// daemon that held it whole once would pass it) — the sender streams it from its sealed file a
/// chunk at a time, the receiver seals and writes each chunk as it arrives — and every byte
/// arrives. 128 MiB, not the largest a home takes (256 MiB), keeps the test under 20 s; the
/// ceiling does not depend on the size.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncAttachmentMemoryTests {
    static let size = 128 << 20
    /// Peak resident memory a sync may add to either daemon, whatever the attachment's size.
    static let ceiling = 64 << 20

    @Test func aLargeAttachmentSyncsBothWaysWithinAFixedMemoryCeiling() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try SyncNotesE2ETests.newNote(laptop, "Film\nthe holidays")
        let file = laptop.root.appendingPathComponent("film.bin")
        try AttachmentStreamingTests.writeGenerated(Self.size, to: file)
        let attached = try laptop.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path])
        _ = try SyncNotesE2ETests.syncNow(phone)  // both daemons have synced once: what they hold for that is there

        var growth: [Int] = []
        for device in [laptop, phone] {
            let pid = try device.status().pid
            try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
            let before = try #require(AttachmentStreamingTests.memoryBytes(pid, "VmRSS"))
            let started = Date()
            _ = try SyncNotesE2ETests.syncNow(device)
            growth.append(try #require(AttachmentStreamingTests.memoryBytes(pid, "VmHWM")) - before)
            print(
                "SyncAttachmentMemoryTests: \(Self.size >> 20) MiB synced in \(Int(Date().timeIntervalSince(started))) s, peak growth \(growth.last! >> 20) MiB"
            )
        }
        #expect(growth.allSatisfy { $0 < Self.ceiling }, "peak growth \(growth.map { $0 >> 20 }) MiB for \(Self.size >> 20) MiB")
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Film" })
        let out = phone.root.appendingPathComponent("film-back.bin")
        #expect(try phone.tresor(["note", "export-attachment", onPhone.id, attached.id, "--out", out.path]).succeeded)
        #expect(try AttachmentStreamingTests.sha256(of: out) == AttachmentStreamingTests.sha256(of: file))
    }
}
