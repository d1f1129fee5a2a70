import Foundation

extension NotesStore {
    /// A note's attachments as listed, without opening the note: a locked note's too (names,
    /// kinds and sizes are under the keybag layer only), so the web client can show them
    /// before it opens their sealed chunks. The caller checks the account's access first.
    public func listedAttachments(ofNote id: String) throws -> [AttachmentInfo] {
        let sealing = try sealing()
        return try pool.read { db in
            _ = try NoteRow.fetch(id, db)
            return try attachmentInfos(of: id, db, sealing)
        }
    }
}
