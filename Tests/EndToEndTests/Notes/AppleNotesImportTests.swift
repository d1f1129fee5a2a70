import Foundation
import NoteStoreFixture
import Testing
import TresorKit
import TresorModel
import TresorProtocol
import TresorTestSupport

/// `tresor import apple-notes PATH` with the real binaries, from NoteStore files shaped like
/// Apple's (both schema generations) holding the two known locked-note vectors.
@Suite(.blocksItsThread, .serialized) struct AppleNotesImportTests {
    static let passcode = "e2e-import-passcode"

    struct Imported: Decodable {
        var report: ImportReport
        var unreadable: [String]
    }

    func initialized() throws -> Harness {
        let harness = try Harness.initialized(passcode: Self.passcode)
        return harness
    }

    /// A NoteStore with an account, two folders, two unlocked notes, both vectors as locked
    /// notes and one damaged note; returns the file and the unlocked notes' body markers.
    func noteStore(_ schema: NoteStoreFixture.Schema, in folder: TemporaryFolder) throws -> (URL, [String]) {
        var fixture = NoteStoreFixture(schema: schema)
        let account = fixture.addAccount(name: "iCloud")
        let recipes = fixture.addFolder(title: "Recipes", account: account)
        let vault = fixture.addFolder(title: "Vault", account: account)
        let markers = ["import-marker-\(UUID().uuidString.prefix(8))", "import-marker-\(UUID().uuidString.prefix(8))"]
        _ = try fixture.addNote(
            .init(title: "Bread", text: "Bread\n\(markers[0])", folder: recipes, account: account, created: 700_000_000, modified: 700_000_100))
        _ = try fixture.addNote(.init(title: nil, text: "Soup of the day\n\(markers[1])", folder: recipes, account: account, created: 700_000_200))
        _ = try fixture.addNote(
            .init(
                title: "Encrypted title", body: .locked(.fullNoteVector(hint: "the usual word")), folder: vault, account: account,
                created: 700_000_300))
        let hashcat = AppleNotesVectors.Hashcat.self
        _ = try fixture.addNote(
            .init(
                title: "Hashcat example",
                body: .locked(
                    .init(
                        salt: hashcat.salt, iterations: Int64(hashcat.iterations), wrappedKey: hashcat.wrappedKey, iv: Data(count: 16),
                        tag: Data(count: 16), ciphertext: Data("no real body".utf8), hint: nil)), folder: vault, account: account))
        _ = try fixture.addNote(.init(title: "Damaged", body: .data(Data([0x1f, 0x8b, 0x08, 0, 1, 2, 3])), folder: recipes, account: account))
        let url = folder.url.appendingPathComponent("NoteStore.sqlite")
        try fixture.write(to: url)
        return (url, markers)
    }

