import Foundation
import GRDB
import NoteStoreFixture
import Testing
import TresorAppleNotes

/// AppleNoteStore.read on well-formed NoteStores of both schema generations: every field read
/// back, locked notes kept locked and still openable, the user's folder untouched.
@Suite struct AppleNoteStoreTests {
    /// Seconds since 2001-01-01 and the same instants since 1970 (978,307,200 s apart).
    static let created = 700_000_000.25
    static let modified = 731_234_567.5
    static let createdUnix = 1_678_307_200.25
    static let modifiedUnix = 1_709_541_767.5

    /// A library with two accounts, three folders, three unlocked notes and the two locked
    /// vectors, and what reading it must give.
    struct Sample {
        var fixture: NoteStoreFixture
        var expected: AppleNotesLibrary

        init(schema: NoteStoreFixture.Schema) throws {
            fixture = NoteStoreFixture(schema: schema)
            let iCloud = fixture.addAccount(name: "iCloud")
            let local = fixture.addAccount(name: "On My Mac")
            let notes = fixture.addFolder(title: "Notes", account: iCloud)
            let recipes = fixture.addFolder(title: "Recipes 🍞", account: iCloud)
            let localNotes = fixture.addFolder(title: "Notes", account: local)
            let created = AppleNoteStoreTests.created, modified = AppleNoteStoreTests.modified
            let plain = try fixture.addNote(
                .init(
                    title: "Groceries", text: "Groceries\nmilk\neggs", folder: notes, account: iCloud,
                    created: created, modified: modified))
            let untitled = try fixture.addNote(
                .init(
                    title: nil, text: "\n  \u{FFFC} Bread  \n500 g flour", folder: recipes, account: iCloud,
                    created: created + 1, modified: nil))
            let offline = try fixture.addNote(
                .init(
                    title: "Local", text: "", folder: localNotes, account: local, created: nil, modified: modified))
            let full = try fixture.addNote(
                .init(
                    title: nil,
                    body: .locked(
                        .init(
                            salt: AppleNotesVectors.FullNote.salt, iterations: 20_000,
                            wrappedKey: AppleNotesVectors.FullNote.wrappedKey, iv: AppleNotesVectors.FullNote.iv,
                            tag: AppleNotesVectors.FullNote.tag, ciphertext: AppleNotesVectors.FullNote.ciphertext,
                            hint: "the usual one")),
                    folder: notes, account: iCloud, created: created, modified: modified))
            let hashcatCiphertext = Data((0..<61).map { UInt8($0 * 7 & 0xFF) })
            let hashcatIV = Data((0..<16).map { UInt8(0xA0 + $0) })
            let hashcatTag = Data((0..<16).map { UInt8(0x30 + $0) })
            let hashcat = try fixture.addNote(
                .init(
                    title: "Bank codes",
                    body: .locked(
                        .init(
                            salt: AppleNotesVectors.Hashcat.salt, iterations: 20_000,
                            wrappedKey: AppleNotesVectors.Hashcat.wrappedKey, iv: hashcatIV, tag: hashcatTag,
                            ciphertext: hashcatCiphertext, hint: nil)),
                    folder: recipes, account: nil, created: nil, modified: nil))

            let date = { (seconds: Double) in Date(timeIntervalSinceReferenceDate: seconds) }
            expected = AppleNotesLibrary(
                accounts: [AppleAccount(id: iCloud, name: "iCloud"), AppleAccount(id: local, name: "On My Mac")],
                folders: [
                    AppleFolder(id: notes, title: "Notes", accountID: iCloud),
                    AppleFolder(id: recipes, title: "Recipes 🍞", accountID: iCloud),
                    AppleFolder(id: localNotes, title: "Notes", accountID: local),
                ],
                notes: [
                    AppleNote(
                        id: plain, title: "Groceries", folderID: notes, accountID: iCloud, created: date(created),
                        modified: date(modified), content: .text("Groceries\nmilk\neggs")),
                    AppleNote(
                        id: untitled, title: "Bread", folderID: recipes, accountID: iCloud, created: date(created + 1),
                        modified: nil, content: .text("\n  \u{FFFC} Bread  \n500 g flour")),
                    AppleNote(
                        id: offline, title: "Local", folderID: localNotes, accountID: local, created: nil,
                        modified: date(modified), content: .text("")),
                    AppleNote(
                        id: full, title: "Locked note", folderID: notes, accountID: iCloud, created: date(created),
                        modified: date(modified),
                        content: .locked(
                            AppleLockedNote(
                                salt: AppleNotesVectors.FullNote.salt, iterations: 20_000,
                                wrappedKey: AppleNotesVectors.FullNote.wrappedKey, iv: AppleNotesVectors.FullNote.iv,
                                tag: AppleNotesVectors.FullNote.tag, ciphertext: AppleNotesVectors.FullNote.ciphertext,
                                hint: "the usual one"))),
                    // No account of its own: its folder's.
                    AppleNote(
                        id: hashcat, title: "Bank codes", folderID: recipes, accountID: iCloud, created: nil,
                        modified: nil,
                        content: .locked(
                            AppleLockedNote(
                                salt: AppleNotesVectors.Hashcat.salt, iterations: 20_000,
                                wrappedKey: AppleNotesVectors.Hashcat.wrappedKey, iv: hashcatIV, tag: hashcatTag,
                                ciphertext: hashcatCiphertext, hint: nil))),
                ],
                skipped: [])
        }
    }

