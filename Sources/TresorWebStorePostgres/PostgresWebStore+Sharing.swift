import Foundation
import PostgresNIO
import TresorNotesDomain

// Shared notes (docs/WEB.md): participants are rows of `participants`, in the clear; the note's
// title and body stay sealed under the server key as every note's. Every access check reads the
// database, so a share or unshare made on one instance holds on every other at its next request.
// Either counts the note's revision up (who shares it is part of what every device shows).
extension PostgresWebStore: SharingStore {
    func share(note id: String, with name: String, by owner: AccountID) async throws -> ShareInfo {
        try await db.transaction { [self, logger] connection in
            let participant = try await account(named: name, connection)
            let row = try await noteForWrite(id, connection)
            guard try await access(toNote: id, for: owner, includingDeleted: false, connection) == .owner else {
                throw NotesError.forbidden("only the owner shares a note")
            }
            guard participant.id != owner else { throw NotesError.invalid("a note is not shared with its owner") }
            guard !row.isLocked else { throw NotesError.wrongLockState("note \(id) is locked: a locked note cannot be shared") }
            let count = try await connection.value("SELECT COUNT(*) FROM participants WHERE note_id = \(id)", logger, as: Int.self) ?? 0
            guard count < NoteRules.maximumParticipants else {
                throw NotesError.invalid("a note has at most \(NoteRules.maximumParticipants) participants")
            }
            let added = try await connection.count(
                """
                INSERT INTO participants (note_id, account_id, added) VALUES (\(id), \(participant.id.rawValue), \(now))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger)
            if added == 1 { try await countRevision(of: id, connection) }
            try await announce(.shared, note: id, connection)
            guard let sharing = try await summary(note(id, connection), connection).sharing else {
                throw NotesError.conflict("note \(id) was unshared meanwhile")
            }
            return sharing
        }
    }

    func unshare(note id: String, participant name: String, by account: AccountID) async throws {
        try await db.transaction { [self, logger] connection in
            let participant = try await self.account(named: name, connection)
            _ = try await noteForWrite(id, connection)
            let role = try await access(toNote: id, for: account, includingDeleted: false, connection)
            guard role == .owner || participant.id == account else { throw NotesError.forbidden("only the owner removes other participants") }
            guard
                try await connection.count(
                    "DELETE FROM participants WHERE note_id = \(id) AND account_id = \(participant.id.rawValue) RETURNING 1", logger) == 1
            else { throw NotesError.notFound("participant \"\(name.prefix(64))\"") }
            try await countRevision(of: id, connection)
            try await announce(.unshared, note: id, alsoTo: [participant.id], connection)
        }
    }

    /// The account that signs in as `name`, read in the caller's transaction.
    /// - Throws: ``NotesError/notFound(_:)`` for a name nobody has.
    private func account(named name: String, _ connection: PostgresConnection) async throws -> WebAccount {
        guard let login = try? NoteRules.loginName(name), login != NoteRules.localLoginName,
            let id = try await connection.value("SELECT id FROM accounts WHERE login_name = \(login)", logger, as: String.self)
        else { throw NotesError.notFound("account \"\(name.prefix(64))\"") }
        return WebAccount(id: AccountID(rawValue: id), name: login, isLocal: false)
    }
}
