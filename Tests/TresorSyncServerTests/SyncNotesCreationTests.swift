import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorNotesDomain
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// A device's new note and its origin are one transaction, and a device's note writes count
/// against the web account's storage quota as a browser's do (docs/SYNC.md, "Notes").
@Suite("Sync notes: creation and quota", .enabled(if: TestPostgres.shouldRun))
struct SyncNotesCreationTests {
    /// The server dies between making the note and remembering its origin — here the origin's
    /// insert fails — and the device retries: one note, not two. Also two copies of one creation
    /// at once, on two instances, make one note.
    @Test func aCreationFailingBeforeItsOriginIsRecordedLeavesNoNoteAndARetryMakesOne() async throws {
        let url = try await TestPostgres.freshDatabase()
        let instance = try await SyncInstance.open(url: url), other = try await SyncInstance.open(url: url)
        let ada = try await instance.account("ada")
        let store = instance.storage.store, database = instance.storage.database
        try await database.transaction { connection in
            try await connection.run(
                """
                CREATE FUNCTION tresor_test_die() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'the instance died here'; END $$
                """, database.logger)
            try await connection.run(
                "CREATE TRIGGER tresor_test_die BEFORE INSERT ON sync_note_origins FOR EACH ROW EXECUTE FUNCTION tresor_test_die()",
                database.logger)
        }
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let died = try await client.send(.post, "/v1/sync/notes", SyncNoteChange.new("Plans", "Plans\nsail"), headers: device.bearer)
            #expect(died.status.code >= 500, "\(died.status) \(died.text)")
            #expect(try await store.notes(account: ada.id, folderID: nil).isEmpty, "no note without its origin")
            try await database.transaction { connection in
                try await connection.run("DROP TRIGGER tresor_test_die ON sync_note_origins", database.logger)
            }
            let made = try #require(try await device.send(client, SyncNoteChange.new("Plans", "Plans\nsail")).note)
            #expect(try await store.notes(account: ada.id, folderID: nil).map(\.id) == [made.id])

            // One creation sent twice at once, through two instances: one note.
            let signedIn = device
            try await other.application.test(.router) { otherClient in
                async let first = signedIn.send(client, SyncNoteChange.new("Twice", "Twice\nat once"))
                async let second = signedIn.send(otherClient, SyncNoteChange.new("Twice", "Twice\nat once"))
                let (one, two) = try await (first, second)
                #expect(one.note?.id == two.note?.id && one.note != nil)
            }
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 2)

            // The note a creation made, deleted for good meanwhile: the retried creation makes it
            // again (an edit outlives a deletion), once.
            try await store.moveToRecentlyDeleted(made.id)
            try await store.deleteForGood(made.id)
            let again = try #require(try await device.send(client, SyncNoteChange.new("Plans", "Plans\nsail")).note)
            #expect(again.id != made.id)
            #expect(try await device.send(client, SyncNoteChange.new("Plans", "Plans\nsail")).note?.id == again.id)
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 2)
        }
        await instance.storage.close()
        await other.storage.close()
    }

    /// Over the web account's quota, a device's change is refused for that note (413
    /// `tooLarge`), nothing of it stored; a change that adds nothing (a pin) still goes; and what
    /// devices wrote counts against the browser's room too.
    @Test func aDevicesNoteWritesCountAgainstTheWebAccountsQuota() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase(), accountQuotaBytes: 3_000)
        let ada = try await instance.account("ada")
        let store = instance.storage.store
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let small = try #require(
                try await device.send(client, SyncNoteChange.new("Small", "Small\n" + String(repeating: "s", count: 1_500))).note)

            let big = try await client.send(
                .post, "/v1/sync/notes", SyncNoteChange.new("Big", "Big\n" + String(repeating: "b", count: 2_000)), headers: device.bearer)
            #expect(big.status == .contentTooLarge && big.code == .tooLarge, "\(big.status) \(big.text)")
            #expect(try await store.notes(account: ada.id, folderID: nil).map(\.id) == [small.id])

            let grown = try await client.send(
                .post, "/v1/sync/notes", SyncNoteChange.edit(small, body: small.body! + String(repeating: "g", count: 2_000), base: small.base),
                headers: device.bearer)
            #expect(grown.status == .contentTooLarge && grown.code == .tooLarge, "\(grown.text)")
            #expect(try await store.openNote(small.id).body == small.body)

            var pinned = SyncNoteChange.edit(small, body: small.body!, base: small.base)
            pinned.isPinned = true
            #expect(try await device.send(client, pinned).outcome == .saved)
            #expect(try await store.summary(ofNote: small.id).isPinned)

            // The browser's write finds the room the device took.
            await #expect(throws: NotesError.self) {
                try await store.createNote(
                    NoteDraft(title: "Web", body: String(repeating: "w", count: 1_500)), account: ada.id,
                    quota: StorageQuota(limitBytes: 3_000, addingBytes: 1_500))
            }
        }
        await instance.storage.close()
    }

    /// A batch is answered change by change: one over the quota and one invalid are refused,
    /// each with its own status, and the others are applied.
    @Test func aBatchAnswersEachChangeOnItsOwn() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase(), accountQuotaBytes: 3_000)
        let ada = try await instance.account("ada")
        let store = instance.storage.store
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            var untitled = SyncNoteChange.new("Untitled", "body")
            untitled.title = "a\u{0}b"
            let answers = try await device.sendBatch(
                client,
                [
                    SyncNoteChange.new("One", "One\nfirst"), SyncNoteChange.new("Big", "Big\n" + String(repeating: "b", count: 4_000)),
                    untitled, SyncNoteChange.new("Two", "Two\nsecond"),
                ])
            #expect(answers.map(\.result?.outcome) == [.created, nil, nil, .created])
            #expect(answers.map(\.status) == [nil, 413, 400, nil])
            #expect(answers.map(\.refusal?.code) == [nil, .tooLarge, .invalid, nil])
            #expect(Set(try await store.notes(account: ada.id, folderID: nil).map(\.title)) == ["One", "Two"])

            // Sent again (an answer lost): the same notes, no second ones.
            let again = try await device.sendBatch(client, [SyncNoteChange.new("One", "One\nfirst"), SyncNoteChange.new("Two", "Two\nsecond")])
            #expect(again.map(\.result?.note?.id) == answers.map(\.result?.note?.id).filter { $0 != nil })
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 2)

            // Too many, none, or one note twice: the batch is refused whole.
            let tooMany = (0...SyncNoteBatch.maxChanges).map { SyncNoteChange.new("N\($0)", "n") }
            for refused in [tooMany, [], [SyncNoteChange.new("Same", "a"), SyncNoteChange.new("Same", "b")]] {
                let response = try await client.send(.post, "/v1/sync/notes/batch", SyncNoteBatch(changes: refused), headers: device.bearer)
                #expect(response.status == .badRequest && response.code == .invalid, "\(response.text)")
            }
            #expect(try await store.notes(account: ada.id, folderID: nil).count == 2)
        }
        await instance.storage.close()
    }
}
