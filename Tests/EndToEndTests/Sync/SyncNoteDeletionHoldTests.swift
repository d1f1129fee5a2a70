import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The mass-deletion hold for notes (docs/SYNC.md, "Notes"): notes deleted for good at once on
/// one device stay on the others until the user there allows it.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncNoteDeletionHoldE2ETests {
    @Test func notesEmptiedFromRecentlyDeletedElsewhereWaitForAllowDeletions() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }
        let made = try (0..<20).map { try SyncNotesE2ETests.newNote(laptop, "Note \($0)\ne2e-hold-marker \($0)") }
        #expect(try SyncNotesE2ETests.syncNow(laptop).sent == 20)
        #expect(try SyncNotesE2ETests.syncNow(phone).applied == 20)

        // On the laptop: six deleted and Recently Deleted emptied. The phone first takes the
        // moves (nothing is lost yet), then the deletions for good, which wait.
        for note in made.prefix(6) {
            let deleted = try laptop.tresor(["note", "delete", note.id])
            #expect(deleted.succeeded, "\(deleted.stderr)")
        }
        #expect(try SyncNotesE2ETests.syncNow(laptop).sent == 6)
        #expect(try SyncNotesE2ETests.syncNow(phone).applied == 6)
        let emptied = try laptop.tresor(["note", "trash", "empty"])
        #expect(emptied.succeeded, "\(emptied.stderr)")
        #expect(try SyncNotesE2ETests.syncNow(laptop).sent == 6)

        let held = try phone.tresor(["sync", "now"])
        #expect(held.status == 2, "\(held.stdout) \(held.stderr)")
        #expect(held.stdout.contains("Held 6 note deletions") && held.stdout.contains("--allow-deletions"), "\(held.stdout)")
        let trash = try phone.json([NoteSummary].self, ["note", "trash", "list"])
        #expect(Set(trash.map(\.title)) == Set((0..<6).map { "Note \($0)" }), "still in Recently Deleted here")
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).noteDeletionsHeld == 6)
        let status = try phone.tresor(["sync", "status"])
        #expect(status.stdout.contains("6 deletions held"), "\(status.stdout)")

        let allowed = try #require(try SyncE2E.sync(phone, SyncNowAnswer.self, ["now", "--allow-deletions"]).notes)
        #expect(allowed.heldDeletions == 0 && allowed.applied == 6, "\(allowed)")
        #expect(try phone.json([NoteSummary].self, ["note", "trash", "list"]).isEmpty)
        #expect(try phone.json([NoteSummary].self, ["note", "list"]).count == 14)
    }
}
