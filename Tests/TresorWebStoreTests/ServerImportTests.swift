import Foundation
import Logging
import Testing
import TresorNotesDomain
import TresorTestSupport
import TresorWebStore
import TresorWebStorePostgres

/// `ServerImport` (docs/WEB.md, "Moving a home's web accounts to a server") on a throwaway
/// PostgreSQL: what it writes reads back through the server's ordinary `WebStore`; written
/// twice, it is there once; and what the server already holds with other data is reported and
/// left as it is — never overwritten.
@Suite(.serialized, .enabled(if: TestPostgres.shouldRun)) struct ServerImportTests {
    static func password(_ text: String) -> AccountPassword { try! AccountPassword(text) }

    @Test func importsOnceAndNeverOverwritesWhatTheServerHolds() async throws {
        let url = try await TestPostgres.freshDatabase()
        let importer = try await ServerImport.open(
            url: try DatabaseURL(parsing: url), key: ServerStorageFixture.key, timeout: TestPostgres.stepDeadline,
            logger: Logger(label: "tresor.tests.import"))
        let storage = try await ServerStorageFixture.open(url: url)
        let store = storage.store

        // An account already on the server, registered there.
        let resident = try await store.registerAccount(name: "rita", password: Self.password("rita-password-1"))

        let hash = try PasswordHash.make(Self.password("ines-password-1"), rounds: 1_000)
        let ines = ImportedAccount(id: "11111111-1111-1111-1111-111111111111", loginName: "ines", passwordHash: hash, created: Date())
        #expect(try await importer.importAccount(ines) == .moved)
        #expect(try await importer.importAccount(ines) == .alreadyPresent)
        #expect(try await store.authenticate(name: "ines", password: Self.password("ines-password-1"))?.id.rawValue == ines.id)

        // The same id with another password: reported, the server's hash kept.
        var changed = ines
        changed.passwordHash = try PasswordHash.make(Self.password("another-password"), rounds: 1_000)
        guard case .skipped = try await importer.importAccount(changed) else { Issue.record("a different account was not reported"); return }
        #expect(try await store.authenticate(name: "ines", password: Self.password("ines-password-1")) != nil)
        #expect(try await store.authenticate(name: "ines", password: Self.password("another-password")) == nil)

        // Another id under a login name the server has: reported, rita untouched.
        let impostor = ImportedAccount(id: "22222222-2222-2222-2222-222222222222", loginName: "rita", passwordHash: hash, created: Date())
        guard case .skipped(let reason) = try await importer.importAccount(impostor) else { Issue.record("a taken name was not reported"); return }
        #expect(reason.contains(resident.id.rawValue) && !reason.contains("rita"), "ids only: \(reason)")
        #expect(try await store.authenticate(name: "rita", password: Self.password("rita-password-1")) == resident)

        // A folder, a pinned note in it, and a note whose id is already another account's.
        let folder = ImportedFolder(id: "f-1", account: ines.id, name: "Work", created: Date())
        #expect(try await importer.importFolder(folder) == .moved)
        #expect(try await importer.importFolder(folder) == .alreadyPresent)
        let note = ImportedNote(
            id: "n-1", account: ines.id, folder: "f-1", created: Date(timeIntervalSince1970: 1_700_000_000),
            modified: Date(timeIntervalSince1970: 1_700_000_100), pinned: true, revision: 7, deleted: nil, title: "Plan",
            content: .text("the body"), participants: [(resident.id.rawValue, Date())])
        #expect(try await importer.importNote(note) == .moved)
        #expect(try await importer.importNote(note) == .alreadyPresent)
        let opened = try await store.openNote("n-1")
        #expect(opened.body == "the body" && opened.summary.title == "Plan" && opened.summary.folder == "Work" && opened.summary.isPinned)
        #expect(opened.summary.revision == 7 && opened.summary.sharing?.participants == ["rita"])
        // Edited in the home since it moved: the home's version goes beside the server's, as its
        // conflict copy, once however often the migration runs; a pin changed is no new version.
        var edited = note
        (edited.content, edited.revision, edited.modified) = (.text("the body, edited in the home"), 9, Date(timeIntervalSince1970: 1_700_000_200))
        guard case .movedAsCopy(let copyID) = try await importer.importNote(edited) else {
            Issue.record("an edited note was not moved beside the server's")
            return
        }
        #expect(try await importer.importNote(edited) == .alreadyPresent)
        let copy = try await store.openNote(copyID)
        #expect(copy.body == "the body, edited in the home" && copy.summary.title == "Plan (conflict copy)" && copy.summary.folder == "Work")
        #expect(try await store.openNote("n-1").body == "the body", "the server's version stays")
        var repinned = note
        repinned.pinned = false
        #expect(try await importer.importNote(repinned) == .alreadyPresent)
        var theirs = note
        theirs.account = resident.id.rawValue
        guard case .skipped = try await importer.importNote(theirs) else { Issue.record("a note of another account was not reported"); return }
        #expect(try await store.openNote("n-1").body == "the body")

        // An attachment of two chunks: written, then found; interrupted and begun again, whole.
        let attachment = ImportedAttachment(
            id: "a-1", note: "n-1", kind: .file, name: "big.bin", byteCount: LockedNoteShape.chunkByteCount + 3, created: Date(), isLocked: false,
            excludedFromBackup: true)
        let first = Data(repeating: 1, count: LockedNoteShape.chunkByteCount), second = Data([2, 3, 4])
        #expect(try await importer.beginAttachment(attachment) == .moved)
        try await importer.writeAttachmentChunk(first, index: 0, of: "a-1")
        // Interrupted here; the next run begins it again.
        #expect(try await importer.beginAttachment(attachment) == .moved)
        try await importer.writeAttachmentChunk(first, index: 0, of: "a-1")
        try await importer.writeAttachmentChunk(second, index: 1, of: "a-1")
        #expect(try await importer.finishAttachment(attachment, chunkCount: 2) == .moved)
        #expect(try await importer.beginAttachment(attachment) == .alreadyPresent)
        let reader = try await store.readAttachment("a-1", of: "n-1")
        var read = Data()
        while let chunk = try await reader.next() { read.append(chunk) }
        #expect(read == first + second)
        #expect(try await store.listedAttachments(ofNote: "n-1").map(\.excludedFromBackup) == [true], "left out of backups there too")

        let name = TestPostgres.databaseName(of: url)
        #expect(try await TestPostgres.texts("SELECT COUNT(*)::text FROM attachment_uploads", database: name) == ["0"])
        #expect(
            try await TestPostgres.texts("SELECT COUNT(*)::text FROM notes", database: name) == ["2"], "the note and the conflict copy of its edit")
        await importer.close()
        await storage.close()
    }
}
