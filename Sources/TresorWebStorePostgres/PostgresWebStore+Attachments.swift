import Foundation
import PostgresNIO
import TresorNotesDomain

// Attachments (docs/FORMAT.md, "A Tresor server's database"): their bytes in rows of
// `attachment_chunks`, 1 MiB of plaintext each (a locked note's: one chunk sealed in the browser
// each), every chunk sealed under the server key bound to its attachment and position. An upload
// writes each chunk as it fills and only the last step — one transaction — makes the attachment
// part of its note; a reader fetches one chunk at a time. Memory stays at a chunk or two however
// large the attachment.
extension PostgresWebStore: AttachmentStore {
    func listedAttachments(ofNote id: String) async throws -> [AttachmentInfo] {
        try await db.read { [self] connection in
            _ = try await note(id, connection)
            return try await attachmentInfos(of: id, connection)
        }
    }

    /// Note `id`'s attachments, oldest first.
    func attachmentInfos(of id: String, _ connection: PostgresConnection) async throws -> [AttachmentInfo] {
        try await attachmentInfos(ofNotes: [id], connection)[id] ?? []
    }

    /// The attachments of notes `ids`, each note's oldest first; a note without any is left out.
    func attachmentInfos(ofNotes ids: [String], _ connection: PostgresConnection) async throws -> [String: [AttachmentInfo]] {
        var infos: [String: [AttachmentInfo]] = [:]
        for (noteID, attachmentID, kind, sealedName, byteCount, created, excluded) in try await connection.rows(
            """
            SELECT note_id, id, kind, sealed_name, byte_count, created, excluded_from_backup FROM attachments WHERE note_id = ANY(\(ids))
            ORDER BY note_id, created, id
            """, logger, as: (String, String, String, Data, Int, Double, Bool).self)
        {
            guard let kind = AttachmentKind(rawValue: kind) else { throw NotesError.damaged("attachment \(attachmentID)") }
            infos[noteID, default: []].append(
                AttachmentInfo(
                    id: attachmentID, kind: kind, name: try sealing.openText(sealedName, "attachments", attachmentID, "name"),
                    byteCount: byteCount, created: Date(timeIntervalSince1970: created), excludedFromBackup: excluded))
        }
        return infos
    }

    func beginAttachment(to noteID: String, kind: AttachmentKind, name: String, id given: String?, created: Date?, excludedFromBackup: Bool)
        async throws -> any AttachmentWriter
    {
        try await beginUpload(to: noteID, kind: kind, name: name, id: given, created: created, excludedFromBackup: excludedFromBackup, locked: false)
    }

    func sealedAttachmentIDs(ofNote id: String) async throws -> Set<String> {
        try await db.read { [self, logger] connection in
            _ = try await note(id, connection)
            return Set(try await connection.rows("SELECT id FROM attachments WHERE note_id = \(id) AND is_locked", logger, as: String.self))
        }
    }

    func beginSyncedLockedAttachment(
        to noteID: String, kind: AttachmentKind, name: String, id: String, created: Date?, excludedFromBackup: Bool
    ) async throws -> any AttachmentWriter {
        guard kind.isLockable else { throw NotesError.attachmentNotLockable(name: name, kind: kind) }
        return try await beginUpload(
            to: noteID, kind: kind, name: name, id: id, created: created, excludedFromBackup: excludedFromBackup, locked: true)
    }

    /// Starts an upload to note `noteID`, which must be locked (its chunks come sealed under the
    /// note key) or not as `locked` says.
    private func beginUpload(
        to noteID: String, kind: AttachmentKind, name: String, id given: String?, created: Date?, excludedFromBackup: Bool, locked: Bool
    ) async throws -> any AttachmentWriter {
        try NoteRules.validateAttachmentName(name)
        let id = given ?? UUID().uuidString.lowercased()
        try await db.transaction { [self, logger] connection in
            let row = try await note(noteID, connection)
            guard row.isLocked == locked else {
                throw NotesError.wrongLockState(
                    locked ? "note \(noteID) is not locked" : "attachments are added to unlocked notes in the web client")
            }
            // A device's attachment (an id it gave) travels with its note in Recently Deleted too
            // (docs/SYNC.md, "Attachments"); the web client's waits for the restore.
            guard !row.isDeleted || given != nil else { throw NotesError.invalid("note \(noteID) is in Recently Deleted: restore it first") }
            if given != nil {
                // An id a device gave: never one of another attachment (its chunks would be
                // dropped with this upload's), nor of an upload to another note.
                guard try await connection.count("SELECT 1 FROM attachments WHERE id = \(id)", logger) == 0,
                    try await connection.count(
                        "SELECT 1 FROM attachment_uploads WHERE id = \(id) AND note_id <> \(noteID)", logger) == 0
                else { throw NotesError.conflict("attachment \(id) exists already") }
                // An upload of it cut short before starts again from its first chunk.
                try await connection.run("DELETE FROM attachment_chunks WHERE attachment_id = \(id)", logger)
                try await connection.run("DELETE FROM attachment_uploads WHERE id = \(id)", logger)
            }
            try await connection.run("INSERT INTO attachment_uploads (id, note_id, started) VALUES (\(id), \(noteID), \(now))", logger)
        }
        return PostgresAttachmentWriter(
            store: self, id: id, noteID: noteID, kind: kind, name: name, created: created, excludedFromBackup: excludedFromBackup, isLocked: locked)
    }

