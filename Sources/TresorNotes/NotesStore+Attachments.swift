import Crypto
import Foundation
import GRDB

// Attachments: add, read, remove. A locked note's attachments are sealed under its note key.
extension NotesStore {
    /// Adds an attachment. To a locked note only lockable kinds may be added, and its
    /// passphrase (or open session) is needed.
    @discardableResult
    public func addAttachment(
        to noteID: String, kind: AttachmentKind, name: String, data: Data, passphrase: Passphrase? = nil
    ) throws -> AttachmentInfo {
        try Self.validateAttachmentName(name)
        guard data.count <= NoteLimits.attachmentBytes else {
            throw NotesError.invalid("attachment \"\(name)\" is larger than \(NoteLimits.attachmentBytes) bytes")
        }
        let sealing = try sealing()
        let row = try pool.read { db in try NoteRow.fetch(noteID, db) }
        if row.isLocked && !kind.isLockable { throw NotesError.attachmentNotLockable(name: name, kind: kind) }
        let noteKey = row.isLocked ? try self.noteKey(of: row, passphrase: passphrase, sealing) : nil
        let id = UUID().uuidString.lowercased()
        let file = try AttachmentFile.write(data, attachmentID: id, in: attachmentsFolder, sealing: sealing, noteKey: noteKey)
        let created = now
        do {
            try pool.write { db in
                guard try NoteRow.fetch(noteID, db).wrappedKey == row.wrappedKey else {
                    throw NotesError.wrongLockState("note \(noteID) was locked or unlocked meanwhile; try again")
                }
                try db.execute(sql: """
                    INSERT INTO attachments (id, note_id, kind, sealed_name, byte_count, created, file, is_locked)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [
                        id, noteID, kind.rawValue, try sealing.sealText(name, table: "attachments", id: id, column: "name"),
                        data.count, created.timeIntervalSince1970, file, noteKey != nil,
                    ])
                try db.execute(sql: "UPDATE notes SET modified = ? WHERE id = ?", arguments: [created.timeIntervalSince1970, noteID])
            }
        } catch {
            AttachmentFile.remove(file, in: attachmentsFolder)
            throw error
        }
        return AttachmentInfo(id: id, kind: kind, name: name, byteCount: data.count, created: created)
    }

    /// An attachment's bytes (a locked note's: with its passphrase or open session).
    public func attachment(_ attachmentID: String, of noteID: String, passphrase: Passphrase? = nil) throws -> (AttachmentInfo, Data) {
        let sealing = try sealing()
        let (row, attachment) = try pool.read { db -> (NoteRow, AttachmentRow) in
            let note = try NoteRow.fetch(noteID, db)
            guard let attachment = try AttachmentRow.fetchAll(note: noteID, db).first(where: { $0.id == attachmentID }) else {
                throw NotesError.notFound("attachment \(attachmentID.prefix(64)) of note \(noteID)")
            }
            return (note, attachment)
        }
        let noteKey = attachment.isLocked ? try self.noteKey(of: row, passphrase: passphrase, sealing) : nil
        let data = try AttachmentFile.read(
            attachment.file, attachmentID: attachment.id, byteCount: attachment.byteCount, in: attachmentsFolder,
            sealing: sealing, noteKey: noteKey)
        return (try info(attachment, sealing), data)
    }

    /// Removes an attachment; its file is overwritten and unlinked.
    public func removeAttachment(_ attachmentID: String, of noteID: String) throws {
        let file = try pool.write { db -> String in
            guard let attachment = try AttachmentRow.fetchAll(note: noteID, db).first(where: { $0.id == attachmentID }) else {
                throw NotesError.notFound("attachment \(attachmentID.prefix(64)) of note \(noteID)")
            }
            try db.execute(sql: "DELETE FROM attachments WHERE id = ?", arguments: [attachmentID])
            try db.execute(sql: "UPDATE notes SET modified = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, noteID])
            return attachment.file
        }
        AttachmentFile.remove(file, in: attachmentsFolder)
        purgeRemovedPages()
    }

    func attachmentInfos(of noteID: String, _ db: Database, _ sealing: ContentSealing) throws -> [AttachmentInfo] {
        try AttachmentRow.fetchAll(note: noteID, db).map { try info($0, sealing) }
    }

    func info(_ row: AttachmentRow, _ sealing: ContentSealing) throws -> AttachmentInfo {
        AttachmentInfo(id: row.id, kind: row.kind, name: try attachmentName(row, sealing), byteCount: row.byteCount, created: row.created)
    }

    func attachmentName(_ row: AttachmentRow, _ sealing: ContentSealing) throws -> String {
        try sealing.openText(row.sealedName, table: "attachments", id: row.id, column: "name")
    }

    /// Attachment names become file names on export: no separators, no control characters,
    /// nothing that walks out of a folder.
    static func validateAttachmentName(_ name: String) throws {
        try validate(name, limit: NoteLimits.attachmentNameBytes, what: "attachment name", allowEmpty: false)
        guard name != ".", name != "..", !name.contains("/"), !name.contains("\\"),
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw NotesError.invalid("an attachment name may not be \".\" or \"..\" nor contain '/', '\\\\' or control characters")
        }
    }
}
