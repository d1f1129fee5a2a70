import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// An attachment syncs a piece at a time both ways (docs/SYNC.md, "Attachments"): one of
/// 512 MiB — twice the old limit — goes from one device to the server (PostgreSQL) and on to
/// another while neither device's `tresord` nor the server instance grows its peak resident
/// memory by more than a fixed ceiling (a process that held it whole once would pass it): the
/// sender streams it from its sealed file a chunk at a time, the server writes each chunk as it
/// arrives and reads each as it answers, the receiver seals and writes each as it arrives — and
/// every byte arrives. The server's request time limit is set to 2 s, far below what the upload
/// takes: a body that keeps arriving is not cut; the account's quota is raised above the size
/// (it is 1 GiB unless set, and applies to a device's attachments as to a browser's). `TRESOR_SYNC_ATTACHMENT_MIB=2048` runs it with
/// 2 GiB (BENCHMARKS.md, "Sync"); the ceiling does not depend on the size.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncAttachmentMemoryTests {
    static let size = (ProcessInfo.processInfo.environment["TRESOR_SYNC_ATTACHMENT_MIB"].flatMap(Int.init) ?? 512) << 20
    /// Peak resident memory a sync may add to either daemon or the server, whatever the attachment's size.
    static let ceiling = 64 << 20

    @Test func aLargeAttachmentSyncsBothWaysWithinAFixedMemoryCeiling() async throws {
        let (cluster, _, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser(configuration: [
            "webRequestSeconds": 2, "webAccountQuotaBytes": 2 * Self.size,
        ])
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try SyncNotesE2ETests.newNote(laptop, "Film\nthe holidays")
        let file = laptop.root.appendingPathComponent("film.bin")
        try AttachmentStreamingTests.writeGenerated(Self.size, to: file)
        let attached = try laptop.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path])
        #expect(attached.byteCount == Self.size)
        _ = try SyncNotesE2ETests.syncNow(phone)  // both daemons have synced once: what they hold for that is there
        let server = try cluster.harnesses[0].status().pid

        var growth: [String: Int] = [:]
        for (name, device) in [("laptop", laptop), ("phone", phone)] {
            let pids = [(name, try device.status().pid), ("server (\(name))", server)]
            var before: [String: Int] = [:]
            for (process, pid) in pids {
                try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
                let resident: Int = try #require(AttachmentStreamingTests.memoryBytes(pid, "VmRSS"))
                before[process] = resident
            }
            let started = Date()
            _ = try SyncNotesE2ETests.syncNow(device)
            let seconds = Date().timeIntervalSince(started)
            for (process, pid) in pids {
                growth[process] = try #require(AttachmentStreamingTests.memoryBytes(pid, "VmHWM")) - before[process]!
            }
            print(
                "SyncAttachmentMemoryTests: \(Self.size >> 20) MiB synced by the \(name) in \(Int(seconds)) s; peak growth: "
                    + pids.map { "\($0.0) \(growth[$0.0]! >> 20) MiB" }.joined(separator: ", "))
        }
        for device in [laptop, phone] {
            let waiting = try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"]).attachments
            #expect(waiting == SyncAttachmentsStatus(toSend: 0, toFetch: 0, serverTakesNone: false, refused: []), "\(String(describing: waiting))")
        }
        #expect(growth.values.allSatisfy { $0 < Self.ceiling }, "peak growth \(growth.mapValues { $0 >> 20 }) MiB for \(Self.size >> 20) MiB")
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Film" })
        let listed = try #require(try phone.json(OpenedNote.self, ["note", "show", onPhone.id]).attachments.first)
        #expect(listed.byteCount == Self.size)
        let out = phone.root.appendingPathComponent("film-back.bin")
        #expect(try phone.tresor(["note", "export-attachment", onPhone.id, attached.id, "--out", out.path]).succeeded)
        #expect(try AttachmentStreamingTests.sha256(of: out) == AttachmentStreamingTests.sha256(of: file))
        try? FileManager.default.removeItem(at: out)
        try? FileManager.default.removeItem(at: file)
    }
}
