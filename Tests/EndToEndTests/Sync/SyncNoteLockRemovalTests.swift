import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// A lock removed on one device travels (docs/SYNC.md, "Notes"): two device homes, each with its
/// own `tresord`, and the server's web client. The device that removed the lock, with the
/// passphrase, sends the opened body — and first each attachment's plaintext; the server and the
/// other device hold the note unlocked with its attachments byte for byte — and a lock removed
/// from a version older than a locked edit made meanwhile keeps the edit locked and the unlocked
/// version beside it.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncNoteLockRemovalTests {
    static func setPassphrase(_ device: Harness, _ passphrase: String) throws {
        let set = try device.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n")
        #expect(set.succeeded, "\(set.stderr)")
    }

    static func removeLock(_ device: Harness, _ id: String, _ passphrase: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let removed = try device.tresor(["note", "unlock", id, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(removed.succeeded, "\(removed.stderr)", sourceLocation: sourceLocation)
    }

    @Test func aLockRemovedOnOneDeviceIsRemovedOnTheServerAndTheOtherDevice() async throws {
        let (cluster, browser, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let passphrase = "e2e-unlock-passphrase-" + UUID().uuidString.prefix(8)
        try Self.setPassphrase(laptop, passphrase)
        let note = try SyncNotesE2ETests.newNote(laptop, "Safe\ne2e-unlock-marker 1234")
        #expect(try laptop.tresor(["note", "lock", note.id]).succeeded)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try SyncNotesE2ETests.syncNow(phone).applied == 1)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Safe" })
        #expect(onPhone.isLocked)

        // Removed on the laptop, with the passphrase: it goes, and nothing waits.
        try Self.removeLock(laptop, note.id, passphrase)
        let sent = try SyncNotesE2ETests.syncNow(laptop)
        #expect(sent.sent == 1 && sent.waiting == 0, "\(sent)")
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).notesWaiting == 0)

        // The server holds it unlocked: the web client reads its body.
        let listed = try #require((try browser.get("/api/notes").json?["notes"] as? [[String: Any]])?.first { $0["title"] as? String == "Safe" })
        let detail = try browser.get("/api/notes/\(try #require(listed["id"] as? String))")
        #expect(detail.status == 200 && detail.json?["body"] as? String == "Safe\ne2e-unlock-marker 1234", "\(detail.text)")
        #expect(detail.json?["locked"] == nil)

        // The phone, which never had the passphrase typed, opens it with none.
        #expect(try SyncNotesE2ETests.syncNow(phone).applied == 1)
        let unlocked = try phone.json(OpenedNote.self, ["note", "show", onPhone.id])
        #expect(!unlocked.summary.isLocked)
        #expect(unlocked.body == "Safe\ne2e-unlock-marker 1234")

        // From now on it is an unlocked note like any: an edit on the phone merges on the laptop.
        try SyncNotesE2ETests.edit(phone, onPhone.id, body: "Safe\ne2e-unlock-marker 1234\nphone")
        #expect(try SyncNotesE2ETests.syncNow(phone).sent == 1)
        #expect(try SyncNotesE2ETests.syncNow(laptop).applied == 1)
        #expect(try SyncNotesE2ETests.notes(laptop)["Safe"]?.body == "Safe\ne2e-unlock-marker 1234\nphone")
        for device in [laptop, phone] {
            #expect(!device.daemonLog.contains("e2e-unlock-marker") && !device.daemonLog.contains(passphrase))
        }
    }

    /// The phone edits the locked note while the laptop removes its lock from the version before:
    /// no key on the server to merge with, so the note keeps its lock and the phone's edit, and the
    /// laptop's unlocked version becomes its conflict copy — on both devices.
    @Test func aLockRemovedFromAnOlderVersionKeepsTheLockedEditAndAnUnlockedCopy() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let passphrase = "e2e-unlock-passphrase-" + UUID().uuidString.prefix(8)
        try Self.setPassphrase(laptop, passphrase)
        let note = try SyncNotesE2ETests.newNote(laptop, "Vault\nfirst")
        #expect(try laptop.tresor(["note", "lock", note.id]).succeeded)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Vault" })
        _ = try phone.json(OpenedNote.self, ["note", "show", onPhone.id, "--passphrase-stdin"], input: passphrase + "\n")
        try SyncNotesE2ETests.edit(phone, onPhone.id, body: "Vault\nfirst\nphone")
        #expect(try SyncNotesE2ETests.syncNow(phone).sent == 1)

        try Self.removeLock(laptop, note.id, passphrase)
        #expect(try SyncNotesE2ETests.syncNow(laptop).conflictCopies == 1)
        _ = try SyncNotesE2ETests.syncNow(phone)
        for device in [laptop, phone] {
            let notes = try device.json([NoteSummary].self, ["note", "list"])
            #expect(notes.count == 2, "\(notes.map(\.title))")
            let locked = try #require(notes.first { $0.title == "Vault" })
            #expect(locked.isLocked)
            #expect(
                try device.json(OpenedNote.self, ["note", "show", locked.id, "--passphrase-stdin"], input: passphrase + "\n").body
                    == "Vault\nfirst\nphone")
            let copy = try #require(notes.first { $0.title.hasPrefix("Vault (conflict copy") }, "\(notes.map(\.title))")
            #expect(!copy.isLocked)
            #expect(try device.json(OpenedNote.self, ["note", "show", copy.id]).body == "Vault\nfirst")
        }
    }

    /// A locked note with two attachments, of 2 MiB and a bit and of a few bytes, made on
    /// `device` and synced; its id and the attachments' ids and bytes.
    static func lockedNoteWithTwoAttachments(_ device: Harness, _ passphrase: String) throws -> (
        note: String, attachments: [(id: String, bytes: Data)]
    ) {
        try setPassphrase(device, passphrase)
        let note = try SyncNotesE2ETests.newNote(device, "Deeds\ne2e-unlock-attach-marker")
        var attachments: [(id: String, bytes: Data)] = []
        for (index, size) in [(2 << 20) + 777, 300].enumerated() {
            let bytes = Data((0..<size).map { _ in UInt8.random(in: 0...255) })
            let file = device.root.appendingPathComponent("deed\(index).bin")
            try bytes.write(to: file)
            let attached = try device.json(
                AttachmentInfo.self, ["note", "attach", note.id, "--kind", "image", "--file", file.path, "--name", "deed\(index).png"])
            attachments.append((attached.id, bytes))
        }
        #expect(try device.tresor(["note", "lock", note.id]).succeeded)
        _ = try SyncNotesE2ETests.syncNow(device)
        return (note.id, attachments)
    }

    /// Note `id`'s attachments on `device` as their bytes by id, exported with no passphrase.
    static func exportedAttachments(_ device: Harness, _ id: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Data] {
        var found: [String: Data] = [:]
        for attachment in try device.json(OpenedNote.self, ["note", "show", id]).attachments {
            let out = device.root.appendingPathComponent("exported-\(attachment.id).bin")
            let exported = try device.tresor(["note", "export-attachment", id, attachment.id, "--out", out.path])
            #expect(exported.succeeded, "\(exported.stderr)", sourceLocation: sourceLocation)
            found[attachment.id] = try? Data(contentsOf: out)
        }
        return found
    }

    @Test func aLockRemovedFromANoteWithAttachmentsReachesTheOtherDeviceAndTheWebClientByteForByte() async throws {
        let (cluster, browser, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let passphrase = "e2e-unlock-passphrase-" + UUID().uuidString.prefix(8)
        let (note, attachments) = try Self.lockedNoteWithTwoAttachments(laptop, passphrase)
        var expected = Dictionary(uniqueKeysWithValues: attachments.map { ($0.id, $0.bytes) })
        _ = try SyncNotesE2ETests.syncNow(phone)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Deeds" })
        #expect(onPhone.isLocked)

        // Removed on the laptop, and a PDF added to the note unlocked there: the attachments'
        // plaintext goes, then the removal, then the PDF — in one sync, and nothing waits.
        try Self.removeLock(laptop, note, passphrase)
        let pdf = Data((0..<5_000).map { _ in UInt8.random(in: 0...255) })
        let pdfFile = laptop.root.appendingPathComponent("deed.pdf")
        try pdf.write(to: pdfFile)
        let added = try laptop.json(
            AttachmentInfo.self, ["note", "attach", note, "--kind", "pdf", "--file", pdfFile.path, "--name", "deed.pdf"])
        expected[added.id] = pdf
        let sent = try SyncNotesE2ETests.syncNow(laptop)
        #expect(sent.sent == 1 && sent.waiting == 0, "\(sent)")
        let status = try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"])
        #expect(status.notesWaiting == 0 && status.attachments?.toSend == 0 && status.attachments?.refused.isEmpty == true, "\(status)")
        let copiesLeft = try await TestPostgres.texts("SELECT count(*)::text FROM attachment_unlocked_copies", database: cluster.databaseName)
        #expect(copiesLeft == ["0"])

        // The web client shows it unlocked, its attachments readable.
        let listed = try #require((try browser.get("/api/notes").json?["notes"] as? [[String: Any]])?.first { $0["title"] as? String == "Deeds" })
        let webID = try #require(listed["id"] as? String)
        let detail = try browser.get("/api/notes/\(webID)")
        #expect(detail.status == 200 && detail.json?["body"] as? String == "Deeds\ne2e-unlock-attach-marker" && detail.json?["locked"] == nil)
        let webAttachments = try #require(detail.json?["attachments"] as? [[String: Any]])
        #expect(Set(webAttachments.compactMap { $0["id"] as? String }) == Set(expected.keys))
        for (id, bytes) in expected {
            let download = try browser.get("/api/notes/\(webID)/attachments/\(id)")
            #expect(download.status == 200 && download.body == bytes, "attachment \(id) in the web client")
        }

        // The phone, which never had the passphrase typed, holds it unlocked with both, byte for byte.
        #expect(try SyncNotesE2ETests.syncNow(phone).applied >= 1)
        let unlocked = try phone.json(OpenedNote.self, ["note", "show", onPhone.id])
        #expect(!unlocked.summary.isLocked && unlocked.body == "Deeds\ne2e-unlock-attach-marker")
        #expect(try Self.exportedAttachments(phone, onPhone.id) == expected)
        #expect(try Self.exportedAttachments(laptop, note) == expected)

        // Nothing goes twice, nothing waits.
        for device in [laptop, phone] {
            let again = try SyncNotesE2ETests.syncNow(device)
            #expect(again == SyncNowNotes(sent: 0, applied: 0, conflictCopies: 0, waiting: 0), "\(again)")
            let status = try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"])
            #expect(status.notesWaiting == 0 && status.attachments?.toSend == 0 && status.attachments?.toFetch == 0, "\(status)")
            #expect(!device.daemonLog.contains("e2e-unlock-attach-marker") && !device.daemonLog.contains(passphrase))
        }
    }

    /// The phone's sync that removes the lock is cut as its second attachment goes — its daemon
    /// `SIGKILL`ed as the request passes the proxy: the server still holds the note locked with
    /// both attachments sealed; the next sync sends the rest and the removal, and the note is
    /// unlocked everywhere with nothing lost.
    @Test func aLockRemovalCutAfterSomeAttachmentsWentConverges() async throws {
        let (cluster, _, laptop, phone, proxy) = try await SyncCrashTests.devices { port, _, phone in
            nonisolated(unsafe) let phone = phone
            return try CuttingProxy(upstream: port, trigger: "PUT /v1/sync/notes/", occurrence: 2) { phone.killDaemon() }
        }
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instance lives
        let passphrase = "e2e-unlock-passphrase-" + UUID().uuidString.prefix(8)
        let (note, attachments) = try Self.lockedNoteWithTwoAttachments(laptop, passphrase)
        let expected = Dictionary(uniqueKeysWithValues: attachments.map { ($0.id, $0.bytes) })
        _ = try SyncNotesE2ETests.syncNow(phone)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Deeds" })

        try Self.removeLock(phone, onPhone.id, passphrase)
        let cut = try phone.tresor(["sync", "now"])
        #expect(!cut.succeeded && proxy.hasCut, "\(cut.stderr)")
        let database = cluster.databaseName
        #expect(try await TestPostgres.texts("SELECT (passphrase_id IS NOT NULL)::text FROM notes", database: database) == ["true"])
        #expect(try await TestPostgres.texts("SELECT is_locked::text FROM attachments", database: database) == ["true", "true"])
        #expect(try await TestPostgres.texts("SELECT complete::text FROM attachment_unlocked_copies", database: database) == ["true"])

        try SyncCrashTests.restart(phone)
        proxy.relay(to: cluster.servers[0].port)
        let resumed = try SyncNotesE2ETests.syncNow(phone)
        #expect(resumed.sent == 1 && resumed.waiting == 0, "\(resumed)")
        #expect(try SyncNotesE2ETests.syncNow(laptop).applied >= 1)
        #expect(try await TestPostgres.texts("SELECT is_locked::text FROM attachments", database: database) == ["false", "false"])
        for (device, id) in [(laptop, note), (phone, onPhone.id)] {
            let opened = try device.json(OpenedNote.self, ["note", "show", id])
            #expect(!opened.summary.isLocked && opened.body == "Deeds\ne2e-unlock-attach-marker")
            #expect(try Self.exportedAttachments(device, id) == expected)
            #expect(try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"]).notesWaiting == 0)
        }
    }
}
