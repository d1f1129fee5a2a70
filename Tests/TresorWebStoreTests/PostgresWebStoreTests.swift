import Foundation
import Logging
import PostgresNIO
import Testing
import TresorNotesDomain
import TresorTestSupport
import TresorWebStore

@testable import TresorWebStorePostgres

/// The `WebStore` checks on a server's database: each on a fresh database of the throwaway
/// PostgreSQL server (`TestPostgres`), as `EmbeddedWebStoreConformanceTests` runs them on a home.
@Suite("Web storage conformance: PostgreSQL notes", .enabled(if: TestPostgres.shouldRun))
struct PostgresWebStoreConformanceTests {
    @Test(arguments: WebStoreCheck.all)
    func conformance(_ check: WebStoreCheck) async throws {
        let clock = TestClock.running()
        let listening = Locked(false)
        let storage = try await ServerStorageFixture.open(
            url: try await TestPostgres.freshDatabase(), listening: { listening.withLock { $0 = true } }, clock: { clock.now })
        let heard = HeardChanges(storage.events)
        do {
            // Changes announced before the events connection listens would not be heard.
            try await waitUntil("the store to listen for changes") { listening.withLock { $0 } }
            try await check.body(storage.store, clock, heard)
        } catch {
            heard.stop()
            await storage.close()
            throw error
        }
        heard.stop()
        await storage.close()
    }
}

/// What only a server shows: several instances on one database, and what its tables hold.
@Suite("PostgreSQL notes across instances", .enabled(if: TestPostgres.shouldRun))
struct PostgresWebStoreInstanceTests {
    @Test func aShareOnOneInstanceAndAnUnshareOnTheOtherAreSeenAtOnce() async throws {
        let url = try await TestPostgres.freshDatabase()
        let listening = Locked(0)
        let a = try await ServerStorageFixture.open(url: url) { listening.withLock { $0 += 1 } }
        let b = try await ServerStorageFixture.open(url: url)
        try await waitUntil("the store to listen for changes") { listening.withLock { $0 } >= 1 }
        let heard = Locked<[NoteChange]>([])
        a.events.listen { event in
            if case .note(let change) = event { heard.withLock { $0.append(change) } }
        }
        let owner = try await a.store.registerAccount(name: "mona", password: WebStoreCheck.password("mona-password-1"))
        let participant = try await b.store.registerAccount(name: "ned", password: WebStoreCheck.password("ned-password-1"))
        await #expect(throws: NotesError.nameTaken("ned")) {
            try await a.store.registerAccount(name: "NED", password: WebStoreCheck.password("ned-password-2"))
        }
        let note = try await a.store.createNote(NoteDraft(title: "Shared plan", body: "one\ntwo"), account: owner.id, quota: nil)
        _ = try await a.store.share(note: note.id, with: "ned", by: owner.id)
        #expect(try await b.store.access(toNote: note.id, for: participant.id, includingDeleted: false) == .participant)
        #expect(try await b.store.notesShared(with: participant.id).map(\.id) == [note.id])

        // Two saves from one revision through the two instances: the second merges, never overwrites.
        let base = NoteBase(revision: try await a.store.summary(ofNote: note.id).revision, body: "one\ntwo")
        async let fromA = a.store.saveNote(note.id, NoteChanges(body: "ONE\ntwo", base: base), by: owner.id, quota: nil)
        async let fromB = b.store.saveNote(note.id, NoteChanges(body: "one\nTWO", base: base), by: participant.id, quota: nil)
        let kinds = Set([try await fromA.kind, try await fromB.kind])
        #expect(kinds == [.saved, .merged])
        #expect(try await b.store.openNote(note.id).body == "ONE\nTWO")

