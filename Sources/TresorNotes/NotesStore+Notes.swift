import Foundation
import GRDB
import TresorCrypto
import TresorNotesDomain

// Accounts, folders and notes: create, list, open, edit, delete, search.
extension NotesStore {
    /// Every account with its passphrase state.
    public func accounts() throws -> [NotesAccount] {
        let ids = try pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM accounts ORDER BY created, id") }
        return try ids.map { id in
            let account = AccountID(rawValue: id)
            let row = try pool.read { db in try AccountRow.fetch(account, db) }
            return NotesAccount(id: account, name: row.name, passphrase: try passphraseStatus(account: account))
        }
    }

    // MARK: Folders

    /// The account's folders, by name.
    public func folders(account: AccountID = .local) throws -> [Folder] {
        let sealing = try sealing()
        return try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT f.id, f.sealed_name, (SELECT COUNT(*) FROM notes n WHERE n.folder_id = f.id AND n.deleted IS NULL) AS count
                    FROM folders f WHERE f.account_id = ?
                    """, arguments: [account.rawValue]
            ).map { row in
                let id: String = row["id"]
                return Folder(
                    id: id, name: try sealing.openText(row["sealed_name"], table: "folders", id: id, column: "name"),
                    noteCount: row["count"])
            }
        }.sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
    }

    /// Creates a folder, or returns the one of that name.
    @discardableResult
    public func createFolder(named name: String, account: AccountID = .local) throws -> Folder {
        let sealing = try sealing()
        let id = try pool.write { db in try folderID(named: name, account: account, creating: true, db, sealing)! }
        changes.publish(NoteChange(kind: .folders, noteID: nil, revision: nil, accounts: [account]))
        return try folders(account: account).first { $0.id == id }!
    }

    /// Deletes an empty folder.
    public func deleteFolder(named name: String, account: AccountID = .local) throws {
        let sealing = try sealing()
        try pool.write { db in
            guard let id = try folderID(named: name, account: account, creating: false, db, sealing) else {
                throw NotesError.notFound("folder \"\(name.prefix(64))\"")
            }
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notes WHERE folder_id = ? AND deleted IS NULL", arguments: [id]) ?? 0
            guard count == 0 else {
                throw NotesError.invalid(
                    "folder \"\(name.prefix(64))\" holds \(count) \(count == 1 ? "note" : "notes"): move or delete \(count == 1 ? "it" : "them") first"
                )
            }
            try removeEmptyFolder(id, db)
        }
        purgeRemovedPages()
        changes.publish(NoteChange(kind: .folders, noteID: nil, revision: nil, accounts: [account]))
    }

    /// Deletes folder `id`, which holds no note outside Recently Deleted: those in it come back
    /// to no folder.
    func removeEmptyFolder(_ id: String, _ db: Database) throws {
        try db.execute(sql: "UPDATE notes SET folder_id = NULL WHERE folder_id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM folders WHERE id = ?", arguments: [id])
    }

    /// Deletes folder `id` of `account` with what it holds, in one step: its notes move out of it
    /// (into no folder; those not in Recently Deleted count as modified), each announced as
    /// changed, and the folders too.
    /// - Parameters:
    ///   - id: the folder.
    ///   - account: the owner.
    /// - Throws: ``NotesError/notFound(_:)`` for a folder that is not the account's.
    public func deleteFolder(id: String, account: AccountID) throws {
        let moved = try pool.write { db -> [String] in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM folders WHERE id = ? AND account_id = ?", arguments: [id, account.rawValue]) != nil else {
                throw NotesError.notFound("folder \(id.prefix(64))")
            }
            let moved = try String.fetchAll(db, sql: "SELECT id FROM notes WHERE folder_id = ?", arguments: [id])
            try db.execute(
                sql: """
                    UPDATE notes SET folder_id = NULL, modified = CASE WHEN deleted IS NULL THEN ? ELSE modified END WHERE folder_id = ?
                    """, arguments: [now.timeIntervalSince1970, id])
            try db.execute(sql: "DELETE FROM folders WHERE id = ?", arguments: [id])
            return moved
        }
        purgeRemovedPages()
        for note in moved { announce(.changed, note: note) }
        changes.publish(NoteChange(kind: .folders, noteID: nil, revision: nil, accounts: [account]))
    }

    /// The id of the folder called `name` (names are sealed, so they are compared after opening).
    func folderID(named name: String, account: AccountID, creating: Bool, _ db: Database, _ sealing: ContentSealing) throws -> String? {
        try NoteRules.validateFolderName(name)
        for row in try Row.fetchAll(db, sql: "SELECT id, sealed_name FROM folders WHERE account_id = ?", arguments: [account.rawValue]) {
            let id: String = row["id"]
            if try sealing.openText(row["sealed_name"], table: "folders", id: id, column: "name") == name { return id }
        }
        guard creating else { return nil }
        let id = UUID().uuidString.lowercased()
        try db.execute(
            sql: "INSERT INTO folders (id, account_id, sealed_name, created) VALUES (?, ?, ?, ?)",
            arguments: [id, account.rawValue, try sealing.sealText(name, table: "folders", id: id, column: "name"), now.timeIntervalSince1970])
        return id
    }

    // MARK: Notes

    /// Creates an unlocked note.
    @discardableResult
    public func createNote(_ draft: NoteDraft, account: AccountID = .local) throws -> NoteSummary {
        try NoteRules.validate(draft.body, limit: NoteLimits.bodyBytes, what: "body")
        let title = try NoteRules.title(draft.title, body: draft.body)
        let sealing = try sealing()
        let id = UUID().uuidString.lowercased()
        let timestamp = now.timeIntervalSince1970
        let created = try pool.write { db in
            _ = try AccountRow.fetch(account, db)
            let folder = try draft.folder.map { try folderID(named: $0, account: account, creating: true, db, sealing)! }
            try db.execute(
                sql: """
                    INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, sealed_title, sealed_body)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    id, account.rawValue, folder, timestamp, timestamp, draft.isPinned,
                    try sealing.sealText(title, table: "notes", id: id, column: "title"),
                    try sealing.sealText(draft.body, table: "notes", id: id, column: "body"),
                ])
            return try summary(of: NoteRow.fetch(id, db), db, sealing)
        }
        index.upsert(.init(noteID: id, accountID: account.rawValue, title: title, body: draft.body))
        announce(.created, note: id)
        return created
    }

    /// The account's notes (optionally one folder's), pinned first, then most recently modified.
    public func notes(account: AccountID = .local, folder: String? = nil) throws -> [NoteSummary] {
        let sealing = try sealing()
        return try pool.read { db in
            var sql = "SELECT \(NoteRow.summaryColumns) FROM notes WHERE account_id = ? AND deleted IS NULL"
            var arguments: StatementArguments = [account.rawValue]
            if let folder {
                guard let id = try folderID(named: folder, account: account, creating: false, db, sealing) else {
                    throw NotesError.notFound("folder \"\(folder.prefix(64))\"")
                }
                sql += " AND folder_id = ?"
                arguments += [id]
            }
            sql += " ORDER BY pinned DESC, modified DESC, id"
            var reader = NoteSummaryReader(self, db, sealing)
            return try reader.summaries(of: Row.fetchAll(db, sql: sql, arguments: arguments).map(NoteRow.init(summaryRow:)))
        }
    }

    /// One note's summary, without opening it.
    public func summary(ofNote id: String) throws -> NoteSummary {
        let sealing = try sealing()
        return try pool.read { db in try summary(of: NoteRow.fetch(id, db), db, sealing) }
    }

    /// A note with its body and attachments. A locked note needs its passphrase, unless a
    /// secure session for it is open; it throws ``NotesError/passphraseRequired(_:)`` when neither.
    public func openNote(_ id: String, passphrase: Passphrase? = nil) throws -> OpenedNote {
        let sealing = try sealing()
        let row = try pool.read { db in try NoteRow.fetch(id, db) }
        let body: String
        if row.isLocked {
            let noteKey = try noteKey(of: row, passphrase: passphrase, sealing)
            body = try lockedBody(of: row, noteKey: noteKey, sealing)
        } else {
            body = try sealing.noteLayer(row).openText(row.sealedBody ?? Data(), table: "notes", id: row.id, column: "body")
        }
        return try pool.read { db in
            OpenedNote(summary: try summary(of: row, db, sealing), body: body, attachments: try attachmentInfos(of: row.id, db, sealing))
        }
    }

    /// Changes a note's title, body, pin or folder. Changing a locked note's body needs its
    /// passphrase or an open session; the new body is sealed under the same note key.
    /// - Returns: the note as it is now (see ``saveNote(_:_:passphrase:by:)`` for what became of
    ///   an edit made from an older revision).
    @discardableResult
    public func editNote(_ id: String, _ changes: NoteChanges, passphrase: Passphrase? = nil) throws -> NoteSummary {
        try saveNote(id, changes, passphrase: passphrase).note
    }

    /// Saves an edit of note `id` — its title, body, pin or folder — and says what became of it.
    /// When `changes.base` names an older revision than the stored one, the new title and body
    /// are merged with what changed meanwhile (``ThreeWayMerge``); when both changed the same
    /// lines, the note keeps the stored version and the edit becomes a conflict copy. Nothing
    /// is ever overwritten silently. A locked note's body needs its passphrase or an open
    /// session, and is sealed under the same note key.
    /// - Parameters:
    ///   - id: the note.
    ///   - changes: what to change, and the revision it was made from.
    ///   - passphrase: a locked note's passphrase, when no secure session holds it.
    ///   - editor: who saves, to name the conflict copy.
    /// - Returns: saved, merged (with the merged body) or kept as a conflict copy.
    /// - Throws: `notFound`, `invalid` (bad input, or a note in Recently Deleted),
    ///   `wrongLockState` (locked or unlocked meanwhile), `passphraseRequired`.
    @discardableResult
    public func saveNote(_ id: String, _ changes: NoteChanges, passphrase: Passphrase? = nil, by editor: AccountID? = nil) throws -> NoteSaveOutcome {
        if let title = changes.title { try NoteRules.validate(title, limit: NoteLimits.titleBytes, what: "title", allowEmpty: false) }
        if let body = changes.body { try NoteRules.validate(body, limit: NoteLimits.bodyBytes, what: "body") }
        let sealing = try sealing()
        let before = try pool.read { db in try NoteRow.fetch(id, db) }
        // Derive before the write transaction: PBKDF2 must not hold the database.
        let noteKey = try (before.isLocked && changes.body != nil) ? noteKey(of: before, passphrase: passphrase, sealing) : nil
        let (outcome, indexBody, copyEntry) = try pool.write { db -> (NoteSaveOutcome, String?, SearchIndex.Entry?) in
            let row = try NoteRow.fetch(id, db)
            guard row.isLocked == before.isLocked else { throw NotesError.wrongLockState("note \(id) was locked or unlocked meanwhile; try again") }
            try requireNotDeleted(row)
            // A synced note another account shares with this one: its pin and folder are its
            // owner's, as in the web client (the server would set them back).
            if try SharingSyncTables.isSharedWith(id, db) {
                try NoteAccess.participant.checkEdit(pinning: changes.isPinned != nil, movingFolder: changes.folder != nil)
            }
            let layer = try sealing.noteLayer(row)
            var content = NoteContent(title: changes.title, body: changes.body)
            var kind = NoteSaveOutcome.Kind.saved
            var copy: (NoteSummary, SearchIndex.Entry)?
            if let base = changes.base, base.revision != row.revision, content.title != nil || content.body != nil {
                let stored = NoteContent(
                    title: try layer.openText(row.sealedTitle, table: "notes", id: id, column: "title"),
                    body: content.body == nil ? nil : try storedBody(of: row, noteKey: noteKey, sealing))
                if let merged = content.merged(into: stored, base: base) {
                    content = merged
                    kind = .merged
                } else {
                    // The copy holds the whole edit: what it left unchanged comes from the note.
                    if row.isLocked && noteKey == nil { throw NotesError.staleRevision(current: row.revision) }
                    let whole = NoteContent(title: stored.title, body: try stored.body ?? storedBody(of: row, noteKey: noteKey, sealing))
                    copy = try conflictCopy(of: row, content: content.filled(from: whole), noteKey: noteKey, editor: editor, db, sealing)
                    content = NoteContent()
                    kind = .conflictCopy
                }
            }
            // Only an edit of the text is a modification: pinning or moving a note keeps its place in
            // the list, as in Apple Notes (the revision still counts the change).
            var assignments: [String] = []
            var arguments: StatementArguments = []
            if content.title != nil || content.body != nil {
                assignments.append("modified = ?")
                arguments += [now.timeIntervalSince1970]
            }
            if let title = content.title {
                assignments.append("sealed_title = ?")
                arguments += [try layer.sealText(title, table: "notes", id: id, column: "title")]
            }
            if let pinned = changes.isPinned {
                assignments.append("pinned = ?")
                arguments += [pinned]
            }
            if let folder = changes.folder {
                assignments.append("folder_id = ?")
                arguments += [try folder.map { try folderID(named: $0, account: AccountID(rawValue: row.accountID), creating: true, db, sealing)! }]
            }
            if let body = content.body {
                if let noteKey {
                    let sealed = try LockedNoteCrypto.sealBody(Data(body.utf8), with: noteKey)
                    assignments += ["crypto_iv = ?", "crypto_tag = ?", "sealed_ciphertext = ?", "body_format = ?"]
                    arguments += [
                        sealed.iv, sealed.tag, try sealing.seal(sealed.ciphertext, table: "notes", id: id, column: "ciphertext"),
                        BodyFormat.text.rawValue,
                    ]
                } else {
                    assignments.append("sealed_body = ?")
                    arguments += [try layer.sealText(body, table: "notes", id: id, column: "body")]
                }
            }
            if !assignments.isEmpty {
                arguments += [id]
                try db.execute(sql: "UPDATE notes SET \(assignments.joined(separator: ", ")) WHERE id = ?", arguments: arguments)
            }
            let updated = try NoteRow.fetch(id, db)
            let indexBody = updated.isLocked ? nil : try layer.openText(updated.sealedBody ?? Data(), table: "notes", id: id, column: "body")
            let outcome = NoteSaveOutcome(
                kind: kind, note: try summary(of: updated, db, sealing), mergedBody: kind == .merged ? content.body : nil,
                conflictCopy: copy?.0)
            return (outcome, indexBody, copy?.1)
        }
        index.upsert(.init(noteID: id, accountID: before.accountID, title: outcome.note.title, body: indexBody))
        if let copyEntry { index.upsert(copyEntry) }
        purgeRemovedPages()
        announce(.changed, note: id)
        if let copy = outcome.conflictCopy { announce(.created, note: copy.id) }
        return outcome
    }

    /// Deletes a note and its attachments for good (from Recently Deleted, or at once);
    /// afterwards nothing of it remains in the home. Deleting as people do is
    /// ``moveToRecentlyDeleted(_:)``.
    public func deleteNote(_ id: String) throws {
        try deleteNotes { db in [try NoteRow.fetch(id, db)] }
    }

    /// Deletes for good, in one transaction, the notes `chosen` picks inside it — so a note
    /// another deleter took first (the minute's expiry, an emptied Recently Deleted) is simply
    /// not picked — then removes their attachment files and tells those who could see them.
    /// - Parameter chosen: the notes to delete, read in the deleting transaction.
    /// - Returns: how many notes were deleted.
    @discardableResult
    func deleteNotes(_ chosen: (Database) throws -> [NoteRow]) throws -> Int {
        let listening = changes.hasListeners
        let (deleted, files) = try pool.write { db -> ([(id: String, audience: Set<AccountID>)], [String]) in
            var deleted: [(id: String, audience: Set<AccountID>)] = []
            var files: [String] = []
            for row in try chosen(db) {
                deleted.append((row.id, listening ? try audience(of: row, db) : []))
                files += try deleteNoteRows(row, db)
            }
            return (deleted, files)
        }
        for note in deleted { index.remove(noteID: note.id) }
        for file in files { AttachmentFile.remove(file, in: attachmentsFolder) }
        guard !deleted.isEmpty else { return 0 }
        purgeRemovedPages()
        if listening {
            for note in deleted { changes.publish(NoteChange(kind: .deletedForGood, noteID: note.id, revision: nil, accounts: note.audience)) }
        }
        return deleted.count
    }

    /// Deletes note `row`'s rows — its attachments', participants' and its own — and its
    /// imported passphrase when no other note uses it.
    /// - Returns: the attachment files to remove once the transaction commits.
    func deleteNoteRows(_ row: NoteRow, _ db: Database) throws -> [String] {
        let files = try String.fetchAll(db, sql: "SELECT file FROM attachments WHERE note_id = ?", arguments: [row.id])
        try db.execute(sql: "DELETE FROM attachments WHERE note_id = ?", arguments: [row.id])
        try db.execute(sql: "DELETE FROM participants WHERE note_id = ?", arguments: [row.id])
        try db.execute(sql: "DELETE FROM sync_note_sharing WHERE local_id = ?", arguments: [row.id])
        try db.execute(sql: "DELETE FROM notes WHERE id = ?", arguments: [row.id])
        if let passphraseID = row.passphraseID { try removeUnusedImportedPassphrase(passphraseID, db) }
        return files
    }

    /// Notes whose title — or, for unlocked notes, body — contains every word of `text`
    /// (word prefixes, case and diacritics ignored): more of the words in the title first, then
    /// the most recently modified (``SearchWords``). Locked notes are found by their title only.
    /// - Throws: ``NotesError/invalid(_:)`` for an empty or too long text, or one without a word.
    public func search(_ text: String, account: AccountID = .local) throws -> [NoteSummary] {
        let words = try SearchWords.query(text)
        let sealing = try sealing()
        try index.buildIfNeeded {
            try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM notes WHERE deleted IS NULL").map { row in
                    let note = NoteRow(row: row)
                    return .init(
                        noteID: note.id, accountID: note.accountID, title: try title(of: note, sealing),
                        body: note.isLocked
                            ? nil : try sealing.noteLayer(note).openText(note.sealedBody ?? Data(), table: "notes", id: note.id, column: "body"))
                }
            }
        }
        let ids = try index.search(words, accountID: account.rawValue)
        let found = try pool.read { db in
            let statement = try db.makeStatement(sql: "SELECT \(NoteRow.summaryColumns) FROM notes WHERE id = ?")
            var reader = NoteSummaryReader(self, db, sealing)
            return try reader.summaries(of: ids.compactMap { id in try Row.fetchOne(statement, arguments: [id]).map(NoteRow.init(summaryRow:)) })
        }
        // Ranked as every store ranks (``SearchWords/ranked(_:)``), not by FTS5's bm25.
        let byID = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let order = SearchWords.ranked(
            found.map {
                (id: $0.id, titleMatches: SearchWords.titleMatches(of: words, title: SearchWords.words(of: $0.title)), modified: $0.modified)
            })
        return order.compactMap { byID[$0] }
    }

}