    func readAttachment(_ id: String, of noteID: String) async throws -> any AttachmentReader {
        let row = try await db.read { [logger] connection in
            try await connection.row(
                "SELECT byte_count, chunk_count, is_locked FROM attachments WHERE id = \(id) AND note_id = \(noteID)", logger,
                as: (Int, Int, Bool).self)
        }
        guard let (byteCount, chunkCount, isLocked) = row else {
            throw NotesError.notFound("attachment \(id.prefix(64)) of note \(noteID.prefix(64))")
        }
        // A locked note's attachment is read as its chunks sealed in the browser, each 28 bytes
        // longer than its plaintext.
        let total = isLocked ? byteCount + chunkCount * LockedNoteShape.chunkOverheadByteCount : byteCount
        return PostgresAttachmentReader(store: self, id: id, chunkCount: chunkCount, byteCount: total)
    }

    func removeAttachment(_ id: String, of noteID: String, by authority: AttachmentRemovalAuthority) async throws {
        try await counting { [self, logger] connection -> Result<Void, NotesError> in
            let row = try await noteForWrite(noteID, connection)
            guard !row.isDeleted else { throw NotesError.invalid("note \(noteID) is in Recently Deleted: restore it first") }
            if row.isLocked, case .browser(let noteProof, let passphraseProof) = authority {
                guard let noteProof else { throw NotesError.invalid("a locked note's attachment is removed with the note's proof") }
                guard try await connection.count("SELECT 1 FROM attachments WHERE id = \(id) AND note_id = \(noteID)", logger) == 1 else {
                    throw NotesError.notFound("attachment \(id.prefix(64)) of note \(noteID.prefix(64))")
                }
                if let wrong = try await checkNoteProof(row, noteProof: noteProof, passphraseProof: passphraseProof, connection) {
                    return .failure(wrong)
                }
            }
            guard try await connection.count("DELETE FROM attachments WHERE id = \(id) AND note_id = \(noteID) RETURNING 1", logger) == 1 else {
                throw NotesError.notFound("attachment \(id.prefix(64)) of note \(noteID.prefix(64))")
            }
            try await connection.run("DELETE FROM attachment_chunks WHERE attachment_id = \(id)", logger)
            // Setting `modified`, even to itself, counts the note's revision.
            if authority.datesTheNote {
                try await connection.run("UPDATE notes SET modified = \(now) WHERE id = \(noteID)", logger)
            } else {
                try await connection.run("UPDATE notes SET modified = modified WHERE id = \(noteID)", logger)
            }
            try await announce(.changed, note: noteID, connection)
            return .success(())
        }
    }

    func setExcludedFromBackup(_ id: String, of noteID: String, excluded: Bool) async throws -> AttachmentInfo {
        try await db.transaction { [self, logger] connection in
            _ = try await noteForWrite(noteID, connection)
            guard
                let changed = try await connection.value(
                    """
                    WITH old AS (SELECT excluded_from_backup FROM attachments WHERE id = \(id) AND note_id = \(noteID) FOR UPDATE)
                    UPDATE attachments SET excluded_from_backup = \(excluded) FROM old WHERE id = \(id) AND note_id = \(noteID)
                    RETURNING old.excluded_from_backup <> \(excluded)
                    """, logger, as: Bool.self)
            else { throw NotesError.notFound("attachment \(id.prefix(64)) of note \(noteID.prefix(64))") }
            if changed {
                // A revision of the note: the account's devices read its listing again.
                try await connection.run("UPDATE notes SET modified = \(now) WHERE id = \(noteID)", logger)
                try await announce(.changed, note: noteID, connection)
            }
            guard let info = try await attachmentInfos(of: noteID, connection).first(where: { $0.id == id }) else {
                throw NotesError.notFound("attachment \(id.prefix(64)) of note \(noteID.prefix(64))")
            }
            return info
        }
    }

