import Foundation
import GRDB
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// Lists of notes (`notes`, `search`, `notesShared`) are read in bulk (`NoteSummaryReader`):
/// each entry must still be exactly the note's own summary, across batches.
@Suite("Note lists")
struct NoteListTests {
    /// A home whose notes differ in everything a summary reports, spread over more notes than
    /// one batch of the reader holds.
    private struct Fixture {
        let home: NotesHome
        let ann: WebAccount
        var ids: [String: String] = [:]

        init() throws {
            home = try NotesHome()
            let notes = home.notes
            ann = try notes.registerAccount(name: "ann", password: AccountPassword("password a"))
            _ = try notes.registerAccount(name: "bob", password: AccountPassword("password b"))
            _ = try notes.registerAccount(name: "cy", password: AccountPassword("password c"))
            func note(_ key: String, folder: String? = nil, account: AccountID = .local) throws -> String {
                home.clock.advance(by: 1)
                let id = try notes.createNote(NoteDraft(title: key, body: "body of \(key)", folder: folder), account: account).id
                ids[key] = id
                return id
            }
            let early = try note("early")  // the oldest: the last of the list, in the second batch
            try notes.setPassphrase(passphrase("first passphrase"), hint: "first hint")
            try notes.lockNote(early)
            try notes.resetPassphrase(to: passphrase("second passphrase"), hint: "second hint")
            try notes.lockNote(try note("locked now", folder: "Work"))
            let photos = try note("two photos", folder: "Home")
            for name in ["a.png", "b.png"] { _ = try notes.addAttachment(to: photos, kind: .image, name: name, data: Data(name.utf8)) }
            _ = try notes.addAttachment(to: try note("one photo", folder: "Work"), kind: .image, name: "c.png", data: Data("c".utf8))
            for i in 0..<(NoteSummaryReader.batchSize + 20) { _ = try note("filler \(i)", folder: i % 2 == 0 ? "Home" : nil) }
            let shared = try note("shared", account: ann.id)
            try notes.share(note: shared, with: "cy", by: ann.id)
            home.clock.advance(by: 1)
            try notes.share(note: shared, with: "bob", by: ann.id)
            let pinned = try note("pinned")
            home.clock.advance(by: 1)  // modified after created
            _ = try notes.editNote(pinned, NoteChanges(isPinned: true))
        }
    }

    @Test func everyListedSummaryIsTheNotesOwn() throws {
        let fixture = try Fixture()
        let notes = fixture.home.notes
        let list = try notes.notes()
        #expect(list.count == NoteSummaryReader.batchSize + 20 + 5)  // "shared" is ann's
        for summary in list { #expect(summary == (try notes.summary(ofNote: summary.id))) }

        // What each was made with, read off the list itself (the first and the last batch).
        let byTitle = Dictionary(uniqueKeysWithValues: list.map { ($0.title, $0) })
        #expect(list.first?.title == "pinned" && list.last?.title == "early")
        #expect(byTitle["two photos"]?.folder == "Home" && byTitle["two photos"]?.attachmentCount == 2)
        #expect(byTitle["one photo"]?.folder == "Work" && byTitle["one photo"]?.attachmentCount == 1)
        #expect(byTitle["filler 0"]?.folder == "Home" && byTitle["filler 1"]?.folder == nil && byTitle["filler 1"]?.attachmentCount == 0)
        let early = try #require(byTitle["early"]?.lock), now = try #require(byTitle["locked now"]?.lock)
        #expect(early.isCurrent == false && early.hint == "first hint" && early.generation == 1)
        #expect(now.isCurrent == true && now.hint == nil && now.generation == 2)
        #expect(byTitle["filler 2"]?.lock == nil && byTitle["filler 2"]?.sharing == nil)

        #expect(try notes.notes(folder: "Work").map(\.title) == ["one photo", "locked now"])
    }

    @Test func sharedNotesListTheirParticipantsInTheOrderAdded() throws {
        let fixture = try Fixture()
        let notes = fixture.home.notes
        let owned = try notes.notes(account: fixture.ann.id)
        #expect(owned.map(\.title) == ["shared"])
        #expect(owned[0].sharing == ShareInfo(owner: "ann", participants: ["cy", "bob"]))
        let bob = try #require(try notes.webAccount(named: "bob"))
        #expect(try notes.notesShared(with: bob.id) == owned)
        #expect(owned[0] == (try notes.summary(ofNote: owned[0].id)))
    }

    @Test func searchResultsAreTheNotesOwnSummaries() throws {
        let fixture = try Fixture()
        let notes = fixture.home.notes
        let found = try notes.search("filler")
        #expect(found.count == NoteSummaryReader.batchSize + 20)
        for summary in found { #expect(summary == (try notes.summary(ofNote: summary.id))) }
        #expect(try notes.search("photo").map(\.attachmentCount).sorted() == [1, 2])
    }

    /// Previews look their notes up by id: with many unlocked notes, "passphrase_id IS NULL"
    /// read through `notes_passphrase` made every list slower as the home grew.
    @Test func previewsLookTheirNotesUpByPrimaryKey() throws {
        let fixture = try Fixture()
        let count = NoteSummaryReader.batchSize
        let plan = try fixture.home.notes.pool.read { db in
            try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN " + NotesStore.previewsQuery(count: count),
                arguments: StatementArguments((0..<count).map(String.init))
            ).map { row -> String in row["detail"] }
        }
        #expect(!plan.contains { $0.contains("notes_passphrase") || $0.hasPrefix("SCAN") }, "\(plan)")
        #expect(plan.contains { $0.contains("sqlite_autoindex_notes_1 (id=?)") }, "\(plan)")
        let ids = Array(fixture.ids.values)
        let previews = try fixture.home.notes.previews(ofNotes: ids)
        #expect(previews[fixture.ids["early"]!] == nil)  // locked: no preview
        #expect(previews[fixture.ids["filler 3"]!] == "body of filler 3")
    }
}
