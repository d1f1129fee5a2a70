import Crypto
import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// `tresor sync now` with attachments (docs/SYNC.md, "Attachments"): two device homes, each with
/// its own `tresord`, joined to a real server instance; an attachment added with
/// `tresor note attach` on one is on the other byte for byte, and one removed on either is gone
/// from both.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncAttachmentsE2ETests {
    /// A few MiB of random bytes, not a whole number of chunks.
    static let size = 3 << 20 + 12345

    @Test func anAttachmentAddedOnOneDeviceIsOnTheOtherByteForByteAndARemovalGoesBack() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try SyncNotesE2ETests.newNote(laptop, "Scans\nthe passport")
        let bytes = Data((0..<Self.size).map { _ in UInt8.random(in: 0...255) })
        let file = laptop.root.appendingPathComponent("passport.bin")
        try bytes.write(to: file)
        let attached = try laptop.json(
            AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path, "--name", "-"], input: "passport.bin\n")
        #expect(attached.byteCount == Self.size)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)

        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Scans" })
        let listed = try phone.json(OpenedNote.self, ["note", "show", onPhone.id]).attachments
        #expect(listed.map(\.id) == [attached.id], "the attachment keeps its id on every device")
        #expect(listed.first?.name == "passport.bin" && listed.first?.kind == .file && listed.first?.byteCount == Self.size)
        let out = phone.root.appendingPathComponent("passport-back.bin")
        let exported = try phone.tresor(["note", "export-attachment", onPhone.id, attached.id, "--out", out.path])
        #expect(exported.succeeded, "\(exported.stderr)")
        #expect(try Data(contentsOf: out) == bytes, "the attachment on the other device differs")

        // Nothing goes twice. The laptop takes its note back once (the upload changed it on the
        // server: its modification date and revision), then both are up to date.
        _ = try SyncNotesE2ETests.syncNow(laptop)
        for device in [laptop, phone] {
            let again = try SyncNotesE2ETests.syncNow(device)
            #expect(again == SyncNowNotes(sent: 0, applied: 0, conflictCopies: 0, waiting: 0), "\(again)")
        }
        #expect(try laptop.json(OpenedNote.self, ["note", "show", note.id]).attachments.map(\.id) == [attached.id])

        // Removed on the phone: gone from the laptop at its next sync.
        let detached = try phone.tresor(["note", "detach", onPhone.id, attached.id])
        #expect(detached.succeeded, "\(detached.stderr)")
        _ = try SyncNotesE2ETests.syncNow(phone)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try laptop.json(OpenedNote.self, ["note", "show", note.id]).attachments.isEmpty)
        #expect(try phone.json(OpenedNote.self, ["note", "show", onPhone.id]).attachments.isEmpty)
        // The laptop's file of it is gone with it: only the note's database and no attachment file.
        let left = try FileManager.default.contentsOfDirectory(atPath: laptop.paths.attachmentsFolder.path)
        #expect(left.isEmpty, "attachment files left on the laptop: \(left.count)")
    }

    @Test func anAttachmentAddedOnTheOtherSideAfterTheNoteSyncedGoesToo() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try SyncNotesE2ETests.newNote(laptop, "Receipts\nmarch")
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Receipts" })

        // Added on the phone to the note both have: it reaches the laptop.
        let bytes = Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255) })
        let file = phone.root.appendingPathComponent("receipt.bin")
        try bytes.write(to: file)
        let attached = try phone.json(
            AttachmentInfo.self, ["note", "attach", onPhone.id, "--kind", "image", "--file", file.path, "--name", "-"], input: "receipt.png\n")
        _ = try SyncNotesE2ETests.syncNow(phone)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        let onLaptop = try laptop.json(OpenedNote.self, ["note", "show", note.id]).attachments
        #expect(onLaptop.map(\.id) == [attached.id] && onLaptop.first?.kind == .image)
        let out = laptop.root.appendingPathComponent("receipt-back.bin")
        #expect(try laptop.tresor(["note", "export-attachment", note.id, attached.id, "--out", out.path]).succeeded)
        #expect(try Data(contentsOf: out) == bytes)
        // And the phone, syncing again, neither sends it again nor loses it.
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try phone.json(OpenedNote.self, ["note", "show", onPhone.id]).attachments.map(\.id) == [attached.id])
        #expect(!laptop.daemonLog.contains("receipt.png") && !phone.daemonLog.contains("receipt.png"))
    }

    @Test func aLockedNotesAttachmentTravelsSealedAndOpensOnTheOtherDeviceWithThePassphrase() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let passphrase = "e2e-attach-passphrase-" + UUID().uuidString.prefix(8)
        let set = try laptop.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n")
        #expect(set.succeeded, "\(set.stderr)")
        let note = try SyncNotesE2ETests.newNote(laptop, "Vault\nthe deed")
        #expect(try laptop.tresor(["note", "lock", note.id]).succeeded)
        // Two chunks and a bit: the sealed chunks' sizes and order are checked on the way.
        let bytes = Data((0..<((2 << 20) + 4321)).map { _ in UInt8.random(in: 0...255) })
        let file = laptop.root.appendingPathComponent("deed.bin")
        try bytes.write(to: file)
        let attached = try laptop.json(
            AttachmentInfo.self, ["note", "attach", note.id, "--kind", "image", "--file", file.path, "--name", "deed.png"])
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)

        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Vault" })
        #expect(onPhone.isLocked)
        let out = phone.root.appendingPathComponent("deed-back.bin")
        let wrong = try phone.tresor(
            ["note", "export-attachment", onPhone.id, attached.id, "--out", out.path, "--passphrase-stdin"], input: "not-the-passphrase\n")
        #expect(!wrong.succeeded && !FileManager.default.fileExists(atPath: out.path))
        let exported = try phone.tresor(
            ["note", "export-attachment", onPhone.id, attached.id, "--out", out.path, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(exported.succeeded, "\(exported.stderr)")
        #expect(try Data(contentsOf: out) == bytes, "the locked note's attachment differs on the other device")
        for device in [laptop, phone] {
            #expect(!device.daemonLog.contains(passphrase) && !device.daemonLog.contains("deed.png"))
        }
    }
}