        try await b.store.unshare(note: note.id, participant: "ned", by: owner.id)
        // Instance A reads the database: its very next answer knows.
        await #expect(throws: NotesError.notFound("note \(note.id)")) {
            try await a.store.access(toNote: note.id, for: participant.id, includingDeleted: false)
        }
        #expect(try await a.store.notesShared(with: participant.id).isEmpty)
        // And A's pages hear of it, the removed participant among them.
        try await waitUntil("the unsharing to be heard") {
            heard.withLock { $0 }.contains { $0.kind == .unshared && $0.noteID == note.id && $0.accounts.contains(participant.id) }
        }
        let shared = heard.withLock { $0 }.first { $0.kind == .shared }
        #expect(shared?.accounts == [owner.id, participant.id])
        await a.close()
        await b.close()
    }

    /// Ann's note is shared with Ben and Ben's with Ann: a save of either counts on both
    /// accounts' rows (a participant's notes counter moves too). Saved at once, over and over,
    /// through two instances, neither ever waits on the other in a cycle — every write takes the
    /// accounts' locks in one order (`noteForWrite`) — and each account's counter moved once per
    /// save of either note.
    @Test func twoNotesSharedEachWaySavedAtOnceNeverDeadlock() async throws {
        let url = try await TestPostgres.freshDatabase()
        let a = try await ServerStorageFixture.open(url: url), b = try await ServerStorageFixture.open(url: url)
        let ann = try await a.store.registerAccount(name: "ann", password: WebStoreCheck.password("ann-password-1"))
        let ben = try await a.store.registerAccount(name: "ben", password: WebStoreCheck.password("ben-password-1"))
        let annsNote = try await a.store.createNote(NoteDraft(title: "Ann's", body: "Ann's"), account: ann.id, quota: nil)
        let bensNote = try await a.store.createNote(NoteDraft(title: "Ben's", body: "Ben's"), account: ben.id, quota: nil)
        _ = try await a.store.share(note: annsNote.id, with: "ben", by: ann.id)
        _ = try await a.store.share(note: bensNote.id, with: "ann", by: ben.id)
        let counted = [try await notesCounter(ann.id.rawValue, url), try await notesCounter(ben.id.rawValue, url)]
        let rounds = 40
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<rounds {
                group.addTask { _ = try await a.store.saveNote(annsNote.id, NoteChanges(body: "Ann's\n\(round)"), by: ann.id, quota: nil) }
                group.addTask { _ = try await b.store.saveNote(bensNote.id, NoteChanges(body: "Ben's\n\(round)"), by: ben.id, quota: nil) }
            }
            try await group.waitForAll()
        }
        let after = [try await notesCounter(ann.id.rawValue, url), try await notesCounter(ben.id.rawValue, url)]
        #expect(after == counted.map { $0 + 2 * rounds })
        await a.close()
        await b.close()
    }

    @Test func aStepIsAnnouncedWithItsCommitAndAFailedStepNotAtAll() async throws {
        let url = try await TestPostgres.freshDatabase()
        let listening = Locked(0)
        let storage = try await ServerStorageFixture.open(url: url) { listening.withLock { $0 += 1 } }
        try await waitUntil("the store to listen for changes") { listening.withLock { $0 } >= 1 }
        let heard = Locked<[NoteChange]>([])
        storage.events.listen { event in
            if case .note(let change) = event { heard.withLock { $0.append(change) } }
        }
        let store = storage.store
        let owner = try await store.registerAccount(name: "quin", password: WebStoreCheck.password("quin-password-1"))
        let reader = try await store.registerAccount(name: "ray", password: WebStoreCheck.password("ray-password-1"))
        let note = try await store.createNote(NoteDraft(title: "Told", body: "a"), account: owner.id, quota: nil)
        _ = try await store.share(note: note.id, with: "ray", by: owner.id)
        await #expect(throws: NotesError.self) {
            try await store.saveNote(
                note.id, NoteChanges(body: String(repeating: "b", count: 2_000)), by: owner.id,
                quota: StorageQuota(limitBytes: 10, addingBytes: 2_000))
        }
        let saved = try await store.saveNote(note.id, NoteChanges(body: "c"), by: reader.id, quota: nil)
        try await store.moveToRecentlyDeleted(note.id)
        try await store.deleteForGood(note.id)
        try await waitUntil("the deletion for good to be heard") { heard.withLock { $0 }.contains { $0.kind == .deletedForGood } }
        let changes = heard.withLock { $0 }.filter { $0.noteID == note.id }
        #expect(changes.map(\.kind) == [.created, .shared, .changed, .deleted, .deletedForGood])
        #expect(changes.first { $0.kind == .changed }?.revision == saved.note.revision)
        // Those who could see the note are told it went, the participant among them.
        #expect(changes.last?.accounts == [owner.id, reader.id])
        #expect(changes.last?.revision == nil)
        await storage.close()
    }

    @Test func anAbandonedUploadAndADeletedNoteLeaveNoChunk() async throws {
        let url = try await TestPostgres.freshDatabase()
        let storage = try await ServerStorageFixture.open(url: url)
        let store = storage.store
        let owner = try await store.registerAccount(name: "otto", password: WebStoreCheck.password("otto-password-1"))
        let note = try await store.createNote(NoteDraft(title: "Uploads", body: ""), account: owner.id, quota: nil)
        let abandoned = try await store.beginAttachment(to: note.id, kind: .file, name: "gone.bin")
        try await abandoned.append(WebStoreCheck.pattern(2 * (1 << 20) + 10))
        #expect(try await rowCount("attachment_chunks", url) == 2)
        await abandoned.abandon()
        #expect(try await rowCount("attachment_chunks", url) == 0)
        #expect(try await rowCount("attachment_uploads", url) == 0)
        let kept = try await store.beginAttachment(to: note.id, kind: .file, name: "kept.bin")
        try await kept.append(WebStoreCheck.pattern((1 << 20) + 1))
        let info = try await kept.finish(quota: nil)
        #expect(try await rowCount("attachment_chunks", url) == 2)
        // A reader holds one chunk at a time.
        let reader = try await store.readAttachment(info.id, of: note.id)
        var pieces: [Int] = []
        while let piece = try await reader.next() { pieces.append(piece.count) }
        #expect(pieces == [1 << 20, 1])
        try await store.moveToRecentlyDeleted(note.id)
        try await store.deleteForGood(note.id)
        for table in ["attachment_chunks", "attachment_uploads", "attachments", "notes", "participants"] {
            #expect(try await rowCount(table, url) == 0, "\(table)")
        }
        await storage.close()
    }

    @Test func anUploadLeftUnfinishedForADayIsSweptWithItsChunks() async throws {
        let url = try await TestPostgres.freshDatabase()
        let clock = TestClock.running()
        let storage = try await ServerStorageFixture.open(url: url, clock: { clock.now })
        let owner = try await storage.store.registerAccount(name: "ula", password: WebStoreCheck.password("ula-password-1"))
        let note = try await storage.store.createNote(NoteDraft(title: "Stalled", body: ""), account: owner.id, quota: nil)
        // An instance stopped in the middle of an upload: neither finished nor abandoned.
        let stalled = try await storage.store.beginAttachment(to: note.id, kind: .file, name: "stalled.bin")
        try await stalled.append(WebStoreCheck.pattern((1 << 20) + 1))
        clock.advance(by: 3_600)
        #expect(try await storage.store.deleteExpiredNotes() == 0)
        #expect(try await rowCount("attachment_chunks", url) == 1)
        clock.advance(by: 86_400)
        #expect(try await storage.store.deleteExpiredNotes() == 0)
        #expect(try await rowCount("attachment_chunks", url) == 0)
        #expect(try await rowCount("attachment_uploads", url) == 0)
        guard case .conflict = await WebStoreCheck.failure({ _ = try await stalled.finish(quota: nil) }) else {
            Issue.record("a swept upload was finished")
            return
        }
        #expect(try await storage.store.listedAttachments(ofNote: note.id).isEmpty)
        await storage.close()
    }

    @Test func aRowMovedToAnotherNoteDoesNotOpen() async throws {
        let url = try await TestPostgres.freshDatabase()
        let storage = try await ServerStorageFixture.open(url: url)
        let owner = try await storage.store.registerAccount(name: "pam", password: WebStoreCheck.password("pam-password-1"))
        let one = try await storage.store.createNote(NoteDraft(title: "One", body: "first"), account: owner.id, quota: nil)
        let two = try await storage.store.createNote(NoteDraft(title: "Two", body: "second"), account: owner.id, quota: nil)
        // Whoever can write the database copies one note's sealed body onto the other.
        _ = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await connection.query(
                "UPDATE notes SET sealed_body = (SELECT sealed_body FROM notes WHERE id = \(one.id)) WHERE id = \(two.id)", logger: logger)
        }
        await #expect(throws: NotesError.damaged("the body of note \(two.id)")) { try await storage.store.openNote(two.id) }
        #expect(try await storage.store.openNote(one.id).body == "first")
        await storage.close()
    }

    /// PostgreSQL's text holds no NUL byte: such input is the request's fault, said as such (a 400
    /// on the web), not a failure of the server.
    @Test func aNulByteInAFolderIdIsBadInput() async throws {
        let url = try await TestPostgres.freshDatabase()
        let storage = try await ServerStorageFixture.open(url: url)
        let owner = try await storage.store.registerAccount(name: "nul", password: WebStoreCheck.password("nul-password-1"))
        let refused = NotesError.invalid("text may not contain a NUL byte or bytes that are not UTF-8")
        await #expect(throws: refused) { try await storage.store.notes(account: owner.id, folderID: "a\u{0}b") }
        _ = try await storage.store.createNote(NoteDraft(title: "kept", body: "x"), account: owner.id, quota: nil)
        #expect(try await storage.store.notes(account: owner.id, folderID: nil).map(\.title) == ["kept"], "the store serves on")
        await storage.close()
    }

    @Test func aVersion1DatabaseIsBroughtToVersion2WithItsSessionsKept() async throws {
        let url = try await TestPostgres.freshDatabase()
        // A database an earlier Tresor made: version 1 only, with a session in it.
        let old = try await ServerStorageFixture.open(url: url)
        let account = WebAccount(id: AccountID(rawValue: "acct-old"), name: "old", isLocal: false)
        let started = try await old.sessions.start(for: account, now: Date())
        await old.close()
        _ = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            // The sync relay's tables (versions 3 to 5) first: they refer to the accounts.
            let syncTables = [
                "sync_shared_note_changes", "sync_notes_gone", "sync_note_origins", "sync_recovery_envelopes", "sync_key_envelopes", "sync_sessions",
                "sync_join_requests",
                "sync_records", "sync_challenges",
                "sync_devices", "sync_circles",
            ]
            let attachmentTables = [
                "attachment_unlocked_chunks", "attachment_unlocked_copies", "attachment_chunks", "attachment_uploads", "attachments",
            ]
            for table in syncTables + attachmentTables + ["participants", "notes", "folders"] {
                try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)"), logger: logger)
            }
            try await connection.query("ALTER TABLE accounts DROP CONSTRAINT accounts_current_passphrase", logger: logger)
            try await connection.query("DROP TABLE passphrases", logger: logger)
            try await connection.query("DROP TABLE accounts", logger: logger)
            try await connection.query("DROP FUNCTION tresor_notes_revision", logger: logger)
            try await connection.query("DROP FUNCTION tresor_notes_sync_counter", logger: logger)
            try await connection.query("DROP FUNCTION tresor_notes_sync_gone", logger: logger)
            try await connection.query("DROP FUNCTION tresor_notes_settings_changed", logger: logger)
            try await connection.query("DROP FUNCTION tresor_current_passphrase_changed", logger: logger)
            for function in ["tresor_shared_note_sync_counter", "tresor_participants_sync_counter", "tresor_shared_note_changed"] {
                try await connection.query(PostgresQuery(unsafeSQL: "DROP FUNCTION \(function)"), logger: logger)
            }
            try await Self.dropPasswordResets(connection, logger)
            try await Self.dropSessionClients(connection, logger)
            try await connection.query("DELETE FROM tresor_schema WHERE version > 1", logger: logger)
        }
        let upgraded = try await ServerStorageFixture.open(url: url)
        #expect(upgraded.appliedMigrations == Array(ServerSchema.versions.map(\.version).dropFirst()))
        #expect(try await upgraded.sessions.session(forToken: started.token, originToken: started.originToken, now: Date())?.account == account)
        let owner = try await upgraded.store.registerAccount(name: "new", password: WebStoreCheck.password("new-password-1"))
        #expect(try await upgraded.store.createNote(NoteDraft(title: "First", body: ""), account: owner.id, quota: nil).revision == 1)
        await upgraded.close()
    }

    /// Version 7 keeps an attachment's excluded-from-backup flag: a version 6 database's
    /// attachments keep their bytes and are in backups until a device says otherwise.
    @Test func aVersion6DatabaseIsBroughtToVersion7WithItsAttachmentsKept() async throws {
        let url = try await TestPostgres.freshDatabase()
        let old = try await ServerStorageFixture.open(url: url)
        let owner = try await old.store.registerAccount(name: "old", password: WebStoreCheck.password("old-password-1"))
        let note = try await old.store.createNote(NoteDraft(title: "Scans", body: "Scans"), account: owner.id, quota: nil)
        let writer = try await old.store.beginAttachment(to: note.id, kind: .file, name: "scan.bin")
        try await writer.append(Data("the scan".utf8))
        let attachment = try await writer.finish(quota: nil)
        await old.close()
        _ = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            // What a version 6 server made: no flag, no Apple passphrase, no participant counted.
            try await Self.undoApplePassphrases(connection, logger)
            try await Self.dropPasswordResets(connection, logger)
            try await Self.dropSessionClients(connection, logger)
            try await Self.dropSharedNoteChanges(connection, logger)
            try await connection.query("ALTER TABLE attachments DROP COLUMN excluded_from_backup", logger: logger)
            try await connection.query("DELETE FROM tresor_schema WHERE version > 6", logger: logger)
        }
        let upgraded = try await ServerStorageFixture.open(url: url)
        #expect(upgraded.appliedMigrations == Array(ServerSchema.versions.map(\.version).drop { $0 <= 6 }))
        let listed = try await upgraded.store.listedAttachments(ofNote: note.id)
        #expect(listed.map(\.id) == [attachment.id] && listed.first?.excludedFromBackup == nil, "kept, and in backups")
        let reader = try await upgraded.store.readAttachment(attachment.id, of: note.id)
        #expect(try await reader.next() == Data("the scan".utf8))
        #expect(try await upgraded.store.setExcludedFromBackup(attachment.id, of: note.id, excluded: true).excludedFromBackup == true)
        #expect(try await upgraded.store.listedAttachments(ofNote: note.id).first?.excludedFromBackup == true)
        await upgraded.close()
    }

    /// The version that keeps Apple Notes passphrases (``ServerSchema/version8``).
    static let applePassphrasesVersion = ServerSchema.versions.first { $0.statements == ServerSchema.version8 }!.version

    /// Takes a database back to before ``applePassphrasesVersion``: the passphrases as an
    /// earlier server made them (its rows must all be Tresor's).
    static func undoApplePassphrases(_ connection: PostgresConnection, _ logger: Logger) async throws {
        for statement in [
            "DROP INDEX passphrases_account_salt", "ALTER TABLE passphrases DROP CONSTRAINT passphrases_tresor_complete",
            "ALTER TABLE passphrases DROP COLUMN source", "ALTER TABLE passphrases ALTER COLUMN verifier SET NOT NULL",
            "ALTER TABLE passphrases ALTER COLUMN generation SET NOT NULL",
            "DELETE FROM tresor_schema WHERE version = \(applePassphrasesVersion)",
        ] {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }

    /// A database from before Apple Notes passphrases keeps its passphrase generations as they
    /// were — Tresor's, current as before, each with its verifier — and takes Apple ones after.
    @Test func anEarlierDatabaseKeepsItsPassphrasesAsTresorGenerations() async throws {
        let url = try await TestPostgres.freshDatabase()
        let old = try await ServerStorageFixture.open(url: url)
        let owner = try await old.store.registerAccount(name: "gen", password: WebStoreCheck.password("gen-password-1"))
        let proof = Data(repeating: 0x31, count: 32)
        let material = try WebStoreCheck.material(old.store, proof: proof, seed: 7)
        try await old.store.setPassphrase(material, hint: "first hint", account: owner.id)
        await old.close()
        _ = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            // A database is at one version: those after it go too.
            try await Self.dropPasswordResets(connection, logger)
            try await Self.dropSessionClients(connection, logger)
            try await Self.dropSharedNoteChanges(connection, logger)
            try await Self.undoApplePassphrases(connection, logger)
        }
        let upgraded = try await ServerStorageFixture.open(url: url)
        #expect(
            upgraded.appliedMigrations
                == [Self.applePassphrasesVersion, Self.sharedNoteChangesVersion, Self.sessionClientsVersion, Self.passwordResetsVersion])
        let rows = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await connection.rows(
                "SELECT source, generation, salt, verifier, proof_hash FROM passphrases", logger, as: (String, Int?, Data, Data?, Data?).self)
        }
        #expect(rows.count == 1)
        let (source, generation, salt, verifier, proofHash) = try #require(rows.first)
        #expect(source == "tresor" && generation == 1 && salt == material.salt)
        #expect(verifier == material.verifier && proofHash == material.proofHash)
        let record = try #require(try await upgraded.store.passphraseRecord(account: owner.id))
        #expect(record.generation == 1 && record.salt == material.salt)
        #expect(try await upgraded.store.passphraseHint(account: owner.id) == "first hint")
        // A Tresor row without a verifier is refused by the database itself.
        await #expect(throws: (any Error).self) {
            try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
                try await connection.run(
                    "INSERT INTO passphrases (account_id, generation, salt, iterations, created) VALUES (\(owner.id.rawValue), 2, '\\x00', 1, 0)",
                    logger)
            }
        }
        await upgraded.close()
    }

    /// A device's note locked with a passphrase imported from Apple Notes: kept under an Apple
    /// passphrase of the account, found again by its salt, never the current one — not even in an
    /// account with none — and read back as it came, its source with it.
    @Test func anApplePassphraseFromADeviceIsFoundBySaltAndNeverMadeCurrent() async throws {
        let storage = try await ServerStorageFixture.open(url: try await TestPostgres.freshDatabase())
        let store = try #require(storage.store as? PostgresWebStore)
        let owner = try await store.registerAccount(name: "apl", password: WebStoreCheck.password("apl-password-1"))
        let record = try SyncedLockedRecord(
            passphraseSource: .appleNotes, passphraseSalt: Data(repeating: 0x41, count: 16), passphraseIterations: 20_000,
            passphraseVerifier: nil, passphraseProofHash: nil, wrappedKey: Data(repeating: 0x42, count: 24), iv: Data(repeating: 0x43, count: 16),
            tag: Data(repeating: 0x44, count: 16), ciphertext: Data("sealed by Apple".utf8), bodyFormat: .appleNotes, noteProofHash: nil,
            passphraseHint: "the usual word")
        let (first, _) = try await store.storeSyncedLockedNote(
            nil, title: "Vault", folder: nil, isPinned: false, record: record, base: nil, restoring: false, account: owner.id,
            edit: SyncedEdit(device: "Laptop"), quota: nil)
        #expect(try await store.passphraseStatus(account: owner.id).isSet == false)
        #expect(try await store.syncedCurrentPassphrase(account: owner.id) == nil)
        #expect(try await store.syncedLockedRecord(ofNote: first) == record)
        let lock = try #require(try await store.summary(ofNote: first).lock)
        #expect(lock.source == .appleNotes && lock.isCurrent == false && lock.generation == nil && lock.hint == "the usual word")
        // Opened in the browser by its own wrapped key, while no proof is recorded.
        let opened = try await store.lockedRecord(ofNote: first)
        #expect(opened.wrappedKey == record.wrappedKey && opened.hasProof == false && opened.bodyFormat == .appleNotes)

        // Another note of the same Apple passphrase shares its row.
        var second = record
        second.wrappedKey = Data(repeating: 0x45, count: 24)
        let (other, _) = try await store.storeSyncedLockedNote(
            nil, title: "Vault 2", folder: nil, isPinned: false, record: second, base: nil, restoring: false, account: owner.id,
            edit: SyncedEdit(device: "Laptop"), quota: nil)
        #expect(try await store.lockedRecord(ofNote: other).passphraseID == opened.passphraseID)

        // The account's first Tresor passphrase becomes current; the Apple one stays what it was.
        let tresor = try SyncedPassphrase(
            salt: Data(repeating: 0x51, count: 16), iterations: 1_000, verifier: Data(repeating: 0x52, count: 24), proofHash: nil, hint: nil)
        #expect(try await store.storeSyncedPassphrase(tresor, base: nil, account: owner.id)?.salt == tresor.salt)
        #expect(try await store.passphraseRecord(account: owner.id)?.id != opened.passphraseID)
        #expect(try await store.summary(ofNote: first).lock?.isCurrent == false)
        // A Tresor generation of the Apple salt is another row: a source is part of what is found.
        var sameSalt = record
        sameSalt.passphraseSource = .tresor
        sameSalt.passphraseVerifier = Data(repeating: 0x53, count: 24)
        let (third, _) = try await store.storeSyncedLockedNote(
            nil, title: "Vault 3", folder: nil, isPinned: false, record: sameSalt, base: nil, restoring: false, account: owner.id,
            edit: SyncedEdit(device: "Laptop"),
            quota: nil)
        #expect(try await store.lockedRecord(ofNote: third).passphraseID != opened.passphraseID)
        #expect(try await store.summary(ofNote: third).lock?.source == .tresor)
        await storage.close()
    }

    /// The version that counts shared notes' changes tells a participant's devices of the notes
    /// shared with it: a database's shares from before are kept and each counts once on its
    /// participant's notes counter, after the numbers it had; the next write of the note counts again.
    @Test func aDatabaseFromBeforeSharedNotesSyncKeepsItsShares() async throws {
        let url = try await TestPostgres.freshDatabase()
        let old = try await ServerStorageFixture.open(url: url)
        let bob = try await old.store.registerAccount(name: "bob", password: WebStoreCheck.password("bob-password-1"))
        let alice = try await old.store.registerAccount(name: "alice", password: WebStoreCheck.password("alice-password-1"))
        let own = try await old.store.createNote(NoteDraft(title: "Mine", body: "Mine"), account: alice.id, quota: nil)
        let trip = try await old.store.createNote(NoteDraft(title: "Trip", body: "Trip"), account: bob.id, quota: nil)
        _ = try await old.store.share(note: trip.id, with: "alice", by: bob.id)
        await old.close()
        _ = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            // What a server before it made: no participant counted.
            try await Self.dropPasswordResets(connection, logger)
            try await Self.dropSessionClients(connection, logger)
            try await Self.dropSharedNoteChanges(connection, logger)
            try await connection.query("UPDATE accounts SET notes_counter = 1 WHERE login_name = 'alice'", logger: logger)
        }
        let upgraded = try await ServerStorageFixture.open(url: url)
        #expect(upgraded.appliedMigrations == [Self.sharedNoteChangesVersion, Self.sessionClientsVersion, Self.passwordResetsVersion])
        #expect(try await counters(of: alice.id.rawValue, url) == [own.id: 1, trip.id: 2])
        #expect(try await notesCounter(alice.id.rawValue, url) == 2)
        #expect(try await upgraded.store.summary(ofNote: trip.id).sharing?.participants == ["alice"])
        _ = try await upgraded.store.saveNote(trip.id, NoteChanges(body: "Trip\ntent"), by: bob.id, quota: nil)
        #expect(try await counters(of: alice.id.rawValue, url)[trip.id] == 3)
        #expect(try await notesCounter(alice.id.rawValue, url) == 3)
        await upgraded.close()
    }

    /// The version that counts shared notes' changes for their participants.
    static let sharedNoteChangesVersion = ServerSchema.versions.first { $0.statements == ServerSchema.version9 }!.version

    /// Takes a database back to before ``sharedNoteChangesVersion``, as a database from before lacks it.
    private static func dropSharedNoteChanges(_ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("DROP TABLE sync_shared_note_changes", logger: logger)
        try await connection.query("DROP TRIGGER notes_shared_sync_counter ON notes", logger: logger)
        try await connection.query("DROP TRIGGER participants_sync_counter ON participants", logger: logger)
        for function in ["tresor_shared_note_sync_counter", "tresor_participants_sync_counter", "tresor_shared_note_changed"] {
            try await connection.query(PostgresQuery(unsafeSQL: "DROP FUNCTION \(function)"), logger: logger)
        }
        try await connection.query("DELETE FROM tresor_schema WHERE version = \(sharedNoteChangesVersion)", logger: logger)
    }

    /// The version that keeps where each session was signed in from.
    static let sessionClientsVersion = ServerSchema.versions.first { $0.statements == ServerSchema.version10 }!.version

    /// The version that keeps the owner's password-reset codes.
    static let passwordResetsVersion = ServerSchema.versions.first { $0.statements == ServerSchema.version11 }!.version

    /// Takes a database back to before ``passwordResetsVersion``.
    private static func dropPasswordResets(_ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("DROP TABLE web_password_resets", logger: logger)
        try await connection.query("DELETE FROM tresor_schema WHERE version = \(passwordResetsVersion)", logger: logger)
    }

    /// Takes a database back to before ``sessionClientsVersion``.
    private static func dropSessionClients(_ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("ALTER TABLE web_sessions DROP COLUMN client_address, DROP COLUMN client_browser", logger: logger)
        try await connection.query("DELETE FROM tresor_schema WHERE version = \(sessionClientsVersion)", logger: logger)
    }

    /// A database from before sessions kept their client keeps its sessions, signed in as they
    /// were, with no client; sessions started after it keep theirs.
    @Test func aDatabaseFromBeforeSessionClientsKeepsItsSessions() async throws {
        let url = try await TestPostgres.freshDatabase()
        let old = try await ServerStorageFixture.open(url: url)
        let account = WebAccount(id: AccountID(rawValue: "acct-old"), name: "old", isLocal: false)
        let started = try await old.sessions.start(for: account, now: Date())
        await old.close()
        _ = try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await Self.dropPasswordResets(connection, logger)
            try await Self.dropSessionClients(connection, logger)
        }
        let upgraded = try await ServerStorageFixture.open(url: url)
        #expect(upgraded.appliedMigrations == [Self.sessionClientsVersion, Self.passwordResetsVersion])
        let kept = try await upgraded.sessions.session(forToken: started.token, originToken: started.originToken, now: Date())
        #expect(kept?.account == account && kept?.client == nil)
        let client = WebSessionClient(address: "198.51.100.4", browser: "Safari on iPhone")
        let new = try await upgraded.sessions.start(for: account, client: client, now: Date())
        #expect(try await upgraded.sessions.list(now: Date()).first { $0.id == new.session.id }?.client == client)
        await upgraded.close()
    }

    /// Account `account`'s notes' numbers on its counter: its own notes' and those shared with it.
    private func counters(of account: String, _ url: String) async throws -> [String: Int] {
        try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            var counters: [String: Int] = [:]
            for (id, counter) in try await connection.rows(
                """
                SELECT id, sync_counter FROM notes WHERE account_id = \(account)
                UNION ALL SELECT note_id, sync_counter FROM sync_shared_note_changes WHERE account_id = \(account)
                """, logger, as: (String, Int).self)
            {
                counters[id] = counter
            }
            return counters
        }
    }

    private func notesCounter(_ account: String, _ url: String) async throws -> Int {
        try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await connection.value("SELECT notes_counter FROM accounts WHERE id = \(account)", logger, as: Int.self) ?? -1
        }
    }

    private func rowCount(_ table: String, _ url: String) async throws -> Int {
        try await TestPostgres.withAdminConnection(database: TestPostgres.databaseName(of: url)) { connection, logger in
            try await connection.value(PostgresQuery(unsafeSQL: "SELECT COUNT(*) FROM \(table)"), logger, as: Int.self) ?? -1
        }
    }
}