    @Test(arguments: NoteStoreFixture.Schema.allCases)
    func readsEveryField(schema: NoteStoreFixture.Schema) throws {
        let folder = try TemporaryFolder()
        let sample = try Sample(schema: schema)
        let library = try AppleNoteStore.read(at: sample.fixture.write(into: folder))
        #expect(library.accounts == sample.expected.accounts)
        #expect(library.folders == sample.expected.folders)
        #expect(library.skipped == [])
        #expect(library.notes.count == sample.expected.notes.count)
        for (note, expected) in zip(library.notes, sample.expected.notes) {
            #expect(note == expected)
        }
        #expect(library == sample.expected)
        #expect(!library.unreadWriteAheadLog)
        // The 2001 epoch: the same instants counted from 1970.
        #expect(library.notes[0].created?.timeIntervalSince1970 == Self.createdUnix)
        #expect(library.notes[0].modified?.timeIntervalSince1970 == Self.modifiedUnix)
    }

    @Test(arguments: NoteStoreFixture.Schema.allCases)
    func lockedNotesStayLockedAndOpenWithTheirPassphrase(schema: NoteStoreFixture.Schema) throws {
        let folder = try TemporaryFolder()
        let library = try AppleNoteStore.read(at: Sample(schema: schema).fixture.write(into: folder))
        let locked = library.notes.compactMap { note -> AppleLockedNote? in
            if case .locked(let locked) = note.content { return locked }
            return nil
        }
        try #require(locked.count == 2)
        #expect(try openLockedNote(locked[0], passphrase: AppleNotesVectors.FullNote.passphrase) == AppleNotesVectors.FullNote.text)
        #expect(throws: (any Error).self) { try openLockedNote(locked[0], passphrase: "wrong") }
        // The hashcat note has no real body, but its key still unwraps with its passphrase.
        #expect(try unwrapNoteKey(locked[1], passphrase: AppleNotesVectors.Hashcat.passphrase) == AppleNotesVectors.Hashcat.noteKey)
        #expect(throws: (any Error).self) { try openLockedNote(locked[1], passphrase: AppleNotesVectors.Hashcat.passphrase) }
    }

    @Test(arguments: NoteStoreFixture.Schema.allCases)
    func theSourceFolderIsUnchanged(schema: NoteStoreFixture.Schema) throws {
        let folder = try TemporaryFolder()
        let url = try Sample(schema: schema).fixture.write(into: folder)
        let before = try folder.snapshot()
        #expect(before.keys.sorted() == [".", "NoteStore.sqlite"])
        Thread.sleep(forTimeInterval: 0.01)  // so a rewrite would show in the modification times
        _ = try AppleNoteStore.read(at: url)
        _ = try AppleNoteStore.read(at: url)
        #expect(try folder.snapshot() == before)
    }

