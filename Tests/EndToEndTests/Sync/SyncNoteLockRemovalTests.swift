import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// A lock removed on one device travels (docs/SYNC.md, "Notes"): two device homes, each with its
/// own `tresord`, and the server's web client. The device that removed the lock, with the
/// passphrase, sends the opened body; the server and the other device hold the note unlocked —
/// and a lock removed from a version older than a locked edit made meanwhile keeps the edit
/// locked and the unlocked version beside it.
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
}
