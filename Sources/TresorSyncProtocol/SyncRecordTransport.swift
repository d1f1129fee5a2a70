/// How a device's sync engine reaches a server's records: the two record calls of the relay
/// (docs/SYNC.md, "Records"), whatever carries them. The device's HTTP client answers them over
/// the network; the engine depends only on this.
public protocol SyncRecordTransport: Sendable {
    /// Stores uploads all together or not at all (`POST /v1/sync/records`).
    /// - Parameter request: the uploads, each with its device sequence and base counter.
    /// - Returns: each upload with the counter the server gave it, in the request's order; a
    ///   retried push gets the same answer.
    /// - Throws: when the server refuses the push or cannot be reached; nothing is stored then.
    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse

    /// The records after a cursor, in counter order (`GET /v1/sync/records`).
    /// - Parameters:
    ///   - cursor: the counter of the last record already read; 0 for the first page.
    ///   - limit: the most records wanted (the server may send fewer).
    /// - Returns: one page, with the cursor of the next.
    /// - Throws: when the server refuses the request or cannot be reached.
    func page(after cursor: UInt64, limit: Int) async throws -> SyncPage
}
