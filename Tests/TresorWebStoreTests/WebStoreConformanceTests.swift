import Foundation
import Testing
import TresorKeybag
import TresorNotes
import TresorNotesDomain
import TresorSystem
import TresorTestSupport
import TresorWebStore
import TresorWebStoreSQLite

/// The web storage boundary's `WebStore` checks (docs/ARCHITECTURE.md, "The web storage
/// boundary"): accounts, notes, revisions, sharing, Recently Deleted, folders, passphrases,
/// locked notes, attachments, quotas and search as every backend must answer them — the
/// embedded one here, PostgreSQL in `PostgresWebStoreConformanceTests`.
@Suite("Web storage conformance: embedded notes")
struct EmbeddedWebStoreConformanceTests {
    @Test(arguments: WebStoreCheck.all)
    func conformance(_ check: WebStoreCheck) async throws {
        let clock = TestClock.running()
        let home = try EmbeddedHome(clock: clock)
        let heard = HeardChanges(home.events)
        defer { heard.stop() }
        try await check.body(home.store, clock, heard)
    }
}

/// A temporary home with an unlocked keybag, its notes store behind the boundary and its
/// live updates.
final class EmbeddedHome: Sendable {
    private let folder = TemporaryHome(prefix: "tresor-webstore")
    let store: any WebStore
    let events: any WebEventBus

    init(clock: TestClock = .running()) throws {
        let paths = folder.paths
        let keybag = try Keybag.create(
            paths: paths, passcode: try Passcode("correct horse battery staple"), settings: .insecureForTesting(kdfRounds: 1_000))
        let feed = NoteChangeFeed()
        let notes = try NotesStore(
            paths: paths, keybag: keybag, settings: .insecureForTesting(kdfRounds: 1_000, clock: { clock.now }), changes: feed)
        store = SQLiteWebStore(store: { notes })
        events = LocalEventBus(feed: feed)
    }
}

/// The note changes a store under test announced (live updates), as its listeners hear them.
final class HeardChanges: Sendable {
    private let bus: any WebEventBus
    private let heard = Locked<[NoteChange]>([])
    private let token = Locked<UUID?>(nil)

    init(_ bus: any WebEventBus) {
        self.bus = bus
        let heard = self.heard
        let token = bus.listen { event in
            if case .note(let change) = event { heard.withLock { $0.append(change) } }
        }
        self.token.withLock { $0 = token }
    }

    /// What was heard so far.
    var changes: [NoteChange] { heard.withLock { $0 } }