    /// Writes chunk `index` of attachment `id`, sealed (its own statement: an upload's chunks are
    /// invisible until ``PostgresAttachmentWriter/finish(quota:)``).
    func writeChunk(_ bytes: Data, index: Int, of id: String) async throws {
        let sealed = try sealing.seal(bytes, "attachment_chunks", "\(id)/\(index)", "bytes")
        try await db.read { [logger] connection in
            try await connection.run(
                "INSERT INTO attachment_chunks (attachment_id, chunk_index, sealed_bytes) VALUES (\(id), \(index), \(sealed))", logger)
        }
    }

    /// Writes chunk `index` of attachment `id` in the caller's transaction.
    func writeChunk(_ bytes: Data, index: Int, of id: String, _ connection: PostgresConnection) async throws {
        let sealed = try sealing.seal(bytes, "attachment_chunks", "\(id)/\(index)", "bytes")
        try await connection.run(
            "INSERT INTO attachment_chunks (attachment_id, chunk_index, sealed_bytes) VALUES (\(id), \(index), \(sealed))", logger)
    }

    /// Chunk `index` of attachment `id`, opened.
    func readChunk(_ index: Int, of id: String) async throws -> Data {
        let sealed = try await db.read { [logger] connection in
            try await connection.value(
                "SELECT sealed_bytes FROM attachment_chunks WHERE attachment_id = \(id) AND chunk_index = \(index)", logger, as: Data.self)
        }
        guard let sealed else { throw NotesError.damaged("attachment \(id)") }
        return try sealing.open(sealed, "attachment_chunks", "\(id)/\(index)", "bytes")
    }

    /// Adds upload `writer` to its note: the chunks it wrote become an attachment, in one step.
    func finishUpload(_ writer: PostgresAttachmentWriter, byteCount: Int, chunkCount: Int, quota: StorageQuota?) async throws -> AttachmentInfo {
        let id = writer.id, noteID = writer.noteID
        let sealedName = try sealing.sealText(writer.name, "attachments", id, "name")
        // A device's date of adding it, when it gave one: no later than now.
        let created = min(writer.created?.timeIntervalSince1970 ?? now, now)
        return try await db.transaction { [self, logger] connection in
            let row = try await noteForWrite(noteID, connection)
            guard row.isLocked == writer.isLocked else {
                throw NotesError.wrongLockState("note \(noteID) was \(row.isLocked ? "locked" : "unlocked") meanwhile; try again")
            }
            guard try await connection.count("DELETE FROM attachment_uploads WHERE id = \(id) RETURNING 1", logger) == 1 else {
                throw NotesError.conflict("the upload of attachment \(id) was abandoned")
            }
            try await check(quota, adding: byteCount, account: AccountID(rawValue: row.accountID), connection)
            try await connection.run(
                """
                INSERT INTO attachments (id, note_id, kind, sealed_name, byte_count, chunk_count, is_locked, created, excluded_from_backup)
                VALUES (
                    \(id), \(noteID), \(writer.kind.rawValue), \(sealedName), \(byteCount), \(chunkCount), \(writer.isLocked), \(created),
                    \(writer.excludedFromBackup))
                """, logger)
            // Never dated back: the note may have been edited since the device added it.
            try await connection.run("UPDATE notes SET modified = GREATEST(modified, \(created)) WHERE id = \(noteID)", logger)
            try await announce(.changed, note: noteID, connection)
            return AttachmentInfo(
                id: id, kind: writer.kind, name: writer.name, byteCount: byteCount, created: Date(timeIntervalSince1970: created),
                excludedFromBackup: writer.excludedFromBackup)
        }
    }

    /// Drops upload `id`: its chunks and its row.
    func abandonUpload(_ id: String) async throws {
        try await db.transaction { [logger] connection in
            try await connection.run("DELETE FROM attachment_chunks WHERE attachment_id = \(id)", logger)
            try await connection.run("DELETE FROM attachment_uploads WHERE id = \(id)", logger)
        }
    }
}

