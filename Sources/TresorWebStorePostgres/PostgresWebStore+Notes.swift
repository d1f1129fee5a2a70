import Foundation
import PostgresNIO
import TresorNotesDomain

// Notes: access, lists, create, open, and saves with revisions (docs/FORMAT.md, "Revisions and
// merges"): a save made from an older revision is merged (``NoteContent/merged(into:base:)``) or
// kept whole as a conflict copy — decided under the note's row lock, so of two saves from two
// instances the second always sees the first.
extension PostgresWebStore: FoldersAndNotesStore {
    func access(toNote id: String, for account: AccountID, includingDeleted: Bool) async throws -> NoteAccess {
        try await db.read { [self] connection in try await access(toNote: id, for: account, includingDeleted: includingDeleted, connection) }
    }

    /// What `account` may do with note `id` (a note it may not see is `notFound`, as a missing one).
    func access(toNote id: String, for account: AccountID, includingDeleted: Bool, _ connection: PostgresConnection) async throws -> NoteAccess {
        guard
            let (owner, deleted, participates) = try await connection.row(
                """
                SELECT n.account_id, n.deleted,
                       EXISTS (SELECT 1 FROM participants p WHERE p.note_id = n.id AND p.account_id = \(account.rawValue))
                FROM notes n WHERE n.id = \(id)
                """, logger, as: (String, Double?, Bool).self)
        else { throw NotesError.notFound("note \(id.prefix(64))") }
        if deleted != nil {
            guard owner == account.rawValue else { throw NotesError.notFound("note \(id.prefix(64))") }
            guard includingDeleted else { throw NotesError.invalid("note \(id.prefix(64)) is in Recently Deleted: restore it first") }
        }
        if owner == account.rawValue { return .owner }
        guard participates else { throw NotesError.notFound("note \(id.prefix(64))") }
        return .participant
    }

    func notes(account: AccountID, folderID: String?) async throws -> [NoteSummary] {
        try await db.read { [self] connection in
            if let folderID {
                try await requireFolder(folderID, of: account, connection)
                return try await summaries(
                    selecting: """
                        SELECT \(unescaped: StoredNote.summaryColumns) FROM notes
                        WHERE account_id = \(account.rawValue) AND deleted IS NULL AND folder_id = \(folderID)
                        ORDER BY pinned DESC, modified DESC, id
                        """, connection)
            }
            return try await summaries(
                selecting: """
                    SELECT \(unescaped: StoredNote.summaryColumns) FROM notes
                    WHERE account_id = \(account.rawValue) AND deleted IS NULL ORDER BY pinned DESC, modified DESC, id
                    """, connection)
        }
    }

    func notesShared(with account: AccountID) async throws -> [NoteSummary] {
        try await db.read { [self] connection in
            try await summaries(
                selecting: """
                    SELECT \(unescaped: StoredNote.summaryColumns) FROM notes
                    WHERE deleted IS NULL AND id IN (SELECT note_id FROM participants WHERE account_id = \(account.rawValue))
                    ORDER BY modified DESC, id
                    """, connection)
        }
    }