    /// Waits until a change `matching` is heard (a server delivers at commit, a moment later).
    /// - Parameters:
    ///   - mark: how many changes to pass over (``changes``' count before the step looked for).
    ///   - seconds: how long to wait.
    ///   - matching: the change looked for.
    /// - Returns: whether one was heard in time.
    func hear(after mark: Int = 0, within seconds: Double = 10, _ matching: @Sendable (NoteChange) -> Bool) async throws -> Bool {
        let deadline = Date() + seconds
        while !changes.dropFirst(mark).contains(where: matching) {
            guard Date() < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    func stop() {
        if let token = token.withLock({ $0 }) { bus.stopListening(token) }
    }
}

/// One behaviour of a `WebStore`.
struct WebStoreCheck: Sendable, CustomTestStringConvertible {
    var name: String
    var body: @Sendable (any WebStore, TestClock, HeardChanges) async throws -> Void

    var testDescription: String { name }

    init(name: String, _ body: @escaping @Sendable (any WebStore, TestClock) async throws -> Void) {
        self.name = name
        self.body = { store, clock, _ in try await body(store, clock) }
    }

    /// A check that also reads what the store announced.
    init(name: String, hearing body: @escaping @Sendable (any WebStore, TestClock, HeardChanges) async throws -> Void) {
        self.name = name
        self.body = body
    }

    static func password(_ text: String) -> AccountPassword { try! AccountPassword(text) }

    static let all: [WebStoreCheck] =
        basics + revisions + recentlyDeleted + sharing + folders + passphrases + lockedNotes
        + widget + attachments + quotas + search + alike

    static let basics: [WebStoreCheck] = [
        WebStoreCheck(name: "an account signs in with its password only, its name case-folded and taken once") { store, _ in
            let account = try await store.registerAccount(name: "Ines", password: password("ines-password-1"))
            #expect(account.name == "ines")
            #expect(try await store.authenticate(name: "ines", password: password("ines-password-1")) == account)
            #expect(try await store.authenticate(name: "INES", password: password("ines-password-1")) == account)
            #expect(try await store.authenticate(name: "ines", password: password("ines-password-2")) == nil)
            #expect(try await store.authenticate(name: "nobody", password: password("ines-password-1")) == nil)
            await #expect(throws: NotesError.self) { try await store.registerAccount(name: "INES", password: password("another-password")) }
            #expect(try await store.account(named: "ines") == account)
        },
        WebStoreCheck(name: "of 20 simultaneous registrations of one name, exactly one succeeds and the rest say the name is taken") { store, _ in
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        do {
                            _ = try await store.registerAccount(name: "jo", password: password("jo-password-\(index)"))
                            return true
                        } catch NotesError.nameTaken {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
        },
        WebStoreCheck(name: "a password change needs the current password") { store, _ in
            let account = try await store.registerAccount(name: "kim", password: password("kim-password-1"))
            #expect(try await store.changePassword(account: account.id, current: password("kim-password-x"), to: password("kim-password-2")) == false)
            #expect(try await store.changePassword(account: account.id, current: password("kim-password-1"), to: password("kim-password-2")))
            #expect(try await store.authenticate(name: "kim", password: password("kim-password-1")) == nil)
            #expect(try await store.checkPassword(password("kim-password-2"), account: account.id))
        },
        WebStoreCheck(name: "a forgotten password is set without the current one, for that account only") { store, _ in
            let account = try await store.registerAccount(name: "kai", password: password("kai-password-1"))
            let other = try await store.registerAccount(name: "kira", password: password("kira-password-1"))
            try await store.setPassword(account: account.id, to: password("kai-password-2"))
            #expect(try await store.authenticate(name: "kai", password: password("kai-password-1")) == nil)
            #expect(try await store.authenticate(name: "kai", password: password("kai-password-2"))?.id == account.id)
            #expect(try await store.authenticate(name: "kira", password: password("kira-password-1"))?.id == other.id)
            await #expect(throws: NotesError.self) {
                try await store.setPassword(account: AccountID(rawValue: "nobody"), to: password("x-password-1"))
            }
            await #expect(throws: NotesError.self) { try await store.setPassword(account: .local, to: password("x-password-1")) }
        },
        WebStoreCheck(name: "a note is created, opened and saved from the revision it was read at; others do not see it") { store, _ in
            let owner = try await store.registerAccount(name: "lea", password: password("lea-password-1"))
            let other = try await store.registerAccount(name: "max", password: password("max-password-1"))
            let created = try await store.createNote(NoteDraft(title: "Groceries", body: "milk\n", folder: "Home"), account: owner.id, quota: nil)
            #expect(try await store.access(toNote: created.id, for: owner.id, includingDeleted: false) == .owner)
            await #expect(throws: NotesError.self) { try await store.access(toNote: created.id, for: other.id, includingDeleted: false) }
            let opened = try await store.openNote(created.id)
            #expect(opened.body == "milk\n")
            #expect(opened.summary.folder == "Home")
            let outcome = try await store.saveNote(
                created.id, NoteChanges(body: "milk\neggs\n", base: NoteBase(revision: opened.summary.revision, body: opened.body)), by: owner.id,
                quota: nil)
            #expect(outcome.kind == .saved)
            #expect(outcome.note.revision > opened.summary.revision)
            #expect(try await store.openNote(created.id).body == "milk\neggs\n")
            #expect(try await store.notes(account: owner.id, folderID: nil).map(\.id) == [created.id])
            #expect(try await store.notes(account: other.id, folderID: nil).isEmpty)
        },
        WebStoreCheck(name: "a shared note is the participant's to read until it is unshared") { store, _ in
            let owner = try await store.registerAccount(name: "nina", password: password("nina-password-1"))
            let participant = try await store.registerAccount(name: "omar", password: password("omar-password-1"))
            let note = try await store.createNote(NoteDraft(title: "Plans", body: "trip"), account: owner.id, quota: nil)
            let info = try await store.share(note: note.id, with: "omar", by: owner.id)
            #expect(info.participants == ["omar"])
            #expect(try await store.access(toNote: note.id, for: participant.id, includingDeleted: false) == .participant)
            #expect(try await store.notesShared(with: participant.id).map(\.id) == [note.id])
            try await store.unshare(note: note.id, participant: "omar", by: owner.id)
            await #expect(throws: NotesError.self) { try await store.access(toNote: note.id, for: participant.id, includingDeleted: false) }
            #expect(try await store.notesShared(with: participant.id).isEmpty)
        },
        WebStoreCheck(name: "an attachment written in pieces reads back byte for byte") { store, _ in
            let owner = try await store.registerAccount(name: "pia", password: password("pia-password-1"))
            let note = try await store.createNote(NoteDraft(title: "Scan", body: ""), account: owner.id, quota: nil)
            let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) })
            let writer = try await store.beginAttachment(to: note.id, kind: .file, name: "scan.bin")
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 65_537, bytes.count)
                try await writer.append(bytes[offset..<end])
                offset = end
            }
            let info = try await writer.finish(quota: nil)
            #expect(info.byteCount == bytes.count)
            let reader = try await store.readAttachment(info.id, of: note.id)
            var read = Data()
            while let piece = try await reader.next() { read.append(piece) }
            #expect(read == bytes)
            #expect(try await store.listedAttachments(ofNote: note.id).map(\.id) == [info.id])
        },
    ]
}
