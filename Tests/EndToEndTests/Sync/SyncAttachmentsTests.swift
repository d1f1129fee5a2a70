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

        // Nothing goes twice, and nothing comes back: the upload made a revision of the note on
        // the server, which the laptop takes without applying its note again.
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
        let afterRemoval = try SyncNotesE2ETests.syncNow(phone)
        #expect(afterRemoval == SyncNowNotes(sent: 0, applied: 0, conflictCopies: 0, waiting: 0), "\(afterRemoval)")
        // The laptop's file of it is gone with it: only the note's database and no attachment file.
        let left = try FileManager.default.contentsOfDirectory(atPath: laptop.paths.attachmentsFolder.path)
        #expect(left.isEmpty, "attachment files left on the laptop: \(left.count)")
    }

    /// An attachment sent some time after it was added — or removed — dates itself and its note
    /// on the other device as it was added or removed, not as it arrived: the note shows the same
    /// date everywhere, and does not jump to the top of the other device's list.
    @Test func anAttachmentSentLaterKeepsTheDateItWasAddedOnEveryDevice() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try SyncNotesE2ETests.newNote(laptop, "Receipts\nfor the taxes")
        _ = try SyncNotesE2ETests.syncNow(laptop)
        let file = laptop.root.appendingPathComponent("receipt.bin")
        try Data([1, 2, 3]).write(to: file)
        let attached = try laptop.json(
            AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path, "--name", "-"], input: "receipt.bin\n")
        let dated = try laptop.json(OpenedNote.self, ["note", "show", note.id]).summary.modified
        sleep(3)  // the upload comes seconds after the attachment was added
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)

        let seconds = { (date: Date) in date.timeIntervalSince1970.rounded(.down) }
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Receipts" })
        #expect(seconds(onPhone.modified) == seconds(dated), "the phone dates the note \(onPhone.modified), the laptop \(dated)")
        #expect(seconds(try laptop.json(OpenedNote.self, ["note", "show", note.id]).summary.modified) == seconds(dated))
        let fetched = try #require(try phone.json(OpenedNote.self, ["note", "show", onPhone.id]).attachments.first)
        #expect(seconds(fetched.created) == seconds(attached.created), "the attachment dated \(fetched.created), added \(attached.created)")

        // Removed, and sent seconds later: dated as it was removed, on both.
        #expect(try laptop.tresor(["note", "detach", note.id, attached.id]).succeeded)
        let removed = try laptop.json(OpenedNote.self, ["note", "show", note.id]).summary.modified
        sleep(3)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        let afterRemoval = try phone.json(OpenedNote.self, ["note", "show", onPhone.id])
        #expect(afterRemoval.attachments.isEmpty)
        #expect(
            seconds(afterRemoval.summary.modified) == seconds(removed), "the phone dates it \(afterRemoval.summary.modified), the laptop \(removed)")
    }

    /// The excluded-from-backup flag travels with an attachment, and a change of it on either
    /// device reaches the other and the web client.
    @Test func anAttachmentLeftOutOfBackupsIsLeftOutEverywhereAndAChangeOfItGoesBothWays() async throws {
        let (cluster, browser, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try SyncNotesE2ETests.newNote(laptop, "Statements\nthe bank's")
        let file = laptop.root.appendingPathComponent("statement.bin")
        try Data((0..<40_000).map { _ in UInt8.random(in: 0...255) }).write(to: file)
        let kept = try laptop.json(
            AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path, "--name", "-"], input: "kept.bin\n")
        let excluded = try laptop.json(
            AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path, "--name", "-", "--exclude-from-backup"],
            input: "excluded.bin\n")
        #expect(excluded.excludedFromBackup == true && kept.excludedFromBackup == nil)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)

        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Statements" })
        func flags(_ device: Harness, _ id: String) throws -> [String: Bool] {
            let listed = try device.json(OpenedNote.self, ["note", "show", id]).attachments
            return Dictionary(uniqueKeysWithValues: listed.map { ($0.id, $0.excludedFromBackup ?? false) })
        }
        #expect(try flags(phone, onPhone.id) == [kept.id: false, excluded.id: true], "the flag came with the attachment")
        let onWeb = try browser.get("/api/notes/\(onPhone.id)")
        let webAttachments = try #require(onWeb.json?["attachments"] as? [[String: Any]], "\(onWeb.text)")
        #expect(webAttachments.first { $0["id"] as? String == excluded.id }?["excludedFromBackup"] as? Bool == true, "\(onWeb.text)")

        // Put back into backups on the phone, the other left out on the laptop: each reaches the other.
        let included = try phone.tresor(["note", "attachment-backup", onPhone.id, excluded.id, "--include"])
        #expect(included.succeeded, "\(included.stderr)")
        let left = try laptop.tresor(["note", "attachment-backup", note.id, kept.id, "--exclude"])
        #expect(left.succeeded, "\(left.stderr)")
        _ = try SyncNotesE2ETests.syncNow(phone)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try flags(laptop, note.id) == [kept.id: true, excluded.id: false])
        #expect(try flags(phone, onPhone.id) == [kept.id: true, excluded.id: false])
        // Nothing goes twice, and the bytes never went again.
        for device in [laptop, phone] {
            let again = try SyncNotesE2ETests.syncNow(device)
            #expect(again == SyncNowNotes(sent: 0, applied: 0, conflictCopies: 0, waiting: 0), "\(again)")
            let status = try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"])
            #expect(status.attachments?.toSend == 0 && status.attachments?.toFetch == 0, "\(String(describing: status.attachments))")
        }
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

    /// An attachment sent while its note was unlocked, the note then locked on that device —
    /// right after the upload, or once the note's new revision came back: the lock's sync sends
    /// it anew sealed under the note key, the server replaces its plaintext copy, and a device
    /// fetching it afresh opens it with the passphrase.
    @Test(arguments: [false, true]) func anAttachmentSentBeforeItsNoteWasLockedIsSentAgainSealed(noteCameBack: Bool) async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let passphrase = "e2e-relock-passphrase-" + UUID().uuidString.prefix(8)
        let set = try laptop.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n")
        #expect(set.succeeded, "\(set.stderr)")
        let note = try SyncNotesE2ETests.newNote(laptop, "Deeds\nthe house")
        let bytes = Data((0..<((1 << 20) + 777)).map { _ in UInt8.random(in: 0...255) })
        let file = laptop.root.appendingPathComponent("house.bin")
        try bytes.write(to: file)
        let attached = try laptop.json(
            AttachmentInfo.self, ["note", "attach", note.id, "--kind", "image", "--file", file.path, "--name", "house.png"])
        _ = try SyncNotesE2ETests.syncNow(laptop)  // the attachment is on the server as plaintext
        // Locked right away, or once the laptop holds the revision its upload made.
        if noteCameBack { _ = try SyncNotesE2ETests.syncNow(laptop) }
        let locked = try laptop.tresor(["note", "lock", note.id])
        #expect(locked.succeeded, "\(locked.stderr)")
        _ = try SyncNotesE2ETests.syncNow(laptop)

        // The phone has never seen the note: it fetches the attachment afresh, sealed.
        _ = try SyncNotesE2ETests.syncNow(phone)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Deeds" })
        #expect(onPhone.isLocked)
        let out = phone.root.appendingPathComponent("house-back.bin")
        let exported = try phone.tresor(
            ["note", "export-attachment", onPhone.id, attached.id, "--out", out.path, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(exported.succeeded, "\(exported.stderr)")
        #expect((try? Data(contentsOf: out)) == bytes, "the attachment did not reach the other device sealed")
        // Nothing more goes: the laptop does not send it a third time.
        _ = try SyncNotesE2ETests.syncNow(laptop)
        let again = try SyncNotesE2ETests.syncNow(laptop)
        #expect(again == SyncNowNotes(sent: 0, applied: 0, conflictCopies: 0, waiting: 0), "\(again)")
    }

    /// A device that had a note's attachment before the note was locked elsewhere: when the lock
    /// arrives, its plaintext copy is replaced by the server's sealed one, which opens only with
    /// the passphrase.
    @Test func aLockArrivingWhereTheAttachmentWasReplacesItsPlaintextCopy() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let passphrase = "e2e-lockarrives-passphrase-" + UUID().uuidString.prefix(8)
        let set = try laptop.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n")
        #expect(set.succeeded, "\(set.stderr)")
        let note = try SyncNotesE2ETests.newNote(laptop, "Taxes\n2025")
        let bytes = Data((0..<((1 << 20) + 99)).map { _ in UInt8.random(in: 0...255) })
        let file = laptop.root.appendingPathComponent("taxes.bin")
        try bytes.write(to: file)
        let attached = try laptop.json(
            AttachmentInfo.self, ["note", "attach", note.id, "--kind", "image", "--file", file.path, "--name", "taxes.png"])
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)  // the phone holds it as plaintext
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Taxes" })
        #expect(try phone.json(OpenedNote.self, ["note", "show", onPhone.id]).attachments.map(\.id) == [attached.id])

        #expect(try laptop.tresor(["note", "lock", note.id]).succeeded)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.id == onPhone.id }).isLocked)
        let out = phone.root.appendingPathComponent("taxes-back.bin")
        let without = try phone.tresor(
            ["note", "export-attachment", onPhone.id, attached.id, "--out", out.path, "--passphrase-stdin"], input: "wrong\n")
        #expect(!without.succeeded && (try? Data(contentsOf: out)) != bytes, "the phone still opens it without the passphrase")
        try? FileManager.default.removeItem(at: out)
        let exported = try phone.tresor(
            ["note", "export-attachment", onPhone.id, attached.id, "--out", out.path, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(exported.succeeded, "\(exported.stderr)")
        #expect((try? Data(contentsOf: out)) == bytes)
    }

    /// Over the server's limit on an attachment (`notesAttachmentBytes`, here 1 MiB): the
    /// attachment is refused and waits, the note goes, and `tresor sync status` says what waits
    /// and why.
    @Test func anAttachmentTheServerRefusesWaitsAndTheStatusSaysWhy() async throws {
        let (cluster, _, laptop, _) = try await SyncE2E.twoJoinedDevicesAndBrowser(configuration: ["notesAttachmentBytes": 1 << 20])
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try SyncNotesE2ETests.newNote(laptop, "Film\ntoo long")
        let file = laptop.root.appendingPathComponent("film.bin")
        try Data(count: (1 << 20) + 1).write(to: file)
        let attached = try laptop.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path])
        let synced = try SyncNotesE2ETests.syncNow(laptop)
        #expect(synced.sent == 1)
        let status = try #require(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).attachments)
        #expect(status.toSend == 1 && status.toFetch == 0 && !status.serverTakesNone, "\(status)")
        #expect(status.refused.map(\.attachmentID) == [attached.id] && status.refused.first?.code == "tooLarge", "\(status)")
        let text = try laptop.tresor(["sync", "status"])
        #expect(text.stdout.contains("Attachments: 1 to send, 0 to fetch") && text.stdout.contains("(tooLarge)"), "\(text.stdout)")
    }

    /// A server without the attachment routes (an older Tresor; here nginx answers `404` for
    /// them): notes still sync, and `tresor sync status` says the attachments wait.
    @Test(.enabled(if: NginxBalancer.shouldRun)) func againstAServerWithoutAttachmentsNotesSyncAndAttachmentsWait() async throws {
        let port = try LoopbackPort.free()
        let origin = "http://127.0.0.1:\(port)"
        let cluster = try await ServerInstances(
            count: 1, configuration: ["webRegistration": "open", "webTrustedProxies": ["127.0.0.1"]], arguments: ["--public-origin", origin])
        let nginx = try NginxBalancer(
            port: port, upstreams: [cluster.servers[0].port], directory: cluster.harnesses[0].root,
            locations: "location ~ ^/v1/sync/notes/[^/]+/attachments/ { return 404; }")
        defer { withExtendedLifetime(nginx) {} }
        let (_, password) = try cluster.registered("ada", on: WebServerAddress(port: cluster.servers[0].port, publicOrigin: origin))
        let laptop = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, WebServerAddress(port: port, publicOrigin: origin), name: "laptop", password: password)
        let note = try SyncNotesE2ETests.newNote(laptop, "Scans\nthe visa")
        let file = laptop.root.appendingPathComponent("visa.bin")
        try Data(count: 4096).write(to: file)
        _ = try laptop.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path])
        try SyncNowTests.add(laptop, service: "old.example.com", secret: "e2e-older-server")

        let synced = try SyncNowTests.syncNow(laptop)
        #expect(synced.pushed == 1 && synced.notes?.sent == 1, "\(synced)")
        let status = try #require(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).attachments)
        #expect(status.serverTakesNone && status.toSend == 1, "\(status)")
        #expect(try laptop.tresor(["sync", "status"]).stdout.contains("the server takes none"))
    }

    /// A note in Recently Deleted takes its small attachments with it: restored on the other
    /// device before any further sync, it has them, byte for byte.
    @Test func aNoteInRecentlyDeletedTakesItsSmallAttachmentsWithIt() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let note = try SyncNotesE2ETests.newNote(laptop, "Letters\nthe old ones")
        let bytes = Data((0..<(64 << 10)).map { _ in UInt8.random(in: 0...255) })
        let file = laptop.root.appendingPathComponent("letter.bin")
        try bytes.write(to: file)
        let attached = try laptop.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "file", "--file", file.path])
        #expect(try laptop.tresor(["note", "delete", note.id]).succeeded)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)

        let deleted = try #require(try phone.json([NoteSummary].self, ["note", "trash", "list"]).first { $0.title == "Letters" })
        #expect(try phone.tresor(["note", "trash", "restore", deleted.id]).succeeded)
        #expect(try phone.json(OpenedNote.self, ["note", "show", deleted.id]).attachments.map(\.id) == [attached.id])
        let out = phone.root.appendingPathComponent("letter-back.bin")
        #expect(try phone.tresor(["note", "export-attachment", deleted.id, attached.id, "--out", out.path]).succeeded)
        #expect((try? Data(contentsOf: out)) == bytes)
    }
}