    @Test func theSourceFolderIsUnchangedWhenItIsReadOnly() throws {
        let folder = try TemporaryFolder()
        let url = try Sample(schema: .newer).fixture.write(into: folder)
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: url.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: folder.url.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.url.path) }
        let before = try folder.snapshot()
        #expect(try AppleNoteStore.read(at: url).notes.count == 5)
        #expect(try folder.snapshot() == before)
    }

    @Test func aWriteAheadLogBesideTheFileIsReportedAndLeftAlone() throws {
        let folder = try TemporaryFolder()
        let url = try Sample(schema: .newer).fixture.write(into: folder)
        let wal = URL(fileURLWithPath: url.path + "-wal")
        try Data("not really a WAL".utf8).write(to: wal)
        let before = try folder.snapshot()
        let library = try AppleNoteStore.read(at: url)
        #expect(library.unreadWriteAheadLog)
        #expect(library.notes.count == 5)
        #expect(try folder.snapshot() == before)
        try Data().write(to: wal)  // an empty one holds nothing
        #expect(try !AppleNoteStore.read(at: url).unreadWriteAheadLog)
    }

    @Test func pathsWithSpecialCharactersOpen() throws {
        let folder = try TemporaryFolder()
        for name in ["Note Store?.sqlite", "100% #1 & more.sqlite", "ünï cødé.sqlite"] {
            let url = try Sample(schema: .older).fixture.write(into: folder, name: name)
            #expect(try AppleNoteStore.read(at: url).notes.count == 5, "\(name)")
        }
    }

    @Test func ivAndTagFallBackToTheNoteRow() throws {
        // Older NoteStores keep a locked note's IV and tag on ZICCLOUDSYNCINGOBJECT only.
        let folder = try TemporaryFolder()
        var fixture = NoteStoreFixture(schema: .newer)
        var note = NoteStoreFixture.Note(
            title: "Old lock",
            body: .locked(
                .init(
                    salt: AppleNotesVectors.FullNote.salt, iterations: 20_000, wrappedKey: AppleNotesVectors.FullNote.wrappedKey,
                    iv: Data(), tag: Data(), ciphertext: AppleNotesVectors.FullNote.ciphertext, hint: nil)))
        note.noteDataColumns = ["ZCRYPTOINITIALIZATIONVECTOR": .null, "ZCRYPTOTAG": .null]
        note.objectColumns = [
            "ZCRYPTOINITIALIZATIONVECTOR": AppleNotesVectors.FullNote.iv.databaseValue,
            "ZCRYPTOTAG": AppleNotesVectors.FullNote.tag.databaseValue,
        ]
        try fixture.addNote(note)
        let library = try AppleNoteStore.read(at: fixture.write(into: folder))
        guard case .locked(let locked)? = library.notes.first?.content else {
            Issue.record("no locked note: \(library.skipped.map(\.reason))")
            return
        }
        #expect(locked.iv == AppleNotesVectors.FullNote.iv)
        #expect(locked.tag == AppleNotesVectors.FullNote.tag)
        #expect(try openLockedNote(locked, passphrase: "password") == AppleNotesVectors.FullNote.text)
    }

    @Test func theNewestCreationDateColumnWinsAndAbsentOnesAreFine() throws {
        let folder = try TemporaryFolder()
        var fixture = NoteStoreFixture(schema: .newer)
        var both = NoteStoreFixture.Note(title: "both", text: "x", created: 3_000)
        both.objectColumns = ["ZCREATIONDATE1": 2_000.databaseValue, "ZCREATIONDATE": 1_000.databaseValue]
        var middle = NoteStoreFixture.Note(title: "middle", text: "x")
        middle.objectColumns = ["ZCREATIONDATE1": 2_000.databaseValue, "ZCREATIONDATE": 1_000.databaseValue]
        var oldest = NoteStoreFixture.Note(title: "oldest", text: "x")
        oldest.objectColumns = ["ZCREATIONDATE": 1_000.databaseValue]
        var integer = NoteStoreFixture.Note(title: "integer", text: "x")
        integer.objectColumns = ["ZCREATIONDATE3": 42.databaseValue, "ZMODIFICATIONDATE1": (-86_400).databaseValue]
        for note in [both, middle, oldest, integer] { try fixture.addNote(note) }
        let notes = try AppleNoteStore.read(at: fixture.write(into: folder)).notes
        #expect(notes.map(\.created?.timeIntervalSinceReferenceDate) == [3_000, 2_000, 1_000, 42])
        #expect(notes.map(\.modified?.timeIntervalSinceReferenceDate) == [nil, nil, nil, -86_400])
    }

    @Test func referencesThatNameNothingAreNil() throws {
        let folder = try TemporaryFolder()
        var fixture = NoteStoreFixture(schema: .older)
        let account = fixture.addAccount(name: "iCloud")
        let orphanFolder = fixture.addFolder(title: "Orphan", account: 999)
        let note = try fixture.addNote(.init(title: "t", text: "x", folder: 998, account: 997))
        let selfish = try fixture.addNote(.init(title: "u", text: "y", folder: note, account: note))
        let folderOnly = try fixture.addNote(.init(title: "v", text: "z", folder: orphanFolder, account: nil))
        let library = try AppleNoteStore.read(at: fixture.write(into: folder))
        #expect(library.accounts == [AppleAccount(id: account, name: "iCloud")])
        #expect(library.folders == [AppleFolder(id: orphanFolder, title: "Orphan", accountID: nil)])
        #expect(library.notes.map(\.id) == [note, selfish, folderOnly])
        #expect(library.notes.map(\.folderID) == [nil, nil, orphanFolder])
        #expect(library.notes.map(\.accountID) == [nil, nil, nil])
    }

    /// Where each note goes in Tresor, whose folders are flat: a nested folder by its path, the
    /// notes of Recently Deleted (whatever its title, and in a folder deleted into it) bound for
    /// Tresor's, the tombstones of notes Apple deleted for good nowhere.
    @Test func nestedFoldersRecentlyDeletedAndNotesDeletedForGood() throws {
        let folder = try TemporaryFolder()
        var fixture = NoteStoreFixture(schema: .newer)
        let account = fixture.addAccount(name: "iCloud")
        let personal = fixture.addFolder(title: "Personal", account: account)
        let recipes = fixture.addFolder(title: "Recipes", account: account, parent: personal)
        let otherRecipes = fixture.addFolder(title: "Recipes", account: account)
        let trash = fixture.addFolder(title: "Zuletzt gelöscht", account: account, type: 1)
        let deletedFolder = fixture.addFolder(title: "Old plans", account: account, parent: trash)
        let loopA = fixture.addFolder(title: "A", account: account)
        let loopB = fixture.addFolder(title: "B", account: account, parent: loopA)
        var live = NoteStoreFixture.Note(title: "Bread", text: "Bread", folder: recipes, account: account)
        live.objectColumns = ["ZMARKEDFORDELETION": 0.databaseValue, "ZISPINNED": 1.databaseValue]
        try fixture.addNote(live)
        try fixture.addNote(.init(title: "Cake", text: "Cake", folder: otherRecipes, account: account))
        try fixture.addNote(.init(title: "Binned", text: "Binned", folder: trash, account: account))
        try fixture.addNote(.init(title: "Binned with its folder", text: "x", folder: deletedFolder, account: account))
        var tombstone = NoteStoreFixture.Note(title: "Gone for good", text: "Gone", folder: recipes, account: account)
        tombstone.objectColumns = ["ZMARKEDFORDELETION": 1.databaseValue]
        try fixture.addNote(tombstone)
        try fixture.addNote(.init(title: "In a loop", text: "x", folder: loopB, account: account))
        let url = try fixture.write(into: folder)
        // A damaged database whose folders are each other's parents.
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { try $0.execute(sql: "UPDATE ZICCLOUDSYNCINGOBJECT SET ZPARENT = ? WHERE Z_PK = ?", arguments: [loopB, loopA]) }
        try queue.close()

        let library = try AppleNoteStore.read(at: url)
        #expect(library.folders.first { $0.id == recipes }?.parentID == personal)
        #expect(library.folders.filter(\.isRecentlyDeleted).map(\.id) == [trash])
        #expect(!library.notes.contains { $0.title == "Gone for good" }, "a note Apple deleted for good is no note")
        let records = Dictionary(uniqueKeysWithValues: library.importReading.notes.map { ($0.title, $0) })
        #expect(records.count == 5)
        #expect(records["Bread"]?.folder == "Personal/Recipes" && records["Bread"]?.inRecentlyDeleted == false)
        #expect(records["Cake"]?.folder == "Recipes", "a folder of the same title elsewhere stays apart")
        #expect(records["Bread"]?.isPinned == true && records["Cake"]?.isPinned == false, "pins are kept")
        for title in ["Binned", "Binned with its folder"] {
            #expect(records[title]?.inRecentlyDeleted == true && records[title]?.folder == nil, "\(title)")
        }
        #expect(records["In a loop"]?.folder == "B", "a loop of parents ends; the folder keeps its own title")
    }

    @Test func titlesFallBackToTheFirstLineOrLockedNote() throws {
        let folder = try TemporaryFolder()
        var fixture = NoteStoreFixture(schema: .older)
        try fixture.addNote(.init(title: nil, text: "First line\nsecond"))
        try fixture.addNote(.init(title: nil, text: "\n\n   \n"))
        try fixture.addNote(.init(title: nil, text: String(repeating: "é", count: 500)))
        try fixture.addNote(.init(title: " ", text: "A blank stored title falls back"))
        try fixture.addNote(.init(title: "Stored", text: "A stored title wins"))
        try fixture.addNote(
            .init(
                title: nil,
                body: .locked(
                    .init(
                        salt: Data([1]), iterations: 1, wrappedKey: Data(count: 24), iv: Data(count: 12), tag: Data(count: 16),
                        ciphertext: Data([0]), hint: nil))))
        let titles = try AppleNoteStore.read(at: fixture.write(into: folder)).notes.map(\.title)
        #expect(
            titles == ["First line", "Untitled note", String(repeating: "é", count: 200), "A blank stored title falls back", "Stored", "Locked note"])
    }

    @Test func aMinimalSchemaWithOnlyTheEssentialColumnsReads() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("NoteStore.sqlite")
        let queue = try DatabaseQueue(path: url.path)
        let body = try Gzip.noteBody("minimal text")
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE ZICCLOUDSYNCINGOBJECT (Z_PK INTEGER PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE ZICNOTEDATA (ZNOTE INTEGER, ZDATA BLOB)")
            try db.execute(sql: "INSERT INTO ZICCLOUDSYNCINGOBJECT VALUES (7), (8)")
            try db.execute(sql: "INSERT INTO ZICNOTEDATA VALUES (7, ?)", arguments: [body])
        }
        try queue.close()
        let library = try AppleNoteStore.read(at: url)
        #expect(
            library
                == AppleNotesLibrary(notes: [
                    AppleNote(
                        id: 7, title: "minimal text", folderID: nil, accountID: nil, created: nil, modified: nil, content: .text("minimal text"))
                ]))
    }

    @Test func ofSeveralNoteDataRowsTheGreatestRowidCounts() throws {
        let folder = try TemporaryFolder()
        var fixture = NoteStoreFixture(schema: .newer)
        let id = try fixture.addNote(.init(title: "dup", text: "first"))
        fixture.sqlAfterRows = [
            "INSERT INTO ZICNOTEDATA (Z_PK, ZNOTE, ZDATA) VALUES (5000, \(id), x'\(try Gzip.noteBody("second").map { String(format: "%02x", $0) }.joined())')"
        ]
        #expect(try AppleNoteStore.read(at: fixture.write(into: folder)).notes.map(\.content) == [.text("second")])
    }
}
