import Crypto
import Foundation
import GRDB
import TresorCrypto
import TresorNotesDomain

// Shared notes (docs/FORMAT.md, "Web accounts and shared notes"): an unlocked note shared with
// other accounts of this server. The server decides who reads and writes; dates and participants
// are stored in the clear; the title and body are sealed under a per-record key the server holds
// (itself sealed under the content key). A locked note cannot be shared, and a shared note cannot
// be locked.
extension NotesStore {

    /// What `account` may do with note `id`. A note it may not see is `notFound`, exactly as
    /// a note that does not exist, so ids of other accounts' notes cannot be probed. A note in
    /// Recently Deleted is its owner's alone, and only to look at, restore or delete for good
    /// (`includingDeleted`); anything else is `invalid` ("restore it first").
    /// - Parameters:
    ///   - id: the note.
    ///   - account: who asks.
    ///   - includingDeleted: whether a note in Recently Deleted is answered (to its owner).
    /// - Returns: `.owner` or `.participant`.
    /// - Throws: `notFound`, `invalid`.
    public func access(toNote id: String, for account: AccountID, includingDeleted: Bool = false) throws -> NoteAccess {
        try pool.read { db in try access(toNote: id, for: account, includingDeleted: includingDeleted, db) }
    }

    func access(toNote id: String, for account: AccountID, includingDeleted: Bool = false, _ db: Database) throws -> NoteAccess {
        guard let row = try Row.fetchOne(db, sql: "SELECT account_id, deleted FROM notes WHERE id = ?", arguments: [id]) else {
            throw NotesError.notFound("note \(id.prefix(64))")
        }
        let owner: String = row["account_id"]
        if (row["deleted"] as Double?) != nil {
            guard owner == account.rawValue else { throw NotesError.notFound("note \(id.prefix(64))") }
            guard includingDeleted else { throw NotesError.invalid("note \(id.prefix(64)) is in Recently Deleted: restore it first") }
        }
        if owner == account.rawValue { return .owner }
        let participates =
            try Int.fetchOne(
                db, sql: "SELECT 1 FROM participants WHERE note_id = ? AND account_id = ?", arguments: [id, account.rawValue]) != nil
        guard participates else { throw NotesError.notFound("note \(id.prefix(64))") }
        return .participant
    }

    /// The notes shared with `account` by others, most recently modified first.
    public func notesShared(with account: AccountID) throws -> [NoteSummary] {
        let sealing = try sealing()
        return try pool.read { db in
            var reader = NoteSummaryReader(self, db, sealing)
            return try reader.summaries(
                of: Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(NoteRow.summaryColumns) FROM notes
                        WHERE deleted IS NULL AND id IN (SELECT note_id FROM participants WHERE account_id = ?)
                        ORDER BY modified DESC, id
                        """, arguments: [account.rawValue]
                ).map(NoteRow.init(summaryRow:)))
        }
    }

    /// Shares note `id` with the account that signs in as `name`. Only the owner shares; the
    /// note must not be locked. The first share moves the title and body under a record key.
    /// A participant added counts the note's revision up.
    public func share(note id: String, with name: String, by owner: AccountID) throws {
        let sealing = try sealing()
        guard let participant = try webAccount(named: name) else { throw NotesError.notFound("account \"\(name.prefix(64))\"") }
        try pool.write { db in
            guard try access(toNote: id, for: owner, db) == .owner else { throw NotesError.forbidden("only the owner shares a note") }
            guard participant.id != owner else { throw NotesError.invalid("a note is not shared with its owner") }
            var row = try NoteRow.fetch(id, db)
            guard !row.isLocked else { throw NotesError.wrongLockState("note \(id) is locked: a locked note cannot be shared") }
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM participants WHERE note_id = ?", arguments: [id]) ?? 0
            guard count < NoteRules.maximumParticipants else {
                throw NotesError.invalid("a note has at most \(NoteRules.maximumParticipants) participants")
            }
            if row.sealedRecordKey == nil {
                let title = try title(of: row, sealing)
                let body = try sealing.openText(row.sealedBody ?? Data(), table: "notes", id: id, column: "body")
                let recordKey = SecureRandom.bytes(count: 32)
                try db.execute(
                    sql: "UPDATE notes SET sealed_record_key = ? WHERE id = ?",
                    arguments: [
                        try sealing.seal(recordKey, table: "notes", id: id, column: "record_key"), id,
                    ])
                row = try NoteRow.fetch(id, db)
                let layer = try sealing.noteLayer(row)
                try db.execute(
                    sql: "UPDATE notes SET sealed_title = ?, sealed_body = ? WHERE id = ?",
                    arguments: [
                        try layer.sealText(title, table: "notes", id: id, column: "title"),
                        try layer.sealText(body, table: "notes", id: id, column: "body"), id,
                    ])
            }
            try db.execute(
                sql: "INSERT OR IGNORE INTO participants (note_id, account_id, added) VALUES (?, ?, ?)",
                arguments: [id, participant.id.rawValue, now.timeIntervalSince1970])
            if db.changesCount > 0 { try countRevision(of: id, db) }
        }
        purgeRemovedPages()
        announce(.shared, note: id)
    }

    /// Removes `name` from note `id`'s participants: the owner removes anyone, a participant
    /// only themself (leaving the note). The note's revision counts up.
    public func unshare(note id: String, participant name: String, by account: AccountID) throws {
        guard let participant = try webAccount(named: name) else { throw NotesError.notFound("account \"\(name.prefix(64))\"") }
        try pool.write { db in
            let access = try access(toNote: id, for: account, db)
            guard access == .owner || participant.id == account else {
                throw NotesError.forbidden("only the owner removes other participants")
            }
            try db.execute(sql: "DELETE FROM participants WHERE note_id = ? AND account_id = ?", arguments: [id, participant.id.rawValue])
            guard db.changesCount > 0 else { throw NotesError.notFound("participant \"\(name.prefix(64))\"") }
            try countRevision(of: id, db)
        }
        announce(.unshared, note: id, alsoTo: [participant.id])
    }

    /// Whether note `id` has participants.
    func isShared(_ id: String, _ db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT 1 FROM participants WHERE note_id = ? LIMIT 1", arguments: [id]) != nil
    }
}

extension NotesStore {
    /// The account that owns note `id` (a quota is its owner's).
    /// - Parameter id: the note.
    /// - Returns: the owner.
    /// - Throws: ``NotesError/notFound(_:)``.
    public func noteOwner(_ id: String) throws -> AccountID {
        try pool.read { db in AccountID(rawValue: try NoteRow.fetch(id, db).accountID) }
    }
}
