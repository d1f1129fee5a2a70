import Foundation
import TresorSyncProtocol

// Notes sync (docs/SYNC.md, "Notes"): the account's notes changed after a cursor, and this
// device's changes, each applied by the server with the notes' own rules.
extension SyncClient {
    /// The account's notes changed after `cursor` (`GET /v1/sync/notes`).
    /// - Parameters:
    ///   - cursor: the last counter applied.
    ///   - limit: the most changes wanted.
    /// - Returns: the page.
    /// - Throws: ``SyncClientError``.
    public func notesPage(after cursor: UInt64, limit: Int) async throws -> SyncNotesPage {
        try await call(
            "GET", "/v1/sync/notes",
            query: [URLQueryItem(name: "after", value: "\(cursor)"), URLQueryItem(name: "limit", value: "\(max(1, limit))")])
    }

    /// Sends one change of a note of this device (`POST /v1/sync/notes`).
    /// - Parameter change: the note as it is here, and the version it was made from.
    /// - Returns: what the server made of it, and the note as it is there now.
    /// - Throws: ``SyncClientError``.
    public func pushNote(_ change: SyncNoteChange) async throws -> SyncNoteChangeResult {
        try await call("POST", "/v1/sync/notes", body: change)
    }
}
