import Foundation
import TresorNotes
import TresorNotesDomain

extension SQLiteWebStore: FoldersAndNotesStore {
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

    public func previews(ofNotes ids: [String], matching query: [String]) async throws -> [String: String] {
        try await run { try $0.previews(ofNotes: ids, matching: query) }
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
}
