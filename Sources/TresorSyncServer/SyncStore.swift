import Foundation
import Logging
import PostgresNIO
import TresorNotesDomain
import TresorSyncProtocol
import TresorWebStore
import TresorWebStorePostgres

/// The sync relay's tables in the server's PostgreSQL (docs/SYNC.md, "Transport"). Every step
/// is one transaction of ``ServerDatabase``; record bodies, device lists and key envelopes are
/// stored as the devices sent them.
final class SyncStore: Sendable {
    let db: ServerDatabase
    let clock: @Sendable () -> Date
    /// Runs inside each push's transaction once its records are written, before it commits
    /// (tests hold a push open with it).
    let beforeCommit: @Sendable () async -> Void

    init(db: ServerDatabase, clock: @escaping @Sendable () -> Date, beforeCommit: @escaping @Sendable () async -> Void) {
        self.db = db
        self.clock = clock
        self.beforeCommit = beforeCommit
    }

    var logger: Logger { db.logger }

    /// Stores `uploads` of `device` all together, or none. Counters are handed out under the
    /// lock of the account's circle row, held until the transaction commits: a push that
    /// takes counters after another commits after it, so a reader that has seen counter N has
    /// seen every counter below N. An upload whose device sequence is already stored with the
    /// same content is answered with its counter again (a retry); with other content it is
    /// refused, as is a sequence that skips one.
    /// - Returns: each upload's record, in order, and whether any was new.
    /// - Throws: ``SyncRefusal`` (`conflict`, `invalid`, `notFound`), ``NotesError/unavailable(_:)``.
    func push(_ uploads: [SyncUpload], account: AccountID, device: String) async throws -> (records: [SyncRecord], stored: Bool) {
        let logger = self.logger, now = clock().timeIntervalSince1970, beforeCommit = self.beforeCommit
        return try await db.transaction { connection in
            guard
                let last = try await connection.value(
                    "SELECT last_counter FROM sync_circles WHERE account_id = \(account.rawValue) FOR UPDATE", logger, as: Int64.self)
            else { throw SyncRefusal(.notFound, "this account has no sync circle") }
            let sequences = uploads.map { Int64($0.deviceSequence) }
            var stored: [Int64: SyncRecord] = [:]
            for (counter, recordID, sequence, base, body) in try await connection.rows(
                """
                SELECT counter, record_id, device_sequence, base_counter, body FROM sync_records
                WHERE account_id = \(account.rawValue) AND device_id = \(device) AND device_sequence = ANY(\(sequences))
                """, logger, as: (Int64, String, Int64, Int64, Data).self)
            {
                stored[sequence] = SyncRecord(
                    counter: UInt64(counter),
                    upload: SyncUpload(
                        recordID: recordID, deviceID: device, deviceSequence: UInt64(sequence), baseCounter: UInt64(base), body: body))
            }
            var nextSequence =
                try await connection.value(
                    "SELECT COALESCE(MAX(device_sequence), 0)::bigint FROM sync_records WHERE account_id = \(account.rawValue) AND device_id = \(device)",
                    logger, as: Int64.self
                ).map { $0 + 1 } ?? 1
            var counter = last
            var records: [SyncRecord] = []
            for (index, upload) in uploads.enumerated() {
                let sequence = Int64(upload.deviceSequence)
                if let earlier = stored[sequence] {
                    guard earlier.upload == upload else {
                        throw SyncRefusal(.conflict, "upload \(index): device sequence \(sequence) is already stored with other content")
                    }
                    records.append(earlier)
                    continue
                }
                guard sequence == nextSequence else {
                    throw SyncRefusal(.conflict, "upload \(index): device sequence \(sequence) is not the next one of this device (\(nextSequence))")
                }
                guard upload.baseCounter <= UInt64(last) else {
                    throw SyncRefusal(.invalid, "upload \(index): base counter \(upload.baseCounter) is past the account's latest (\(last))")
                }
                nextSequence += 1
                counter += 1
                try await connection.run(
                    """
                    INSERT INTO sync_records (account_id, counter, record_id, device_id, device_sequence, base_counter, body, received)
                    VALUES (\(account.rawValue), \(counter), \(upload.recordID), \(device), \(sequence), \(Int64(upload.baseCounter)),
                            \(upload.body), \(now))
                    """, logger)
                records.append(SyncRecord(counter: UInt64(counter), upload: upload))
            }
            if counter > last {
                try await connection.run("UPDATE sync_circles SET last_counter = \(counter) WHERE account_id = \(account.rawValue)", logger)
            }
            await beforeCommit()
            return (records, counter > last)
        }
    }

    /// The records of `account` after `cursor`, in counter order: at most `limit`, and no more
    /// once their bodies pass ``SyncLimits/pageBodyBytes`` (always one at least).
    /// - Throws: ``NotesError/unavailable(_:)``.
    func page(account: AccountID, after cursor: UInt64, limit: Int) async throws -> SyncPage {
        let logger = self.logger
        return try await db.read { connection in
            // Sizes first, so a page never reads more bodies than it sends.
            let sizes = try await connection.rows(
                """
                SELECT counter, octet_length(body)::bigint FROM sync_records
                WHERE account_id = \(account.rawValue) AND counter > \(Int64(cursor)) ORDER BY counter LIMIT \(Int64(limit + 1))
                """, logger, as: (Int64, Int64).self)
            var through: Int64?, bytes: Int64 = 0, taken = 0
            for (counter, size) in sizes.prefix(limit) {
                if taken > 0 && bytes + size > SyncLimits.pageBodyBytes { break }
                through = counter
                bytes += size
                taken += 1
            }
            guard let through else { return SyncPage(records: [], cursor: cursor, more: false) }
            let records = try await connection.rows(
                """
                SELECT counter, record_id, device_id, device_sequence, base_counter, body FROM sync_records
                WHERE account_id = \(account.rawValue) AND counter > \(Int64(cursor)) AND counter <= \(through) ORDER BY counter
                """, logger, as: (Int64, String, String, Int64, Int64, Data).self
            ).map { counter, recordID, device, sequence, base, body in
                SyncRecord(
                    counter: UInt64(counter),
                    upload: SyncUpload(
                        recordID: recordID, deviceID: device, deviceSequence: UInt64(sequence), baseCounter: UInt64(base), body: body))
            }
            return SyncPage(records: records, cursor: UInt64(through), more: sizes.count > taken)
        }
    }

    /// Where `account` stands (``SyncAccountState``), in one query: what an idle device asks.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func state(account: AccountID) async throws -> SyncAccountState {
        let logger = self.logger
        let row = try await db.read { connection in
            try await connection.row(
                """
                SELECT COALESCE(c.last_counter, 0)::bigint, COALESCE(c.device_list_version, 0)::bigint, a.notes_counter::bigint,
                    a.notes_settings_counter::bigint
                FROM accounts a LEFT JOIN sync_circles c ON c.account_id = a.id WHERE a.id = \(account.rawValue)
                """, logger, as: (Int64, Int64, Int64, Int64).self)
        }
        guard let (records, version, notes, settings) = row else { return SyncAccountState(records: 0, deviceListVersion: 0, notes: 0) }
        return SyncAccountState(
            records: UInt64(max(records, 0)), deviceListVersion: UInt64(max(version, 0)), notes: UInt64(max(notes, 0)),
            notesSettings: UInt64(max(settings, 0)), appleNotesPassphrases: true)
    }
}
