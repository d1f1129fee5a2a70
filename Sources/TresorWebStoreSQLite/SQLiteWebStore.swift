import Foundation
import Synchronization
import TresorNotes
import TresorNotesDomain
import TresorSystem
import TresorWebStore

/// The embedded web store: a home's notes database (``NotesStore``, SQLite), sealed under the
/// home's keybag — the same notes the CLI sees, the local account's among them. Each call runs
/// the store's blocking work off Swift concurrency's threads. One daemon serves a home, so a
/// quota check and its write are made one step by a lock per account in this process.
public final class SQLiteWebStore: WebStore {
    private let opened: @Sendable () throws -> NotesStore
    private let quotaLocks = AccountLocks()

    /// - Parameter store: opens the home's notes store (it throws `notInitialized` before
    ///   `tresor init`, as every notes request does).
    public init(store: @escaping @Sendable () throws -> NotesStore) {
        self.opened = store
    }

    public var minimumIterations: Int { (try? opened().minimumIterations) ?? 1 }

    /// Runs `body` with the store on a Dispatch thread.
    private func run<T: Sendable>(_ body: @escaping @Sendable (NotesStore) throws -> T) async throws -> T {
        let opened = self.opened
        return try await offloaded { try body(opened()) }
    }

    /// Runs `write` unless it would take `account` past `quota`, the check and the write under
    /// the account's lock.
    private func within<T>(_ quota: StorageQuota?, account: AccountID, _ store: NotesStore, adding: Int? = nil, _ write: () throws -> T) throws -> T {
        guard let quota else { return try write() }
        return try quotaLocks.withLock(account) {
            var check = quota
            if let adding { check.addingBytes = adding }
            try check.check(used: try store.storedBytes(account: account))
            return try write()
        }
    }

    public func checkHealth() async throws {
        // The home's database is a file beside the daemon: it answers while the daemon does.
    }

    // MARK: Accounts

    public func registerAccount(name: String, password: AccountPassword) async throws -> WebAccount {
        try await run { try $0.registerAccount(name: name, password: password) }
    }

    public func authenticate(name: String, password: AccountPassword) async throws -> WebAccount? {
        try await run { try $0.authenticate(name: name, password: password) }
    }

    public func checkPassword(_ password: AccountPassword, account: AccountID) async throws -> Bool {
        try await run { try $0.checkPassword(password, account: account) }
    }

    public func changePassword(account: AccountID, current: AccountPassword, to new: AccountPassword) async throws -> Bool {
        try await run { try $0.changePassword(account: account, current: current, to: new) }
    }

    public func account(named name: String) async throws -> WebAccount? {
        try await run { try $0.webAccount(named: name) }
    }

    // MARK: Folders

    public func folders(account: AccountID) async throws -> [Folder] {
        try await run { try $0.folders(account: account) }
    }

    public func createFolder(named name: String, account: AccountID) async throws -> Folder {
        try await run { try $0.createFolder(named: name, account: account) }
    }

    public func deleteFolder(id: String, account: AccountID) async throws {
        try await run { try $0.deleteFolder(id: id, account: account) }
    }

    // MARK: Notes

    public func access(toNote id: String, for account: AccountID, includingDeleted: Bool) async throws -> NoteAccess {
        try await run { try $0.access(toNote: id, for: account, includingDeleted: includingDeleted) }
    }

    public func notes(account: AccountID, folderID: String?) async throws -> [NoteSummary] {
        try await run { store in
            guard let folderID else { return try store.notes(account: account) }
            guard let folder = try store.folders(account: account).first(where: { $0.id == folderID }) else {
                throw NotesError.notFound("folder \(folderID.prefix(64))")
            }
            return try store.notes(account: account, folder: folder.name)
        }
    }

    public func notesShared(with account: AccountID) async throws -> [NoteSummary] {
        try await run { try $0.notesShared(with: account) }
    }

    public func search(_ text: String, account: AccountID) async throws -> [NoteSummary] {
        try await run { try $0.search(text, account: account) }
    }

    public func previews(ofNotes ids: [String]) async throws -> [String: String] {
        try await run { try $0.previews(ofNotes: ids) }
    }

    public func summary(ofNote id: String) async throws -> NoteSummary {
        try await run { try $0.summary(ofNote: id) }
    }

    public func openNote(_ id: String) async throws -> OpenedNote {
        try await run { store in
            guard try !store.summary(ofNote: id).isLocked else { throw NotesError.wrongLockState("note \(id) is locked") }
            return try store.openNote(id)
        }
    }

