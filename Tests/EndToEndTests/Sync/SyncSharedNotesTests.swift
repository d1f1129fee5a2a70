import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Notes shared in the web client between two accounts of one server, on the devices of one of
/// them (real daemons, a real server instance on PostgreSQL, the web API as the browser uses it):
/// a note Bob shares with Ada reaches Ada's devices, edits go both ways, and it leaves them when
/// it is no longer Ada's to see; a note Ada shares shows as shared on her devices.
@Suite("Sync: shared notes", .serialized, .enabled(if: TestPostgres.shouldRun))
struct SyncSharedNotesE2ETests {
    @Test func aNoteSharedWithTheAccountReachesItsDevicesUntilItIsNoLongerItsToSee() async throws {
        let (cluster, _, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let (bob, _) = try cluster.registered("bob", on: cluster.servers[0])
        let id = try bob.createNote(title: "Trip", body: "Trip\ne2e-shared tent")
        #expect(try bob.post("/api/notes/\(id)/participants", ["name": "ada"]).status == 201)

        _ = try SyncNotesE2ETests.syncNow(laptop)
        let shared = try #require(try Self.note(laptop, "Trip"), "Bob's note shared with Ada is on her laptop")
        #expect(shared.sharing == ShareInfo(owner: "bob", participants: ["ada"]))
        let shown = try laptop.tresor(["note", "show", shared.id])
        #expect(shown.succeeded && shown.stdout.contains("shared by bob with ada"), "\(shown.stdout) \(shown.stderr)")
        #expect(try laptop.tresor(["note", "list"]).stdout.contains("shared by bob with ada"))

        // Bob's edit comes later; the laptop's edit reaches Bob and Ada's phone.
        #expect(try bob.patch("/api/notes/\(id)", ["body": "Trip\ne2e-shared tent\nstove"]).status == 200)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try laptop.json(OpenedNote.self, ["note", "show", shared.id]).body == "Trip\ne2e-shared tent\nstove")
        try SyncNotesE2ETests.edit(laptop, shared.id, body: "Trip\ne2e-shared tent\nstove\nrope")
        #expect(try SyncNotesE2ETests.syncNow(laptop).sent == 1)
        let onWeb = try bob.get("/api/notes/\(id)")
        #expect(onWeb.status == 200 && onWeb.text.contains("rope"), "\(onWeb.text)")
        _ = try SyncNotesE2ETests.syncNow(phone)
        let onPhone = try #require(try Self.note(phone, "Trip"))
        #expect(try phone.json(OpenedNote.self, ["note", "show", onPhone.id]).body == "Trip\ne2e-shared tent\nstove\nrope")

        // Its attachments are Bob's: one he adds opens on Ada's laptop; one added there is refused, and nothing waits.
        let uploaded = try bob.request("POST", "/api/notes/\(id)/attachments?kind=file&name=plan.bin", raw: Data("the plan".utf8))
        #expect(uploaded.status == 201, "\(uploaded.text)")
        _ = try SyncNotesE2ETests.syncNow(laptop)
        let opened = try laptop.json(OpenedNote.self, ["note", "show", shared.id])
        let plan = try #require(opened.attachments.first, "Bob's attachment is on Ada's laptop")
        let out = laptop.root.appendingPathComponent("plan.out")
        #expect(try laptop.tresor(["note", "export-attachment", shared.id, plan.id, "--out", out.path]).succeeded)
        #expect(try Data(contentsOf: out) == Data("the plan".utf8))
        let file = laptop.root.appendingPathComponent("map.bin")
        try Data("the map".utf8).write(to: file)
        let attached = try laptop.tresor(["note", "attach", shared.id, "--kind", "file", "--file", file.path, "--name", "map.bin"])
        #expect(!attached.succeeded && attached.stderr.contains("only its owner adds or removes its attachments"), "\(attached.stderr)")
        // Its pin and folder are Bob's too, as in the web client: refused here, nothing waits.
        let pinned = try laptop.tresor(["note", "edit", shared.id, "--pin"])
        #expect(!pinned.succeeded && pinned.stderr.contains("only the owner pins a shared note"), "\(pinned.stderr)")
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).notesWaiting == 0)

        // In Bob's Recently Deleted: gone from Ada's laptop; restored: back.
        #expect(try bob.delete("/api/notes/\(id)").status == 204)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try Self.note(laptop, "Trip") == nil)
        #expect(try bob.post("/api/notes/\(id)/restore", [String: String]()).status == 200)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try Self.note(laptop, "Trip") != nil)

        // Unshared: gone from the laptop.
        #expect(try bob.delete("/api/notes/\(id)/participants/ada").status == 204)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try Self.note(laptop, "Trip") == nil)

        // Shared again, deleted on the laptop: Ada left it; Bob keeps it, and the phone drops it.
        #expect(try bob.post("/api/notes/\(id)/participants", ["name": "ada"]).status == 201)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        let again = try #require(try Self.note(laptop, "Trip"))
        #expect(try laptop.tresor(["note", "delete", again.id]).succeeded)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try Self.note(laptop, "Trip") == nil)
        let trash = try laptop.tresor(["note", "trash", "list"])
        #expect(trash.succeeded && !trash.stdout.contains("Trip"), "gone, not in Recently Deleted: \(trash.stdout)")
        let kept = try bob.get("/api/notes/\(id)")
        #expect(kept.status == 200 && kept.text.contains("rope") && !kept.text.contains("\"ada\""), "\(kept.text)")
        _ = try SyncNotesE2ETests.syncNow(phone)
        #expect(try Self.note(phone, "Trip") == nil)
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).notesWaiting == 0)
    }

    @Test func aNoteTheAccountSharesShowsAsSharedOnItsDeviceAndItsLockIsRefusedThere() async throws {
        let (cluster, browser, laptop, _) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        _ = try cluster.registered("bob", on: cluster.servers[0])
        let id = try browser.createNote(title: "Plans", body: "Plans\ne2e-shared sail")
        #expect(try browser.post("/api/notes/\(id)/participants", ["name": "bob"]).status == 201)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        let note = try #require(try Self.note(laptop, "Plans"))
        #expect(note.sharing == ShareInfo(owner: "ada", participants: ["bob"]))

        let passphrase = "e2e-shared-passphrase-" + UUID().uuidString.prefix(8)
        let set = try laptop.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n")
        #expect(set.succeeded, "\(set.stderr)")
        let locked = try laptop.tresor(["note", "lock", note.id])
        #expect(!locked.succeeded && locked.stderr.contains("is shared: stop sharing it before locking it"), "\(locked.stderr)")
        #expect(try laptop.json(OpenedNote.self, ["note", "show", note.id]).body == "Plans\ne2e-shared sail", "unlocked, as it was")

        // Unshared in the web client: the device no longer shows it shared, and locks it.
        #expect(try browser.delete("/api/notes/\(id)/participants/bob").status == 204)
        _ = try SyncNotesE2ETests.syncNow(laptop)
        #expect(try Self.note(laptop, "Plans")?.sharing == nil)
        #expect(try laptop.tresor(["note", "lock", note.id]).succeeded)
    }

    /// The device's note titled `title` outside Recently Deleted, if it has one.
    static func note(_ device: Harness, _ title: String) throws -> NoteSummary? {
        try device.json([NoteSummary].self, ["note", "list"]).first { $0.title == title }
    }
}
