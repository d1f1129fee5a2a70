import Foundation
import Logging
import Synchronization
import Testing
import TresorNotesDomain
import TresorTestSupport
import TresorWebStore

@testable import TresorWebStorePostgres

/// What a server leaves in its database and its log (docs/SECURITY.md, 3.15): no session token,
/// origin token or invite code in the clear, and no statement value in the log however verbose
/// the daemon's own logger is.
@Suite("Server database at rest", .enabled(if: TestPostgres.shouldRun))
struct ServerAtRestTests {
    @Test func noTokenOrInviteCodeIsStoredAndNoValueIsLogged() async throws {
        let url = try await TestPostgres.freshDatabase()
        let log = CapturedLog()
        var logger = Logger(label: "tresor.tests.verbose") { _ in log }
        logger.logLevel = .trace
        let storage = try await PostgresWebStorage.open(
            url: try DatabaseURL(parsing: url), key: ServerStorageFixture.key, lifetimes: Backend.lifetimes, timeout: TestPostgres.stepDeadline,
            logger: logger)
        let account = WebAccount(id: AccountID(rawValue: "acct-rest"), name: "quinn-at-rest", isLocal: false)
        let started = try await storage.sessions.start(for: account, now: Date())
        _ = try await storage.sessions.session(forToken: started.token, originToken: started.originToken, now: Date())
        let (code, _) = try await storage.invites.issue(name: "rita-at-rest", now: Date())
        await storage.close()

        // Every value of every row of every table, as text.
        let dump = try await TestPostgres.dump(database: TestPostgres.databaseName(of: url))
        #expect(dump.contains("quinn-at-rest"), "the dump reads the tables")
        for secret in [started.token, started.originToken, code] {
            #expect(!dump.contains(secret))
            #expect(!dump.contains(Data(secret.utf8).map { String(format: "%02x", $0) }.joined()))
        }
        let logged = log.text
        for value in [started.token, started.originToken, code, started.session.csrfToken, "quinn-at-rest", "rita-at-rest"] {
            #expect(!logged.contains(value))
        }
    }
}

extension ServerAtRestTests {
    /// `text` as it would appear were it stored in the clear: itself, or its UTF-8 in hex.
    static func forms(of text: String) -> [String] {
        [text, Data(text.utf8).map { String(format: "%02x", $0) }.joined()]
    }

    /// docs/SECURITY.md, 3.15: a copy of the database alone holds no note title or body, folder
    /// name, attachment name or byte, locked ciphertext or hint.
    @Test func noNoteContentIsStoredInTheClear() async throws {
        let url = try await TestPostgres.freshDatabase()
        let log = CapturedLog()
        var logger = Logger(label: "tresor.tests.verbose") { _ in log }
        logger.logLevel = .trace
        let storage = try await PostgresWebStorage.open(
            url: try DatabaseURL(parsing: url), key: ServerStorageFixture.key, lifetimes: Backend.lifetimes, timeout: TestPostgres.stepDeadline,
            logger: logger, passwordRounds: 1_000)
        let store = storage.store
        let markers = [
            "title-marker-q7", "body-marker-q7", "folder-marker-q7", "attachment-name-marker-q7", "attachment-bytes-marker-q7",
            "hint-marker-q7", "locked-ciphertext-marker-q7", "conflict-marker-q7", "password-marker-q7",
        ]
        let owner = try await store.registerAccount(name: "sam-at-rest", password: try AccountPassword("password-marker-q7"))
        let note = try await store.createNote(
            NoteDraft(title: "title-marker-q7", body: "body-marker-q7\nmore", folder: "folder-marker-q7"), account: owner.id, quota: nil)
        _ = try await store.saveNote(
            note.id, NoteChanges(body: "conflict-marker-q7", base: NoteBase(revision: note.revision - 1, body: "other")), by: owner.id, quota: nil)
        let writer = try await store.beginAttachment(to: note.id, kind: .file, name: "attachment-name-marker-q7")
        try await writer.append(Data(String(repeating: "attachment-bytes-marker-q7 ", count: 50_000).utf8))
        _ = try await writer.finish(quota: nil)
        let proof = Data(repeating: 0x44, count: 32)
        try await store.setPassphrase(
            try PassphraseMaterial(
                salt: Data(repeating: 1, count: 16), iterations: store.minimumIterations, verifier: Data(repeating: 2, count: 24),
                proofHash: LockedNoteShape.proofHash(proof)),
            hint: "hint-marker-q7", account: owner.id)
        let record = try #require(try await store.passphraseRecord(account: owner.id))
        let locked = try await store.createNote(NoteDraft(title: "Locked", body: "x"), account: owner.id, quota: nil)
        try await store.lockNote(
            locked.id,
            sealedBy: ClientLockedNote(
                passphraseID: record.id, wrappedKey: Data(repeating: 3, count: 24), noteProofHash: LockedNoteShape.proofHash(proof),
                iv: Data(repeating: 4, count: 12), tag: Data(repeating: 5, count: 16), ciphertext: Data("locked-ciphertext-marker-q7".utf8),
                attachmentChunks: [:]),
            proof: proof, quota: nil)
        // The markers are all there to be read back.
        #expect(try await store.openNote(note.id).body.contains("body-marker-q7"))
        #expect(try await store.notes(account: owner.id, folderID: nil).count == 3)
        await storage.close()

        let dump = try await TestPostgres.dump(database: TestPostgres.databaseName(of: url))
        #expect(dump.contains("sam-at-rest"), "the dump reads the tables")
        for marker in markers {
            for form in Self.forms(of: marker) { #expect(!dump.contains(form), "\(marker) is in the database") }
            #expect(!log.text.contains(marker), "\(marker) is in the log")
        }
    }
}

/// A log handler keeping what it is given.
final class CapturedLog: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let entry = "\(event.level) \(event.message) \(event.metadata ?? [:]) \(metadata)"
        lines.withLock { $0.append(entry) }
    }

    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}