/// An upload into `attachment_chunks`: bytes gathered into 1 MiB chunks, each sealed and written
/// as it fills — or, for a locked note, its chunks as the device sealed them under the note key
/// (1 MiB of plaintext and 28 bytes each, the last one shorter). Calls come one after another
/// (the protocol's contract); the actor keeps that safe.
actor PostgresAttachmentWriter: AttachmentWriter {
    nonisolated let id: String
    nonisolated let noteID: String
    nonisolated let kind: AttachmentKind
    nonisolated let name: String
    nonisolated let isLocked: Bool
    /// When the device that sent it added it; nil: now.
    nonisolated let created: Date?
    /// Whether the device that sent it keeps it out of backups.
    nonisolated let excludedFromBackup: Bool
    /// Writes the plaintext of a locked note's attachment as its unlocked copy (a lock removed on
    /// a device, docs/SYNC.md), beside the sealed chunks it will replace.
    nonisolated let isUnlockedCopy: Bool
    private let store: PostgresWebStore
    private let chunkBytes: Int
    private let limit: Int
    private var pending = Data()
    private var byteCount = 0
    private var chunkCount = 0
    private var done = false

    init(
        store: PostgresWebStore, id: String, noteID: String, kind: AttachmentKind, name: String, created: Date? = nil,
        excludedFromBackup: Bool = false, isLocked: Bool = false, isUnlockedCopy: Bool = false
    ) {
        self.created = created
        self.excludedFromBackup = excludedFromBackup
        self.store = store
        self.id = id
        self.noteID = noteID
        self.kind = kind
        self.name = name
        self.isLocked = isLocked
        self.isUnlockedCopy = isUnlockedCopy
        let overhead = isLocked ? LockedNoteShape.chunkOverheadByteCount : 0
        chunkBytes = LockedNoteShape.chunkByteCount + overhead
        limit = NoteLimits.largestAttachmentBytes + LockedNoteShape.chunkCount(plaintextByteCount: NoteLimits.largestAttachmentBytes) * overhead
    }

    func append(_ data: Data) async throws {
        guard !done else { throw NotesError.invalid("the upload of attachment \(id) is over") }
        guard byteCount + data.count <= limit else {
            throw NotesError.invalid("an attachment is at most \(NoteLimits.largestAttachmentBytes) bytes")
        }
        byteCount += data.count
        pending.append(data)
        while pending.count >= chunkBytes {
            let chunk = pending.prefix(chunkBytes)
            pending = Data(pending.dropFirst(chunkBytes))
            let index = chunkCount
            chunkCount += 1
            try await write(Data(chunk), index: index)
        }
    }

    private func write(_ chunk: Data, index: Int) async throws {
        if isUnlockedCopy {
            try await store.writeUnlockedCopyChunk(chunk, index: index, of: id)
        } else {
            try await store.writeChunk(chunk, index: index, of: id)
        }
    }

    /// Drops what this upload wrote — never the chunks of the attachment an unlocked copy is of.
    private func drop() async {
        if isUnlockedCopy {
            try? await store.abandonUnlockedCopy(id)
        } else {
            try? await store.abandonUpload(id)
        }
    }

    func finish(quota: StorageQuota?) async throws -> AttachmentInfo {
        guard !done else { throw NotesError.invalid("the upload of attachment \(id) is over") }
        done = true
        do {
            if !pending.isEmpty {
                let chunk = pending
                pending = Data()
                try await write(chunk, index: chunkCount)
                chunkCount += 1
            }
            var plaintextBytes = byteCount
            if isLocked {
                // Sealed chunks: each 28 bytes more than its plaintext, as many as that needs.
                plaintextBytes = byteCount - chunkCount * LockedNoteShape.chunkOverheadByteCount
                guard chunkCount > 0, plaintextBytes >= 0, LockedNoteShape.chunkCount(plaintextByteCount: plaintextBytes) == chunkCount else {
                    throw NotesError.invalid("attachment \(id) is not whole sealed chunks")
                }
            }
            if isUnlockedCopy { return try await store.finishUnlockedCopy(self, byteCount: plaintextBytes, chunkCount: chunkCount) }
            let adding = quota.map { StorageQuota(limitBytes: $0.limitBytes, addingBytes: plaintextBytes) }
            return try await store.finishUpload(self, byteCount: plaintextBytes, chunkCount: chunkCount, quota: adding)
        } catch {
            await drop()
            throw error
        }
    }

    func abandon() async {
        done = true
        pending = Data()
        await drop()
    }
}

/// An attachment read a chunk at a time, each fetched when asked for.
actor PostgresAttachmentReader: AttachmentReader {
    nonisolated let byteCount: Int
    private let store: PostgresWebStore
    private let id: String
    private let chunkCount: Int
    private var position = 0

    init(store: PostgresWebStore, id: String, chunkCount: Int, byteCount: Int) {
        self.store = store
        self.id = id
        self.chunkCount = chunkCount
        self.byteCount = byteCount
    }

    func next() async throws -> Data? {
        guard position < chunkCount else { return nil }
        let index = position
        position += 1
        return try await store.readChunk(index, of: id)
    }
}
