import Foundation
import TresorNotes
import TresorNotesDomain

extension SQLiteWebStore: RecentlyDeletedStore {
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
}
