import Foundation
import TresorNotes
import TresorNotesDomain

extension SQLiteWebStore: SharingStore {
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
}
