import Foundation
import GRDB
import TresorAppleNotes
import TresorCrypto
import TresorNotesDomain

// Importing notes from another store (docs/API.md, "Import").
extension NotesStore {
    /// Imports `notes` into `account` in one transaction. A note already imported (same
    /// title, dates and content) is skipped, so importing a store twice adds nothing; a note
    /// with invalid fields is refused with a reason while the others import. A note from the
    /// other store's Recently Deleted goes into Recently Deleted, its 30 days counted from now.
    public func importNotes(_ notes: [NoteImport], account: AccountID = .local) throws -> ImportReport {
        let sealing = try sealing()
        let (report, indexed) = try pool.write { db -> (ImportReport, [SearchIndex.Entry]) in
            var report = ImportReport()
            var indexed: [SearchIndex.Entry] = []
            _ = try AccountRow.fetch(account, db)
            for note in notes {
                do {
                    if let entry = try importOne(note, account: account, db, sealing) {
                        report.imported += 1
                        if case .appleLocked = note.content { report.locked += 1 }
                        // Search leaves out what is in Recently Deleted.
                        if note.inRecentlyDeleted { report.recentlyDeleted += 1 } else { indexed.append(entry) }
                    } else {
                        report.alreadyImported += 1
                    }
                } catch let error as NotesError {
                    report.refused.append(ImportReport.refusal(title: note.title, reason: "\(error)"))
                }
            }
            return (report, indexed)
        }
        for entry in indexed { index.upsert(entry) }
        return report
    }

    /// Inserts one imported note; nil when an earlier import already brought it in.
    private func importOne(_ note: NoteImport, account: AccountID, _ db: Database, _ sealing: ContentSealing) throws -> SearchIndex.Entry? {
        if let reason = note.sizeRefusal { throw NotesError.invalid(reason) }
        try NoteRules.validate(note.title, limit: NoteLimits.titleBytes, what: "title")
        if let folder = note.folder { try NoteRules.validateFolderName(folder) }
        let tag = sealing.importTag(try Self.importMaterial(note, account: account))
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM notes WHERE import_tag = ?", arguments: [tag]) == true { return nil }
        let id = UUID().uuidString.lowercased()
        let folder = try note.folder.map { try folderID(named: $0, account: account, creating: true, db, sealing)! }
        let deleted: Double? = note.inRecentlyDeleted ? now.timeIntervalSince1970 : nil
        let created: Double = (note.created ?? now).timeIntervalSince1970
        let modified: Double = (note.modified ?? note.created ?? now).timeIntervalSince1970
        switch note.content {
        case .text(let text):
            try NoteRules.validate(text, limit: NoteLimits.bodyBytes, what: "body")
            let title = try NoteRules.title(note.title, body: text)
            let arguments: StatementArguments = [
                id, account.rawValue, folder, created, modified, note.isPinned, deleted,
                try sealing.sealText(title, table: "notes", id: id, column: "title"),
                try sealing.sealText(text, table: "notes", id: id, column: "body"), tag,
            ]
            try db.execute(
                sql: """
                    INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, deleted, sealed_title, sealed_body, import_tag)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: arguments)
            return SearchIndex.Entry(noteID: id, accountID: account.rawValue, title: title, body: text)
        case .appleLocked(let fields):
            try Self.validate(fields)
            let title = note.title.isEmpty ? "Locked Note" : note.title
            let passphraseID = try importedPassphrase(fields, account: account, db, sealing)
            let sealedTitle = try sealing.sealText(title, table: "notes", id: id, column: "title")
            let sealedCiphertext = try sealing.seal(fields.ciphertext, table: "notes", id: id, column: "ciphertext")
            var arguments: StatementArguments = [id, account.rawValue, folder, created, modified, note.isPinned, deleted]
            arguments += [sealedTitle, passphraseID]
            arguments += [fields.salt, fields.iterations, fields.wrappedKey, fields.iv, fields.tag, sealedCiphertext]
            arguments += [BodyFormat.appleNotes.rawValue, tag]
            try db.execute(
                sql: """
                    INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, deleted, sealed_title, passphrase_id,
                        crypto_salt, crypto_iterations, crypto_wrapped_key, crypto_iv, crypto_tag, sealed_ciphertext,
                        body_format, import_tag)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: arguments)
            return SearchIndex.Entry(noteID: id, accountID: account.rawValue, title: title, body: nil)
        }
    }

    /// Imported notes that share a salt, count and hint share one passphrase record, so one
    /// passphrase entry opens them all in a session.
    private func importedPassphrase(_ fields: AppleLockedNote, account: AccountID, _ db: Database, _ sealing: ContentSealing) throws -> Int64 {
        let candidates = try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM passphrases WHERE account_id = ? AND source = ? AND salt = ? AND iterations = ?
                """, arguments: [account.rawValue, LockInfo.Source.appleNotes.rawValue, fields.salt, fields.iterations])
        for candidate in candidates.map(PassphraseRow.init) where try hint(of: candidate, sealing) == fields.hint {
            return candidate.id
        }
        try db.execute(
            sql: """
                INSERT INTO passphrases (account_id, source, salt, iterations, created) VALUES (?, ?, ?, ?, ?)
                """, arguments: [account.rawValue, LockInfo.Source.appleNotes.rawValue, fields.salt, fields.iterations, now.timeIntervalSince1970])
        let id = db.lastInsertedRowID
        if let hint = fields.hint {
            try db.execute(
                sql: "UPDATE passphrases SET sealed_hint = ? WHERE id = ?",
                arguments: [try sealing.sealText(hint, table: "passphrases", id: "\(id)", column: "hint"), id])
        }
        return id
    }

    private static func validate(_ fields: AppleLockedNote) throws {
        guard (1...LockedNoteCrypto.maximumIterations).contains(fields.iterations) else {
            throw NotesError.invalid("its iteration count \(fields.iterations) is outside 1…\(LockedNoteCrypto.maximumIterations)")
        }
        guard (1...64).contains(fields.salt.count) else { throw NotesError.invalid("its salt is \(fields.salt.count) bytes") }
        guard fields.wrappedKey.count == LockedNoteCrypto.wrappedKeyByteCount else {
            throw NotesError.invalid("its wrapped key is \(fields.wrappedKey.count) bytes, not 24")
        }
        guard (12...64).contains(fields.iv.count) else { throw NotesError.invalid("its IV is \(fields.iv.count) bytes") }
        guard fields.tag.count == AESGCM.tagByteCount else { throw NotesError.invalid("its tag is \(fields.tag.count) bytes, not 16") }
        if let hint = fields.hint { try NoteRules.validate(hint, limit: 4 * NoteLimits.hintBytes, what: "hint") }
    }

    /// What identifies an imported note: its account, title, dates and content.
    private static func importMaterial(_ note: NoteImport, account: AccountID) throws -> Data {
        var material = Data(account.rawValue.utf8) + Data([0]) + Data(note.title.utf8) + Data([0])
        material += Data("\(note.created?.timeIntervalSince1970 ?? 0)/\(note.modified?.timeIntervalSince1970 ?? 0)".utf8)
        switch note.content {
        case .text(let text): material += Data("text\0".utf8) + Digest.sha256(Data(text.utf8))
        case .appleLocked(let fields):
            material += Data("locked\0".utf8) + Digest.sha256(fields.wrappedKey + fields.iv + fields.tag + fields.ciphertext)
        }
        return material
    }
}
