import Foundation
import GRDB

// Storage per account, for the web server's quotas (docs/WEB.md, "Availability").
extension NotesStore {
    /// Bytes account `id` stores: its notes' sealed titles and bodies (locked ones' ciphertext)
    /// and its notes' attachments, as uploaded. Notes shared with it count for their owner.
    /// - Parameter account: the account.
    /// - Returns: the bytes counted against its quota.
    /// - Throws: a database error.
    public func storedBytes(account: AccountID) throws -> Int64 {
        try pool.read { db in
            let notes =
                try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT COALESCE(SUM(LENGTH(sealed_title) + COALESCE(LENGTH(sealed_body), 0) + COALESCE(LENGTH(sealed_ciphertext), 0)), 0)
                        FROM notes WHERE account_id = ?
                        """, arguments: [account.rawValue]) ?? 0
            let attachments =
                try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT COALESCE(SUM(a.byte_count), 0) FROM attachments a JOIN notes n ON n.id = a.note_id WHERE n.account_id = ?
                        """, arguments: [account.rawValue]) ?? 0
            return notes + attachments
        }
    }
}
