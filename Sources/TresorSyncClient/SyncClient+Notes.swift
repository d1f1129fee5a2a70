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

    /// Sends changes of notes of this device, a batch in one request (`POST /v1/sync/notes/batch`).
    /// - Parameter changes: 1 to ``SyncNoteBatch/maxChanges`` changes, each of another note.
    /// - Returns: one answer a change, in their order: what the server made of it, or why it
    ///   refused it (that change only).
    /// - Throws: ``SyncClientError``: the whole batch refused or not answered, or an answer
    ///   that does not match the batch (`garbage`).
    public func pushNotes(_ changes: [SyncNoteChange]) async throws -> [SyncNoteChangeAnswer] {
        let answer: SyncNoteBatchAnswer = try await call("POST", "/v1/sync/notes/batch", body: SyncNoteBatch(changes: changes))
        guard answer.answers.count == changes.count,
            answer.answers.allSatisfy({ ($0.result == nil) != ($0.refusal == nil) && ($0.refusal == nil) == ($0.status == nil) })
        else { throw SyncClientError.garbage("a notes batch answered with answers that do not match its changes") }
        return answer.answers
    }

    /// The account's current notes passphrase generation on the server (`GET /v1/sync/passphrase`).
    /// - Returns: the server's state (its `current` nil while none is set); nil from a server
    ///   that does not sync the passphrase.
    /// - Throws: ``SyncClientError``.
    public func notesPassphrase() async throws -> SyncPassphraseState? {
        try await callUnlessUnknown("GET", "/v1/sync/passphrase")
    }

    /// Sends this device's current notes passphrase generation (`PUT /v1/sync/passphrase`).
    /// - Parameter change: the generation and the account's current one this device last had.
    /// - Returns: the server's state: the account's current generation now — another device's
    ///   when its change came first; nil from a server that does not sync the passphrase.
    /// - Throws: ``SyncClientError``.
    public func pushNotesPassphrase(_ change: SyncPassphraseChange) async throws -> SyncPassphraseState? {
        try await callUnlessUnknown("PUT", "/v1/sync/passphrase", body: change)
    }

    /// Sends the folders this device made and deleted, and reads the account's (`POST /v1/sync/folders`).
    /// - Parameter changes: the folders made and deleted since this device last had the account's.
    /// - Returns: the account's folders now; nil from a server that does not sync folders.
    /// - Throws: ``SyncClientError``.
    public func syncFolders(_ changes: SyncFolderChanges) async throws -> SyncFolders? {
        try await callUnlessUnknown("POST", "/v1/sync/folders", body: changes)
    }
}
