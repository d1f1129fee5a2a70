import Foundation
import PostgresNIO
import TresorNotesDomain

// Unlocked copies (docs/SYNC.md, "A lock removed travels"; `ServerSchema.version6`): a device that
// removed a note's lock sends each attachment's plaintext first, kept beside the sealed chunks it
// will replace; the lock removal's transaction moves the copies' chunks into `attachment_chunks`
// as they are (they are sealed under the binding they have there), so the note is unlocked with
// every attachment readable at once, or stays locked with its sealed ones.
extension PostgresWebStore {
    func beginUnlockedCopy(ofAttachment id: String, note noteID: String) async throws -> (any AttachmentWriter)? {
        let found = try await db.transaction { [self, logger] connection -> (kind: String, sealedName: Data)? in
            guard try await noteForWrite(noteID, connection).isLocked else { throw NotesError.wrongLockState("note \(noteID) is not locked") }
            guard
                let (kind, sealedName, isLocked) = try await connection.row(
                    "SELECT kind, sealed_name, is_locked FROM attachments WHERE id = \(id) AND note_id = \(noteID)", logger,
                    as: (String, Data, Bool).self)
            else { throw NotesError.notFound("attachment \(id.prefix(64)) of note \(noteID.prefix(64))") }
            guard isLocked else { throw NotesError.wrongLockState("attachment \(id) is not held sealed") }
            if try await connection.value("SELECT complete FROM attachment_unlocked_copies WHERE id = \(id)", logger, as: Bool.self) == true {
                return nil
            }
            // A copy cut short before starts again from its first chunk (its chunks go with it).
            try await connection.run("DELETE FROM attachment_unlocked_copies WHERE id = \(id)", logger)
            try await connection.run("INSERT INTO attachment_unlocked_copies (id, byte_count, chunk_count) VALUES (\(id), 0, 0)", logger)
            return (kind, sealedName)
        }
        guard let found else { return nil }
        guard let kind = AttachmentKind(rawValue: found.kind) else { throw NotesError.damaged("attachment \(id)") }
        let name = try sealing.openText(found.sealedName, "attachments", id, "name")
        return PostgresAttachmentWriter(store: self, id: id, noteID: noteID, kind: kind, name: name, isUnlockedCopy: true)
    }

    /// Writes chunk `index` of attachment `id`'s unlocked copy, sealed as it will be in
    /// `attachment_chunks` (its own statement).
    func writeUnlockedCopyChunk(_ bytes: Data, index: Int, of id: String) async throws {
        let sealed = try sealing.seal(bytes, "attachment_chunks", "\(id)/\(index)", "bytes")
        try await db.read { [logger] connection in
            try await connection.run(
                "INSERT INTO attachment_unlocked_chunks (attachment_id, chunk_index, sealed_bytes) VALUES (\(id), \(index), \(sealed))",
                logger)
        }
    }

    /// Marks writer's unlocked copy whole: of its attachment's byte count, its note still locked.
    func finishUnlockedCopy(_ writer: PostgresAttachmentWriter, byteCount: Int, chunkCount: Int) async throws -> AttachmentInfo {
        let id = writer.id, noteID = writer.noteID
        return try await db.transaction { [self, logger] connection in
            guard try await noteForWrite(noteID, connection).isLocked else {
                throw NotesError.wrongLockState("note \(noteID) was unlocked meanwhile; try again")
            }
            guard
                let (expected, created) = try await connection.row(
                    "SELECT byte_count, created FROM attachments WHERE id = \(id) AND note_id = \(noteID) AND is_locked", logger,
                    as: (Int, Double).self)
            else { throw NotesError.notFound("attachment \(id.prefix(64)) of note \(noteID.prefix(64))") }
            guard byteCount == expected else {
                throw NotesError.invalid("the unlocked copy of attachment \(id) has \(byteCount) bytes, not \(expected)")
            }
            guard
                try await connection.count(
                    """
                    UPDATE attachment_unlocked_copies SET complete = TRUE, byte_count = \(byteCount), chunk_count = \(chunkCount)
                    WHERE id = \(id) AND NOT complete RETURNING 1
                    """, logger) == 1
            else { throw NotesError.conflict("the unlocked copy of attachment \(id) was started again meanwhile") }
            return AttachmentInfo(
                id: id, kind: writer.kind, name: writer.name, byteCount: byteCount, created: Date(timeIntervalSince1970: created))
        }
    }

    /// Drops attachment `id`'s unlocked copy while it is not whole, with its chunks.
    func abandonUnlockedCopy(_ id: String) async throws {
        try await db.transaction { [logger] connection in
            try await connection.run("DELETE FROM attachment_unlocked_copies WHERE id = \(id) AND NOT complete", logger)
        }
    }

    /// Puts the unlocked copy of each attachment of note `id` held sealed in its sealed chunks'
    /// place, in the caller's transaction.
    /// - Throws: ``NotesError/wrongLockState(_:)`` while one has no whole copy: nothing changes.
    func takeUnlockedCopies(ofNote id: String, _ connection: PostgresConnection) async throws {
        let missing = try await connection.count(
            """
            SELECT 1 FROM attachments a WHERE a.note_id = \(id) AND a.is_locked
                AND NOT EXISTS (SELECT 1 FROM attachment_unlocked_copies c WHERE c.id = a.id AND c.complete)
            """, logger)
        guard missing == 0 else {
            throw NotesError.wrongLockState("\(missing) attachment(s) of note \(id) not sent unlocked yet: they go before the lock's removal")
        }
        try await connection.run(
            "DELETE FROM attachment_chunks WHERE attachment_id IN (SELECT id FROM attachments WHERE note_id = \(id) AND is_locked)", logger)
        try await connection.run(
            """
            INSERT INTO attachment_chunks (attachment_id, chunk_index, sealed_bytes)
            SELECT u.attachment_id, u.chunk_index, u.sealed_bytes FROM attachment_unlocked_chunks u JOIN attachments a ON a.id = u.attachment_id
            WHERE a.note_id = \(id) AND a.is_locked
            """, logger)
        try await connection.run(
            """
            UPDATE attachments SET is_locked = FALSE, chunk_count = c.chunk_count FROM attachment_unlocked_copies c
            WHERE c.id = attachments.id AND attachments.note_id = \(id) AND attachments.is_locked
            """, logger)
        try await dropUnlockedCopies(ofNote: id, connection)
    }

    /// Drops the unlocked copies of note `id`'s attachments (its lock stays: plaintext of a locked
    /// note is kept no longer than it is on its way), in the caller's transaction.
    func dropUnlockedCopies(ofNote id: String, _ connection: PostgresConnection) async throws {
        try await connection.run("DELETE FROM attachment_unlocked_copies WHERE id IN (SELECT id FROM attachments WHERE note_id = \(id))", logger)
    }
}