    func previews(ofNotes ids: [String], matching query: [String]) async throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        return try await db.read { [self, logger] connection in
            var previews: [String: String] = [:]
            for try await row in try await connection.query(
                "SELECT id, sealed_title, sealed_body FROM notes WHERE passphrase_id IS NULL AND id = ANY(\(ids))", logger: logger)
            {
                let (id, title, body) = try row.decode((String, Data, Data?).self)
                let text = try sealing.openText(body ?? Data(), "notes", id, "body")
                let openTitle = try sealing.openText(title, "notes", id, "title")
                if let preview = NoteRules.preview(body: text, title: openTitle, matching: query) { previews[id] = preview }
            }
            return previews
        }
    }

    func summary(ofNote id: String) async throws -> NoteSummary {
        try await db.read { [self] connection in try await summary(note(id, connection), connection) }
    }

    func openNote(_ id: String) async throws -> OpenedNote {
        try await db.read { [self] connection in
            let row = try await note(id, connection)
            guard !row.isLocked else { throw NotesError.wrongLockState("note \(id) is locked") }
            let attachments = try await attachmentInfos(of: id, connection)
            return OpenedNote(
                summary: try await summaries([row], attachmentCounts: [id: attachments.count], connection)[0], body: try openBody(row),
                attachments: attachments)
        }
    }

    func createNote(_ draft: NoteDraft, account: AccountID, quota: StorageQuota?) async throws -> NoteSummary {
        try NoteRules.validate(draft.body, limit: NoteLimits.bodyBytes, what: "body")
        _ = try NoteRules.title(draft.title, body: draft.body)
        return try await db.transaction { [self] connection in
            try await lockAccount(account, connection)
            try await check(quota, account: account, connection)
            let id = try await insertNote(draft, account: account, connection)
            return try await summary(note(id, connection), connection)
        }
    }

    /// Inserts a new note of `account` made from `draft` and announces it, in the caller's
    /// transaction (which holds the account's row lock and has checked the quota).
    /// - Returns: its id.
    func insertNote(_ draft: NoteDraft, account: AccountID, made edit: SyncedEdit? = nil, _ connection: PostgresConnection) async throws
        -> String
    {
        try NoteRules.validate(draft.body, limit: NoteLimits.bodyBytes, what: "body")
        let title = try NoteRules.title(draft.title, body: draft.body)
        let id = UUID().uuidString.lowercased()
        let sealedTitle = try sealing.sealText(title, "notes", id, "title")
        let sealedBody = try sealing.sealText(draft.body, "notes", id, "body")
        let folder = try await draft.folder.asyncMap { try await folderID(named: $0, account: account, creating: true, connection)! }
        let dates = dates(of: edit)
        try await connection.run(
            """
            INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, sealed_title, sealed_body)
            VALUES (\(id), \(account.rawValue), \(folder), \(dates.created), \(dates.modified), \(draft.isPinned), \(sealedTitle), \(sealedBody))
            """, logger)
        try await announce(.created, note: id, connection)
        return id
    }

    func saveNote(_ id: String, _ changes: NoteChanges, by editor: AccountID, quota: StorageQuota?) async throws -> NoteSaveOutcome {
        try await db.transaction { [self] connection in try await saveNote(id, changes, by: editor, quota: quota, connection) }
    }

    /// ``saveNote(_:_:by:quota:)`` in the caller's transaction.
    func saveNote(
        _ id: String, _ changes: NoteChanges, by editor: AccountID, edit: SyncedEdit? = nil, quota: StorageQuota?,
        _ connection: PostgresConnection
    ) async throws -> NoteSaveOutcome {
        if let title = changes.title { try NoteRules.validate(title, limit: NoteLimits.titleBytes, what: "title", allowEmpty: false) }
        if let body = changes.body { try NoteRules.validate(body, limit: NoteLimits.bodyBytes, what: "body") }
        let row = try await noteForWrite(id, connection)
        guard !row.isDeleted else { throw NotesError.invalid("note \(id) is in Recently Deleted: restore it first") }
        if let passphraseID = row.passphraseID, changes.body != nil {
            // The server holds no note key: a locked body is sealed in the browser and saved
            // with `replaceLockedBody` (the embedded store answers the same).
            throw NotesError.passphraseRequired(try await lockInfo(passphraseID, connection))
        }
        let owner = AccountID(rawValue: row.accountID)
        try await check(quota, account: owner, connection)
        var content = NoteContent(title: changes.title, body: changes.body)
        var kind = NoteSaveOutcome.Kind.saved
        var copy: NoteSummary?
        if let base = changes.base, base.revision != row.revision, content.title != nil || content.body != nil {
            let stored = NoteContent(title: try openTitle(row), body: content.body == nil ? nil : try openBody(row))
            if let merged = content.merged(into: stored, base: base) {
                content = merged
                kind = .merged
            } else {
                // A locked note's ciphertext cannot be merged here: the browser merges.
                if row.isLocked { throw NotesError.staleRevision(current: row.revision) }
                // The copy holds the whole edit: what it left unchanged comes from the note.
                let whole = NoteContent(title: stored.title, body: try stored.body ?? openBody(row))
                let filled = content.filled(from: whole)
                let copyID = try await insertConflictCopy(
                    of: row, title: filled.title ?? "", body: filled.body ?? "", locked: nil, editor: editor, edit: edit, connection)
                copy = try await summary(note(copyID, connection), connection)
                content = NoteContent()
                kind = .conflictCopy
            }
        }
        let folderChange: String?? = try await changes.folder.asyncMap { name in
            try await name.asyncMap { try await folderID(named: $0, account: owner, creating: true, connection)! }
        }
        // A device's change carries the note's date there, which an attachment added or removed
        // there moved with no text to show for it: the note takes it (never moving back).
        let datedThere = kind != .conflictCopy && edit?.editedAt != nil && time(of: edit) > row.modified
        if content.title != nil || content.body != nil || changes.isPinned != nil || folderChange != nil || datedThere {
            let sealedTitle = try content.title.map { try sealing.sealText($0, "notes", id, "title") }
            let sealedBody = try content.body.map { try sealing.sealText($0, "notes", id, "body") }
            let movesFolder = folderChange != nil
            let folder: String? = folderChange ?? nil
            // Only an edit of the text is a modification: pinning or moving keeps the list's order.
            // A device's edit is dated when it was made, never moving the note's time back.
            let edits = content.title != nil || content.body != nil || datedThere
            try await connection.run(
                """
                UPDATE notes SET modified = CASE WHEN \(edits) THEN GREATEST(modified, \(time(of: edit))) ELSE modified END, sealed_title = COALESCE(\(sealedTitle), sealed_title),
                    sealed_body = COALESCE(\(sealedBody), sealed_body), pinned = COALESCE(\(changes.isPinned), pinned),
                    folder_id = CASE WHEN \(movesFolder) THEN \(folder) ELSE folder_id END
                WHERE id = \(id)
                """, logger)
        }
        try await announce(.changed, note: id, connection)
        if let copy { try await announce(.created, note: copy.id, connection) }
        return NoteSaveOutcome(
            kind: kind, note: try await summary(note(id, connection), connection), mergedBody: kind == .merged ? content.body : nil,
            conflictCopy: copy)
    }

    /// Whom a conflict copy of `row` is from (``NoteRules/conflictCopyEditor(login:device:isOwner:)``).
    func copyEditor(_ editor: AccountID, device: String?, of row: StoredNote, _ connection: PostgresConnection) async throws -> String? {
        NoteRules.conflictCopyEditor(
            login: try await loginName(of: editor, connection), device: device, isOwner: editor.rawValue == row.accountID)
    }

    /// Inserts the conflict copy of `row` (docs/FORMAT.md, "Revisions and merges"): a new note of
    /// the same owner, folder and participants, titled "… (conflict copy from NAME)", holding
    /// `body` — or, for a locked note, `locked`, sealed in the browser under the note's own key
    /// (the copy shares the note's wrapped key, passphrase and note proof). `edit`: the device the
    /// copy's text came from, which names it and dates it.
    /// - Returns: the copy's id.
    func insertConflictCopy(
        of row: StoredNote, title: String, body: String, locked: (iv: Data, tag: Data, ciphertext: Data)?, editor: AccountID,
        edit: SyncedEdit? = nil, _ connection: PostgresConnection
    ) async throws -> String {
        let id = UUID().uuidString.lowercased()
        // A device's edit: dated when it was made, as the note would have been (a device long
        // offline does not put its copies at the top of every list); a browser's: now.
        let timestamp = time(of: edit)
        let copyTitle = NoteRules.conflictCopyTitle(title, editorName: try await copyEditor(editor, device: edit?.device, of: row, connection))
        let sealedTitle = try sealing.sealText(copyTitle, "notes", id, "title")
        let sealedBody = try locked == nil ? sealing.sealText(body, "notes", id, "body") : nil
        let sealedCiphertext = try locked.map { try sealing.seal($0.ciphertext, "notes", id, "ciphertext") }
        let isLocked = locked != nil
        try await connection.run(
            """
            INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, sealed_title, sealed_body,
                               passphrase_id, crypto_salt, crypto_iterations, crypto_wrapped_key, crypto_iv, crypto_tag,
                               sealed_ciphertext, body_format, note_proof_hash)
            VALUES (\(id), \(row.accountID), \(row.folderID), \(timestamp), \(timestamp), FALSE, \(sealedTitle), \(sealedBody),
                    \(isLocked ? row.passphraseID : nil), \(isLocked ? row.salt : nil), \(isLocked ? row.iterations : nil),
                    \(isLocked ? row.wrappedKey : nil), \(locked?.iv), \(locked?.tag), \(sealedCiphertext), 'text',
                    \(isLocked ? row.noteProofHash : nil))
            """, logger)
        try await connection.run(
            "INSERT INTO participants (note_id, account_id, added) SELECT \(id), account_id, added FROM participants WHERE note_id = \(row.id)",
            logger)
        return id
    }
}

extension Optional {
    /// `map` with an async transform.
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