    public func createNote(_ draft: NoteDraft, account: AccountID, quota: StorageQuota?) async throws -> NoteSummary {
        try await run { store in try self.within(quota, account: account, store) { try store.createNote(draft, account: account) } }
    }

    public func saveNote(_ id: String, _ changes: NoteChanges, by editor: AccountID, quota: StorageQuota?) async throws -> NoteSaveOutcome {
        try await run { store in
            let owner = try self.owner(of: id, store)
            return try self.within(quota, account: owner, store) { try store.saveNote(id, changes, by: editor) }
        }
    }

    /// The owner of note `id` (a quota is its owner's).
    private func owner(of id: String, _ store: NotesStore) throws -> AccountID {
        try store.noteOwner(id)
    }

    // MARK: Sharing

    public func share(note id: String, with name: String, by owner: AccountID) async throws -> ShareInfo {
        try await run { store in
            try store.share(note: id, with: name, by: owner)
            guard let sharing = try store.summary(ofNote: id).sharing else { throw NotesError.conflict("note \(id) was unshared meanwhile") }
            return sharing
        }
    }

    public func unshare(note id: String, participant name: String, by account: AccountID) async throws {
        try await run { try $0.unshare(note: id, participant: name, by: account) }
    }

    // MARK: Recently Deleted

    public func moveToRecentlyDeleted(_ id: String) async throws {
        try await run { _ = try $0.moveToRecentlyDeleted(id) }
    }

    public func restoreNote(_ id: String) async throws -> NoteSummary {
        try await run { try $0.restoreNote(id) }
    }

    public func recentlyDeleted(account: AccountID) async throws -> [NoteSummary] {
        try await run { try $0.recentlyDeleted(account: account) }
    }

    public func deleteForGood(_ id: String) async throws {
        try await run { store in
            guard try store.summary(ofNote: id).deleted != nil else {
                throw NotesError.invalid("only a note in Recently Deleted is deleted for good: delete it first")
            }
            try store.deleteNote(id)
        }
    }

    public func emptyRecentlyDeleted(account: AccountID) async throws -> Int {
        try await run { try $0.emptyRecentlyDeleted(account: account) }
    }

    public func deleteExpiredNotes() async throws -> Int {
        try await run { try $0.deleteExpiredNotes() }
    }

    // MARK: Attachments

    public func listedAttachments(ofNote id: String) async throws -> [AttachmentInfo] {
        try await run { try $0.listedAttachments(ofNote: id) }
    }

    public func beginAttachment(to noteID: String, kind: AttachmentKind, name: String) async throws -> any AttachmentWriter {
        try await run { store in
            guard try !store.summary(ofNote: noteID).isLocked else {
                throw NotesError.wrongLockState("attachments are added to unlocked notes in the web client")
            }
            return SQLiteAttachmentWriter(
                upload: try store.beginAttachment(to: noteID, kind: kind, name: name), owner: try self.owner(of: noteID, store),
                store: store, within: { quota, account, adding, write in try self.within(quota, account: account, store, adding: adding, write) })
        }
    }

    public func readAttachment(_ id: String, of noteID: String) async throws -> any AttachmentReader {
        let data = try await run { store -> Data in
            if try store.summary(ofNote: noteID).isLocked {
                return try store.sealedChunks(ofAttachment: id, note: noteID).reduce(into: Data()) { $0.append($1) }
            }
            return try store.attachment(id, of: noteID).1
        }
        return WholeAttachmentReader(data: data)
    }

    public func removeAttachment(_ id: String, of noteID: String) async throws {
        try await run { try $0.removeAttachment(id, of: noteID) }
    }

    // MARK: Passphrases and locked notes

    public func passphraseStatus(account: AccountID) async throws -> PassphraseStatus {
        try await run { try $0.passphraseStatus(account: account) }
    }

    public func passphraseHint(account: AccountID) async throws -> String? {
        try await run { try $0.passphraseHint(account: account) }
    }

    public func passphraseRecord(account: AccountID) async throws -> PassphraseRecord? {
        try await run { try $0.passphraseRecord(account: account) }
    }

    public func setPassphrase(_ material: PassphraseMaterial, hint: String?, account: AccountID) async throws {
        try await run { try $0.setPassphrase(material, hint: hint, account: account) }
    }

    public func resetPassphrase(to material: PassphraseMaterial, hint: String?, account: AccountID) async throws {
        try await run { try $0.resetPassphrase(to: material, hint: hint, account: account) }
    }

