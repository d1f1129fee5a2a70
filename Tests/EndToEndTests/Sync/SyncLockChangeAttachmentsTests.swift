import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// A lock put on or removed here does not make the device forget which attachments the server
/// holds (docs/SYNC.md, "A lock removed travels"): a lock removed while the server holds an
/// attachment of the note sealed that the device lacks — never fetched, or detached here since
/// — travels, and an attachment detached right after a lock is removed everywhere. Two device
/// homes with their own `tresord` and a real server on PostgreSQL.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncLockChangeAttachmentsTests {
    /// The ids of the attachments the server holds, in order.
    static func serverAttachments(_ cluster: ServerInstances) async throws -> [String] {
        try await TestPostgres.texts("SELECT id FROM attachments ORDER BY id", database: cluster.databaseName)
    }

    /// Two joined devices; the laptop's locked note with two attachments synced to the phone,
    /// whose lock the phone removed (not synced yet).
    /// - Returns: the server, the devices, the note's id on the laptop and on the phone, and its
    ///   attachments.
    static func lockRemovedOnThePhone() async throws -> (
        cluster: ServerInstances, laptop: Harness, phone: Harness, note: String, onPhone: String, attachments: [(id: String, bytes: Data)]
    ) {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        let passphrase = "e2e-lock-removed-passphrase-" + UUID().uuidString.prefix(8)
        let (note, attachments) = try SyncNoteLockRemovalTests.lockedNoteWithTwoAttachments(laptop, passphrase)
        _ = try SyncNotesE2ETests.syncNow(phone)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Deeds" })
        #expect(onPhone.isLocked && onPhone.attachmentCount == 2)
        try SyncNoteLockRemovalTests.removeLock(phone, onPhone.id, passphrase)
        return (cluster, laptop, phone, note, onPhone.id, attachments)
    }

    /// The phone's first sync pulls the laptop's locked note and is cut as it fetches the first
    /// attachment (its daemon `SIGKILL`ed): the phone holds the note at the server's revision,
    /// locked, without its attachments. Its lock removed there, the next sync takes the sealed
    /// attachments in opened with the note key the removal kept, sends their plaintext and the
    /// removal: unlocked everywhere, byte for byte, nothing waiting.
    @Test func aLockRemovedBeforeTheAttachmentsWereFetchedTakesThemFromTheServer() async throws {
        let (cluster, _, laptop, phone, proxy) = try await SyncCrashTests.devices { port, _, phone in
            nonisolated(unsafe) let phone = phone
            return try CuttingProxy(upstream: port, trigger: "GET /v1/sync/notes/") { phone.killDaemon() }
        }
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instance lives
        let passphrase = "e2e-unfetched-passphrase-" + UUID().uuidString.prefix(8)
        let (note, attachments) = try SyncNoteLockRemovalTests.lockedNoteWithTwoAttachments(laptop, passphrase)
        let expected = Dictionary(uniqueKeysWithValues: attachments.map { ($0.id, $0.bytes) })

        let cut = try phone.tresor(["sync", "now"])
        #expect(!cut.succeeded && proxy.hasCut, "\(cut.stderr)")
        try SyncCrashTests.restart(phone)
        proxy.relay(to: cluster.servers[0].port)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Deeds" })
        #expect(onPhone.isLocked && onPhone.attachmentCount == 0)

        try SyncNoteLockRemovalTests.removeLock(phone, onPhone.id, passphrase)
        let synced = try SyncNotesE2ETests.syncNow(phone)
        #expect(synced.sent == 1 && synced.waiting == 0, "\(synced)")
        let status = try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"])
        #expect(status.notesWaiting == 0 && status.attachments?.toSend == 0 && status.attachments?.toFetch == 0, "\(status)")
        #expect(try await TestPostgres.texts("SELECT is_locked::text FROM attachments", database: cluster.databaseName) == ["false", "false"])

        #expect(try SyncNotesE2ETests.syncNow(laptop).applied >= 1)
        for (device, id) in [(laptop, note), (phone, onPhone.id)] {
            let opened = try device.json(OpenedNote.self, ["note", "show", id])
            #expect(!opened.summary.isLocked && opened.body == "Deeds\ne2e-unlock-attach-marker")
            #expect(try SyncNoteLockRemovalTests.exportedAttachments(device, id) == expected)
        }
        #expect(!phone.daemonLog.contains(passphrase) && !phone.daemonLog.contains("e2e-unlock-attach-marker"))
    }

    /// The phone removes the lock of a note whose attachments it holds, then detaches one before
    /// it syncs: the detached one's removal goes, then the other's plaintext and the lock's removal.
    @Test func aLockRemovedThenAnAttachmentDetachedTravelsWithoutIt() async throws {
        let (cluster, laptop, phone, note, onPhone, attachments) = try await Self.lockRemovedOnThePhone()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let (kept, detached) = (attachments[0], attachments[1])
        #expect(try phone.tresor(["note", "detach", onPhone, detached.id]).succeeded)
        let synced = try SyncNotesE2ETests.syncNow(phone)
        #expect(synced.sent == 1 && synced.waiting == 0, "\(synced)")
        #expect(try await Self.serverAttachments(cluster) == [kept.id])

        #expect(try SyncNotesE2ETests.syncNow(laptop).applied >= 1)
        for (device, id) in [(laptop, note), (phone, onPhone)] {
            let opened = try device.json(OpenedNote.self, ["note", "show", id])
            #expect(!opened.summary.isLocked)
            #expect(try SyncNoteLockRemovalTests.exportedAttachments(device, id) == [kept.id: kept.bytes])
            let status = try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"])
            #expect(status.notesWaiting == 0 && status.attachments?.toSend == 0 && status.attachments?.toFetch == 0, "\(status)")
        }
    }

    /// The phone removes the lock of a note whose attachments it holds, then leaves one out of
    /// backups before it syncs: the flag's change makes a revision of the note on the server
    /// between the removal's refusal and its retry — the phone's own, so the removal goes from it
    /// and is no conflict copy.
    @Test func aLockRemovedThenAnAttachmentLeftOutOfBackupsTravelsWithoutAConflictCopy() async throws {
        let (cluster, laptop, phone, note, onPhone, attachments) = try await Self.lockRemovedOnThePhone()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let flagged = attachments[1].id
        #expect(try phone.tresor(["note", "attachment-backup", onPhone, flagged, "--exclude"]).succeeded)
        let synced = try SyncNotesE2ETests.syncNow(phone)
        #expect(synced.sent == 1 && synced.waiting == 0, "\(synced)")
        #expect(try await TestPostgres.texts("SELECT count(*)::text FROM notes", database: cluster.databaseName) == ["1"])
        #expect(
            try await TestPostgres.texts("SELECT excluded_from_backup::text FROM attachments WHERE id = '\(flagged)'", database: cluster.databaseName)
                == ["true"])

        #expect(try SyncNotesE2ETests.syncNow(laptop).applied >= 1)
        for (device, id) in [(laptop, note), (phone, onPhone)] {
            let notes = try device.json([NoteSummary].self, ["note", "list"])
            #expect(notes.map(\.id) == [id], "no conflict copy")
            let opened = try device.json(OpenedNote.self, ["note", "show", id])
            #expect(!opened.summary.isLocked)
            #expect(opened.attachments.first { $0.id == flagged }?.excludedFromBackup == true)
        }
    }

    /// The laptop locks a synced note with two attachments and detaches one before it syncs: the
    /// removal goes with the lock, and the phone ends with the note locked and one attachment.
    @Test func anAttachmentDetachedRightAfterALockIsRemovedEverywhere() async throws {
        let (cluster, _, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let passphrase = "e2e-lock-detach-passphrase-" + UUID().uuidString.prefix(8)
        try SyncNoteLockRemovalTests.setPassphrase(laptop, passphrase)
        let note = try SyncNotesE2ETests.newNote(laptop, "Deeds\ne2e-lock-detach-marker")
        var ids: [String] = []
        for index in 0..<2 {
            let file = laptop.root.appendingPathComponent("scan\(index).png")
            try Data("scan \(index) ".utf8 + Data((0..<4_000).map { _ in UInt8.random(in: 0...255) })).write(to: file)
            ids.append(try laptop.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "image", "--file", file.path]).id)
        }
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try await Self.serverAttachments(cluster) == ids.sorted())

        #expect(try laptop.tresor(["note", "lock", note.id]).succeeded)
        #expect(try laptop.tresor(["note", "detach", note.id, ids[1]]).succeeded)
        let synced = try SyncNotesE2ETests.syncNow(laptop)
        #expect(synced.waiting == 0, "\(synced)")
        #expect(try await Self.serverAttachments(cluster) == [ids[0]])
        #expect(try await TestPostgres.texts("SELECT is_locked::text FROM attachments", database: cluster.databaseName) == ["true"])

        _ = try SyncNotesE2ETests.syncNow(phone)
        let onPhone = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Deeds" })
        #expect(onPhone.isLocked && onPhone.attachmentCount == 1)
        // A second sync of each changes nothing: the detached one does not come back.
        _ = try SyncNotesE2ETests.syncNow(laptop)
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try await Self.serverAttachments(cluster) == [ids[0]])
        #expect(try laptop.json([NoteSummary].self, ["note", "list"]).first { $0.id == note.id }?.attachmentCount == 1)
    }
}
