import Foundation
import NoteStoreFixture
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// A note imported still locked from Apple Notes travels (docs/SYNC.md, "Notes"): with its
/// passphrase imported from Apple Notes — no verifier, never the account's current one — it goes
/// to the server and the other device, opens there with Apple's passphrase only, and an edit
/// made there comes back still locked with it. What the import kept of each note's place — its
/// folder's path, its pin, Apple's Recently Deleted — travels too.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncAppleLockedTests {
    static let passphrase = AppleNotesVectors.FullNote.passphrase

    /// Imports a NoteStore holding Apple's locked-note vector, hinted, into `device`.
    /// - Returns: the imported note as listed.
    static func importLockedNote(_ device: Harness, title: String) throws -> NoteSummary {
        let folder = try TemporaryFolder()
        var fixture = NoteStoreFixture(schema: .newer)
        let account = fixture.addAccount(name: "iCloud")
        let vault = fixture.addFolder(title: "Vault", account: account)
        _ = try fixture.addNote(
            .init(title: title, body: .locked(.fullNoteVector(hint: "the usual word")), folder: vault, account: account, created: 700_000_300))
        let store = try fixture.write(into: folder)
        let imported = try device.tresor(["import", "apple-notes", store.path])
        #expect(imported.succeeded, "\(imported.stderr)")
        return try #require(try device.json([NoteSummary].self, ["note", "list"]).first { $0.title == title })
    }

    @Test func anAppleLockedNoteOpensOnTheOtherDeviceWithItsApplePassphraseAndAnEditComesBack() async throws {
        let (cluster, browser, laptop, phone) = try await SyncE2E.twoJoinedDevicesAndBrowser()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let imported = try Self.importLockedNote(laptop, title: "Encrypted title")
        #expect(imported.lock?.source == .appleNotes)
        #expect(try SyncNotesE2ETests.syncNow(laptop).sent == 1)
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).notesWaiting == 0)
        // The server keeps it under an Apple passphrase, not as the account's current one.
        let onWeb = try browser.get("/api/passphrase")
        #expect(onWeb.status == 200 && onWeb.json?["isSet"] as? Bool == false, "\(onWeb.text)")

        #expect(try SyncNotesE2ETests.syncNow(phone).applied == 1)
        let listed = try #require(try phone.json([NoteSummary].self, ["note", "list"]).first { $0.title == "Encrypted title" })
        #expect(listed.isLocked && listed.folder == "Vault")
        #expect(listed.lock?.source == .appleNotes && listed.lock?.isCurrent == false && listed.lock?.hint == "the usual word", "\(listed)")
        let wrong = try phone.tresor(["note", "show", listed.id, "--passphrase-stdin"], input: "hashcat\n")
        #expect(!wrong.succeeded && wrong.stderr.contains("wrong passphrase"), "\(wrong.stderr)")
        let opened = try phone.json(OpenedNote.self, ["note", "show", listed.id, "--passphrase-stdin"], input: Self.passphrase + "\n")
        #expect(opened.body == "# Encrypted title\n\nEncrypted body")
        // The phone has no notes passphrase of its own: Apple's did not become it.
        #expect(try phone.json(NotesPassphraseStatus.self, ["note", "passphrase", "status"]).status.isSet == false)

        // Edited on the phone (its session open): back on the laptop, locked with Apple's passphrase.
        let edited = "# Encrypted title\n\nEncrypted body\ne2e-apple-locked-marker from the phone"
        try SyncNotesE2ETests.edit(phone, listed.id, body: edited)
        #expect(try SyncNotesE2ETests.syncNow(phone).sent == 1)
        #expect(try SyncNotesE2ETests.syncNow(laptop).applied == 1)
        let back = try #require(try laptop.json([NoteSummary].self, ["note", "list"]).first { $0.id == imported.id })
        #expect(back.isLocked && back.lock?.source == .appleNotes, "\(back)")
        let reopened = try laptop.json(OpenedNote.self, ["note", "show", imported.id, "--passphrase-stdin"], input: Self.passphrase + "\n")
        #expect(reopened.body == edited)
        #expect(try laptop.json([NoteSummary].self, ["note", "list"]).count == 1, "no copy was made")
        for device in [laptop, phone] { #expect(!device.daemonLog.contains("e2e-apple-locked-marker")) }
    }

    /// What an import put in its place travels with it: the notes Apple Notes had in Recently
    /// Deleted, one of them locked, are in the other device's Recently Deleted, a note in a
    /// nested folder in the folder of that path, a pinned one pinned.
    @Test func importedNotesArriveInTheirPlaces() async throws {
        let (cluster, laptop, phone) = try await SyncE2E.twoJoinedDevices()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let folder = try TemporaryFolder()
        let library = try AppleNotesImportTests.libraryWithPlaces(in: folder)
        let imported = try laptop.tresor(["import", "apple-notes", library.path])
        #expect(imported.succeeded, "\(imported.stderr)")

        #expect(try SyncNotesE2ETests.syncNow(laptop).sent == 3)
        #expect(try SyncNotesE2ETests.syncNow(phone).applied == 3)
        let listed = try phone.json([NoteSummary].self, ["note", "list"])
        #expect(listed.map(\.title) == ["Bread"] && listed.first?.folder == "Personal/Recipes" && listed.first?.isPinned == true, "\(listed)")
        let binned = try phone.json([NoteSummary].self, ["note", "trash", "list"])
        #expect(Set(binned.map(\.title)) == ["Old list", "Old vault"] && binned.allSatisfy { $0.deleted != nil }, "\(binned)")
    }

    /// A server that does not say it keeps Apple passphrases (an older one, which would refuse
    /// the record for its missing verifier): the Apple-locked note waits, counted, and the other
    /// notes go; once the server says so, it goes.
    @Test func anAppleLockedNoteWaitsForAServerThatKeepsApplePassphrases() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let server = cluster.servers[0]
        let (browser, password) = try cluster.registered("ada", on: server)
        let proxy = try CuttingProxy(upstream: server.port, trigger: "no client sends this") {}
        // The state's answer as an older server gives it: the field is not there (a key of the
        // same length that no one reads).
        proxy.rewriteAnswers(#""appleNotesPassphrases":true"#, with: #""notKnownToOlderServer":true"#)
        let laptop = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, proxy.address, name: "laptop", password: password)
        _ = try Self.importLockedNote(laptop, title: "Encrypted title")
        _ = try SyncNotesE2ETests.newNote(laptop, "Groceries\nmilk")
        let first = try SyncNotesE2ETests.syncNow(laptop)
        #expect(first.sent == 1 && first.waiting == 1, "\(first)")
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).notesWaiting == 1)
        let listed = try browser.get("/api/notes")
        #expect(listed.status == 200 && !listed.text.contains("Encrypted title") && listed.text.contains("Groceries"), "\(listed.text)")

        proxy.rewriteAnswers(nil)
        let second = try SyncNotesE2ETests.syncNow(laptop)
        #expect(second.sent == 1 && second.waiting == 0, "\(second)")
        #expect(try browser.get("/api/notes").text.contains("Encrypted title"))
    }
}