    public func changePassphrase(
        proof: PassphraseProof, to material: PassphraseMaterial, hint: String??, rewrappedKeys: [String: Data], account: AccountID
    ) async throws {
        try await run { store in
            // Every note named must be the account's own (locked notes are never shared).
            for id in rewrappedKeys.keys where try store.access(toNote: id, for: account) != .owner {
                throw NotesError.notFound("note \(id.prefix(64))")
            }
            try store.changePassphrase(proof: proof, to: material, hint: hint, rewrappedKeys: rewrappedKeys, account: account)
        }
    }

    public func enterPassphrase(_ proof: PassphraseProof, establish: Bool, account: AccountID) async throws -> PassphraseEntryOutcome {
        try await run { try $0.enterPassphrase(proof, establish: establish, account: account) }
    }

    public func wrappedKey(ofNote id: String, proof: PassphraseProof, account: AccountID) async throws -> Data {
        try await run { try $0.wrappedKey(ofNote: id, proof: proof, account: account) }
    }

    public func lockedRecord(ofNote id: String) async throws -> LockedNoteRecord {
        try await run { try $0.lockedRecord(ofNote: id) }
    }

    public func lockNote(_ id: String, sealedBy client: ClientLockedNote, proof: Data, quota: StorageQuota?) async throws {
        try await run { store in
            try self.within(quota, account: try self.owner(of: id, store), store) { try store.lockNote(id, sealedBy: client, proof: proof) }
        }
    }

    public func replaceLockedBody(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        baseRevision: Int64?, quota: StorageQuota?
    ) async throws -> NoteSummary {
        try await run { store in
            try self.within(quota, account: try self.owner(of: id, store), store) {
                try store.replaceLockedBody(
                    ofNote: id, iv: iv, tag: tag, ciphertext: ciphertext, noteProof: noteProof, passphraseProof: passphraseProof,
                    baseRevision: baseRevision)
            }
        }
    }

    public func saveLockedConflictCopy(
        ofNote id: String, iv: Data, tag: Data, ciphertext: Data, noteProof: Data, passphraseProof: PassphraseProof?,
        by editor: AccountID, quota: StorageQuota?
    ) async throws -> NoteSummary {
        try await run { store in
            try self.within(quota, account: try self.owner(of: id, store), store) {
                try store.saveLockedConflictCopy(
                    ofNote: id, iv: iv, tag: tag, ciphertext: ciphertext, noteProof: noteProof, passphraseProof: passphraseProof, by: editor)
            }
        }
    }

    public func rewrap(
        _ id: String, proof: PassphraseProof, wrappedKey: Data, noteProof: Data, earlierProof: PassphraseProof?, quota: StorageQuota?
    ) async throws {
        try await run { store in
            try self.within(quota, account: try self.owner(of: id, store), store) {
                try store.rewrap(id, proof: proof, wrappedKey: wrappedKey, noteProof: noteProof, earlierProof: earlierProof)
            }
        }
    }

    // MARK: The widget

    public func widget(account: AccountID) async throws -> WidgetSummary {
        try await run { try $0.widget(account: account) }
    }

    public func widgetCounts(account: AccountID) async throws -> (notes: Int, locked: Int) {
        let counts = try await run { store -> [Int] in
            let counts = try store.widgetCounts(account: account)
            return [counts.notes, counts.locked]
        }
        return (counts[0], counts[1])
    }
}

/// An upload into the home's attachments folder (``AttachmentUpload``): each chunk sealed and
/// written as it arrives.
final class SQLiteAttachmentWriter: AttachmentWriter {
    typealias Within = @Sendable (StorageQuota?, AccountID, Int?, () throws -> AttachmentInfo) throws -> AttachmentInfo

    private let upload: AttachmentUpload
    private let owner: AccountID
    private let within: Within

    init(upload: AttachmentUpload, owner: AccountID, store: NotesStore, within: @escaping Within) {
        self.upload = upload
        self.owner = owner
        self.within = within
    }

    func append(_ data: Data) async throws {
        let upload = self.upload
        try await offloaded { try upload.append(data) }
    }

    func finish(quota: StorageQuota?) async throws -> AttachmentInfo {
        let upload = self.upload, owner = self.owner, within = self.within
        do {
            return try await offloaded { try within(quota, owner, upload.byteCount) { try upload.finish() } }
        } catch {
            upload.abandon()
            throw error
        }
    }

    func abandon() async {
        upload.abandon()
    }
}

/// An attachment read whole (the embedded store opens its file in one go), handed over once.
final class WholeAttachmentReader: AttachmentReader {
    private let data: Mutex<Data?>
    let byteCount: Int

    init(data: Data) {
        self.data = Mutex(data)
        byteCount = data.count
    }

    func next() async throws -> Data? {
        data.withLock { data in
            defer { data = nil }
            return data
        }
    }
}