    @Test(arguments: NoteStoreFixture.Schema.allCases)
    func importsTextAndLockedNotesWhichOpenWithTheirApplePassphrase(schema: NoteStoreFixture.Schema) throws {
        let harness = try initialized()
        let folder = try TemporaryFolder()
        let (store, markers) = try noteStore(schema, in: folder)
        let before = try folder.snapshot()

        let imported = try harness.json(Imported.self, ["import", "apple-notes", store.path, "--json"])
        #expect(imported.report == ImportReport(imported: 4, locked: 2, alreadyImported: 0, refused: []))
        #expect(imported.unreadable.count == 1 && imported.unreadable[0].contains("damaged"))
        #expect(try folder.snapshot() == before, "the Apple database and its folder are left exactly as they were")

        let notes = try harness.json([NoteSummary].self, ["note", "list"])
        #expect(Set(notes.map(\.title)) == ["Bread", "Soup of the day", "Encrypted title", "Hashcat example"])
        let bread = try #require(notes.first { $0.title == "Bread" })
        #expect(bread.folder == "Recipes" && bread.created == Date(timeIntervalSinceReferenceDate: 700_000_000))
        #expect(try harness.json(OpenedNote.self, ["note", "show", bread.id]).body == "Bread\n\(markers[0])")

        let locked = try #require(notes.first { $0.title == "Encrypted title" })
        #expect(locked.isLocked && locked.folder == "Vault" && locked.lock?.source == .appleNotes)
        let wrong = try harness.tresor(["note", "show", locked.id, "--passphrase-stdin"], input: "hashcat\n")
        #expect(!wrong.succeeded && wrong.stderr.contains("wrong passphrase"))
        let opened = try harness.json(OpenedNote.self, ["note", "show", locked.id, "--passphrase-stdin"], input: "password\n")
        // Apple's "Title" paragraph style is kept (docs/FORMAT.md, "Note bodies").
        #expect(opened.body == "# Encrypted title\n\nEncrypted body")

        // hashcat's example has the right wrapped key but no real body: the passphrase is
        // accepted and the body reported damaged — a clear error, nothing else affected.
        let example = try #require(notes.first { $0.title == "Hashcat example" })
        let damaged = try harness.tresor(["note", "show", example.id, "--passphrase-stdin"], input: "hashcat\n")
        #expect(!damaged.succeeded && damaged.stderr.contains("damaged"))
        #expect(!damaged.stderr.contains("wrong passphrase"))

        // Importing again adds nothing.
        let again = try harness.json(Imported.self, ["import", "apple-notes", store.path, "--json"])
        #expect(again.report.imported == 0 && again.report.alreadyImported == 4)
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).count == 4)

        // The imported text is sealed at rest like any note's.
        for (url, data) in try harness.homeFiles() {
            for marker in markers { #expect(data.range(of: Data(marker.utf8)) == nil, "\(url.lastPathComponent)") }
        }
        #expect(!harness.daemonLog.contains(markers[0]))
    }

    /// A reader that fills its standard error (as a crash report on a hostile file would) is
    /// still waited for and reported, not left blocked on a full pipe with `tresor` hanging.
    @Test func aReaderThatWritesMoreThanAPipeHoldsOnStandardErrorIsReportedNotHung() throws {
        let harness = try Harness()
        let folder = harness.root.appendingPathComponent("cli-with-fake-reader")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cli = folder.appendingPathComponent("tresor")
        try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("tresor"), to: cli)
        let reader = folder.appendingPathComponent("tresor-read-apple-notes")
        try Data("#!/bin/sh\nhead -c 300000 /dev/zero | tr '\\0' x >&2\nexit 1\n".utf8).write(to: reader)
        chmod(reader.path, 0o755)
        let result = try harness.run(cli, ["import", "apple-notes", "/nonexistent/NoteStore.sqlite"])
        #expect(!result.succeeded)
        #expect(result.stderr.contains(String(repeating: "x", count: 1000)) && result.stderr.count < 5000)
    }

    /// A NoteStore made to hurt the importer — a body that inflates past the reader's limit, a
    /// locked note declaring more rounds than the reader takes — among good notes, through the
    /// real CLI, reader and daemon: the good note is imported, each hostile one named and left
    /// out, and the daemon keeps serving.
    @Test func aHostileNoteStoreImportsItsGoodNotesAndNamesEachBadOne() throws {
        let harness = try initialized()
        let folder = try TemporaryFolder()
        var fixture = NoteStoreFixture(schema: .newer)
        let account = fixture.addAccount(name: "iCloud")
        let notes = fixture.addFolder(title: "Notes", account: account)
        _ = try fixture.addNote(.init(title: "Kept", text: "Kept\nstill here", folder: notes, account: account))
        // The reader's limits (`AppleNotesLimits`, docs/SECURITY.md): 64 MiB inflated, 10,000,000 rounds.
        let inflatedLimit = 64 << 20
        _ = try fixture.addNote(.init(title: "Bomb", body: .data(try Gzip.zeros(count: inflatedLimit + 1)), folder: notes, account: account))
        var slow = NoteStoreFixture.Note.Locked.fullNoteVector(hint: nil)
        slow.iterations = 10_000_001
        _ = try fixture.addNote(.init(title: "Slow", body: .locked(slow), folder: notes, account: account))
        let store = try fixture.write(into: folder)

        let imported = try harness.json(Imported.self, ["import", "apple-notes", store.path, "--json"])
        #expect(imported.report == ImportReport(imported: 1, locked: 0, alreadyImported: 0, refused: []))
        #expect(imported.unreadable.count == 2, "\(imported.unreadable)")
        #expect(imported.unreadable.contains { $0.contains("inflates to more than \(inflatedLimit) bytes") })
        #expect(imported.unreadable.contains { $0.contains("ZCRYPTOITERATIONCOUNT is \(slow.iterations)") })
        let listed = try harness.json([NoteSummary].self, ["note", "list"])
        #expect(listed.map(\.title) == ["Kept"])
        #expect(try harness.json(OpenedNote.self, ["note", "show", try #require(listed.first).id]).body == "Kept\nstill here")
        #expect(harness.daemonIsRunning)
    }

    /// A note far larger than a note may be — 12 MiB of a control character, which JSON writes
    /// in six bytes each, past the 64 MiB an import request may carry — is refused by name with
    /// the reason the daemon gives for a body over its limit, and the notes before and after it
    /// import: the CLI does not send it (it did, and the daemon's refusal of the request stopped
    /// the import there).
    @Test func aNoteLargerThanARequestMayBeIsRefusedByNameAndTheOthersImport() throws {
        let harness = try initialized()
        let folder = try TemporaryFolder()
        var fixture = NoteStoreFixture(schema: .newer)
        let account = fixture.addAccount(name: "iCloud")
        let notes = fixture.addFolder(title: "Notes", account: account)
        _ = try fixture.addNote(.init(title: "Before", text: "Before\nfirst", folder: notes, account: account, created: 700_000_000))
        let controls = String(repeating: "\u{1}", count: 12 << 20)
        _ = try fixture.addNote(.init(title: "Huge", text: "Huge\n" + controls, folder: notes, account: account, created: 700_000_100))
        _ = try fixture.addNote(.init(title: "After", text: "After\nlast", folder: notes, account: account, created: 700_000_200))
        let store = try fixture.write(into: folder)

        let imported = try harness.json(Imported.self, ["import", "apple-notes", store.path, "--json"])
        #expect(imported.report.imported == 2)
        #expect(imported.report.refused == ["\"Huge\": the body is longer than \(NoteLimits.bodyBytes) bytes"])
        #expect(Set(try harness.json([NoteSummary].self, ["note", "list"]).map(\.title)) == ["Before", "After"])
        #expect(harness.daemonIsRunning)
    }

    /// A NoteStore as a user's library has it: "Bread", pinned, in Recipes inside Personal; "Old
    /// list" and the locked "Old vault" in Recently Deleted; the tombstone of "Gone", deleted for
    /// good. Returns the file.
    static func libraryWithPlaces(in folder: TemporaryFolder) throws -> URL {
        var fixture = NoteStoreFixture(schema: .newer)
        let account = fixture.addAccount(name: "iCloud")
        let personal = fixture.addFolder(title: "Personal", account: account)
        let recipes = fixture.addFolder(title: "Recipes", account: account, parent: personal)
        let trash = fixture.addFolder(title: "Recently Deleted", account: account, type: 1)
        var bread = NoteStoreFixture.Note(title: "Bread", text: "Bread\nflour", folder: recipes, account: account, created: 700_000_000)
        bread.objectColumns = ["ZISPINNED": 1.databaseValue]
        _ = try fixture.addNote(bread)
        _ = try fixture.addNote(.init(title: "Old list", text: "Old list\nmilk", folder: trash, account: account, created: 700_000_100))
        _ = try fixture.addNote(
            .init(title: "Old vault", body: .locked(.fullNoteVector(hint: nil)), folder: trash, account: account, created: 700_000_200))
        var gone = NoteStoreFixture.Note(title: "Gone", text: "Gone\nfor good", folder: personal, account: account)
        gone.objectColumns = ["ZMARKEDFORDELETION": 1.databaseValue]
        _ = try fixture.addNote(gone)
        return try fixture.write(into: folder)
    }

    /// Apple Notes as a user's library has it: a folder inside another, the notes in Recently
    /// Deleted, the tombstone of a note deleted for good. Through the real CLI, reader and
    /// daemon the nested folder keeps its path, the deleted notes wait in Tresor's Recently
    /// Deleted, and the tombstone stays behind; the CLI says where the deleted ones went.
    @Test func nestedFoldersAndRecentlyDeletedKeepTheirPlaces() throws {
        let harness = try initialized()
        let folder = try TemporaryFolder()
        let store = try Self.libraryWithPlaces(in: folder)

        let said = try harness.tresor(["import", "apple-notes", store.path])
        #expect(said.succeeded, "\(said.stderr)")
        #expect(said.stdout.contains("Imported 3 notes (1 still locked with their Apple passphrase)."), "\(said.stdout)")
        #expect(said.stdout.contains("2 notes went into Recently Deleted, where Apple Notes had them"), "\(said.stdout)")

        let listed = try harness.json([NoteSummary].self, ["note", "list"])
        #expect(listed.map(\.title) == ["Bread"] && listed.first?.folder == "Personal/Recipes", "\(listed)")
        #expect(listed.first?.isPinned == true, "pinned in Apple Notes, pinned here")
        let folders = try harness.tresor(["note", "folder", "list"]).stdout
        #expect(folders == "Personal/Recipes  (1 note)\n", "Apple's Recently Deleted is no folder here: \(folders)")
        let binned = try harness.json([NoteSummary].self, ["note", "trash", "list"])
        #expect(Set(binned.map(\.title)) == ["Old list", "Old vault"] && binned.allSatisfy { $0.deleted != nil }, "\(binned)")
        let again = try harness.json(Imported.self, ["import", "apple-notes", store.path, "--json"])
        #expect(again.report == ImportReport(imported: 0, locked: 0, recentlyDeleted: 0, alreadyImported: 3, refused: []))
    }

    @Test func aFileThatIsNotANoteStoreIsAClearErrorAndImportsNothing() throws {
        let harness = try initialized()
        let folder = try TemporaryFolder()
        let bogus = folder.url.appendingPathComponent("NoteStore.sqlite")
        try Data("this is not a database, just some text".utf8).write(to: bogus)
        let result = try harness.tresor(["import", "apple-notes", bogus.path])
        #expect(!result.succeeded)
        #expect(result.stderr.lowercased().contains("not") && result.stderr.count < 400)
        let missing = try harness.tresor(["import", "apple-notes", folder.url.appendingPathComponent("absent.sqlite").path])
        #expect(!missing.succeeded)
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).isEmpty)
    }
}
