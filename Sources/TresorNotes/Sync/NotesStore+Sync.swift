import Foundation
import GRDB
import TresorNotesDomain

// Notes sync (docs/SYNC.md, "Notes"): the local account's notes ("On My Computer") and the sync
// account's web notes are one set. Every change of a local note is recorded for sending in the
// transaction of the change itself — by trigger, so no code path escapes it — and what arrives
// from the server is applied with the recording held off. Each synced note keeps its server id,
// the server's revision it holds and that version's content, sealed: the base its next change
// names, from which the server merges a late edit.

/// One version of a note as sync compares it: what the server merges from and applies.
public struct NoteSyncContent: Sendable, Equatable, Codable {
    public var title: String
    public var body: String
    public var folder: String?
    public var isPinned: Bool

    public init(title: String, body: String, folder: String?, isPinned: Bool) {
        self.title = title
        self.body = body
        self.folder = folder
        self.isPinned = isPinned
    }
}

/// A note of the sync account as the server holds it now.
public struct SyncedNoteState: Sendable, Equatable {
    public var serverID: String
    public var revision: Int64
    public var content: NoteSyncContent
    public var created: Date
    public var modified: Date
    /// Since when it is in Recently Deleted.
    public var deleted: Date?
    /// A locked note's sealed record (its `content.body` is empty).
    public var locked: SyncedLockedRecord?
    /// Its attachments as the server lists them; nil when the server does not list them.
    public var attachments: [SyncedAttachment]?
    /// Who shares it; nil for a note shared with nobody.
    public var sharing: SyncedNoteSharing?

    public init(
        serverID: String, revision: Int64, content: NoteSyncContent, created: Date, modified: Date, deleted: Date?,
        locked: SyncedLockedRecord? = nil, attachments: [SyncedAttachment]? = nil, sharing: SyncedNoteSharing? = nil
    ) {
        self.sharing = sharing
        self.locked = locked
        self.attachments = attachments
        self.serverID = serverID
        self.revision = revision
        self.content = content
        self.created = created
        self.modified = modified
        self.deleted = deleted
    }
}

/// A change of a local note waiting to go to the server.
public struct PendingNoteSync: Sendable {
    /// The local note.
    public var localID: String
    /// The server's id, once the note has one.
    public var serverID: String?
    /// The server's revision this device holds, and its content: what the change was made from.
    public var base: (revision: Int64, content: NoteSyncContent)?
    /// The ``TresorNotesDomain/SyncedLockedRecord/textDigest`` of that version's locked record,
    /// when it was locked.
    public var baseLockedDigest: Data?
    /// The note now; nil when it was deleted for good here.
    public var current: NoteSyncContent?
    /// Whether it is in Recently Deleted here.
    public var inRecentlyDeleted: Bool
    /// A locked note.
    public var isLocked: Bool
    /// A locked note's sealed record; nil for an Apple Notes note of a shape that cannot travel
    /// (it stays here).
    public var lockedRecord: SyncedLockedRecord?
    /// When the note was made and last edited here (nil: gone): the server keeps these dates.
    public var created: Date?
    public var modified: Date?
    /// An unlocked note whose change was made from a version that was not locked (no lock was
    /// removed here): sent with ``TresorSyncProtocol``'s `refuseIfLockedSince`, so that should
    /// the note have been locked elsewhere since, its text does not stay on the server unlocked.
    public var madeUnlocked = false
    /// The server answered that the note was locked elsewhere since this change was made from it,
    /// and the note is unlocked here and not in Recently Deleted: the change stays here
    /// (``holdUntilLocked(_:)``); a deletion goes, and gives the edit up.
    public var heldUntilLocked = false
    /// The local revision read (nil: gone), so a change made while this one travelled is not lost.
    var localRevision: Int64?
}

extension NotesStore {
    /// The server's notes counter this device has applied up to, for sync account `account`.
    /// Another account than the one synced before starts afresh: the links to the other
    /// server's notes are forgotten, and every local note goes to the new account as new.
    /// - Parameter account: the sync account, as server and name.
    /// - Returns: the counter (0 for an account never synced).
    public func noteSyncCursor(account: String) throws -> UInt64 {
        try pool.write { db in
            let row = try Row.fetchOne(db, sql: "SELECT counter, account FROM sync_note_cursor WHERE id = 1")
            if let row, row["account"] as String == account { return UInt64(row["counter"] as Int64) }
            try db.execute(sql: "DELETE FROM sync_note_links; DELETE FROM sync_note_outbox; DELETE FROM sync_passphrase; DELETE FROM sync_folders")
            try db.execute(sql: "DELETE FROM sync_note_sharing; DELETE FROM sync_note_deletions_held; DELETE FROM sync_note_held_until_locked")
            try AttachmentSyncTables.forgetAll(db)
            try db.execute(sql: "INSERT OR REPLACE INTO sync_note_cursor (id, counter, account) VALUES (1, 0, ?)", arguments: [account])
            return 0
        }
    }

    /// How many local notes wait to go to the server.
    public func noteChangesWaiting() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_note_outbox") ?? 0 }
    }

    /// The local changes waiting to go, in local id order after `after`. Local notes never sent
    /// (made before the outbox, or before sync was turned on) are recorded once first.
    /// - Parameters:
    ///   - after: the last local id read (nil: from the start).
    ///   - limit: the most changes returned.
    /// - Returns: the changes.
    /// - Throws: ``NotesError/contentUnavailable`` while the keybag was never unlocked.
    public func pendingNoteSyncs(after: String?, limit: Int) throws -> [PendingNoteSync] {
        let sealing = try sealing()
        if after == nil {
            try pool.write { db in
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO sync_note_outbox (note_id)
                        SELECT id FROM notes WHERE account_id = 'local' AND id NOT IN (SELECT local_id FROM sync_note_links)
                        """)
            }
        }
        return try pool.read { db in
            let ids = try String.fetchAll(
                db, sql: "SELECT note_id FROM sync_note_outbox WHERE note_id > ? ORDER BY note_id LIMIT ?", arguments: [after ?? "", limit])
            return try ids.map { id in
                let link = try self.link(local: id, db, sealing)
                guard let row = try Row.fetchOne(db, sql: "SELECT * FROM notes WHERE id = ?", arguments: [id]).map(NoteRow.init(row:)) else {
                    return PendingNoteSync(
                        localID: id, serverID: link?.serverID, base: link.map { ($0.revision, $0.base) }, current: nil, inRecentlyDeleted: false,
                        isLocked: false, lockedRecord: nil, localRevision: nil)
                }
                var pending = PendingNoteSync(
                    localID: id, serverID: link?.serverID, base: link.map { ($0.revision, $0.base) }, baseLockedDigest: link?.lockedDigest,
                    current: try content(of: row, db, sealing),
                    inRecentlyDeleted: row.isDeleted, isLocked: row.isLocked, lockedRecord: try lockedRecord(of: row, db, sealing),
                    created: row.created, modified: row.modified, localRevision: row.revision)
                if let link, !row.isLocked {
                    // A lock removed here keeps the note key until the server answers: that change
                    // was made from a locked version.
                    let lockRemovedHere = try AttachmentSyncTables.keepsUnlockKey(ofNote: id, db)
                    pending.madeUnlocked = link.lockedDigest == nil && !lockRemovedHere
                    let held = try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_note_held_until_locked WHERE note_id = ?", arguments: [id]) == true
                    pending.heldUntilLocked = held && !row.isDeleted
                }
                return pending
            }
        }
    }

    /// Records what the server made of a pushed change, in one transaction: the note's server id
    /// and revision, the server's version applied here, the change taken out of the outbox. A
    /// note changed here again while the change travelled keeps its newer change waiting (and
    /// the base it was made from, so the server merges it).
    /// - Parameters:
    ///   - pending: the change sent.
    ///   - result: the note as the server holds it now; nil when it is deleted for good there.
    /// - Throws: ``NotesError/contentUnavailable``.
    public func recordNoteSynced(_ pending: PendingNoteSync, result: SyncedNoteState?) throws {
        let sealing = try sealing()
        let effects = try applying { db, effects in
            // The server answered: a lock removed here no longer needs its key, nor is an edit held.
            try AttachmentSyncTables.dropUnlockKey(ofNote: pending.localID, db)
            try db.execute(sql: "DELETE FROM sync_note_held_until_locked WHERE note_id = ?", arguments: [pending.localID])
            let row = try Row.fetchOne(db, sql: "SELECT * FROM notes WHERE id = ?", arguments: [pending.localID]).map(NoteRow.init(row:))
            let unchanged = row?.revision == pending.localRevision
            guard let result else {
                try db.execute(sql: "DELETE FROM sync_note_links WHERE local_id = ?", arguments: [pending.localID])
                if unchanged { try db.execute(sql: "DELETE FROM sync_note_outbox WHERE note_id = ?", arguments: [pending.localID]) }
                // Gone on the server while still here: a note shared with the account that it
                // left (deleted here), which the owner keeps.
                if unchanged, let row {
                    effects.removedFiles += try deleteNoteRows(row, db)
                    effects.removed.append(pending.localID)
                }
                return
            }
            if unchanged {
                try write(result, localID: pending.localID, over: row, db, sealing, &effects)
                try db.execute(sql: "DELETE FROM sync_note_outbox WHERE note_id = ?", arguments: [pending.localID])
            } else if pending.base == nil {
                try saveLink(local: pending.localID, result, db, sealing)
            }
        }
        finish(effects)
    }

    /// Holds `pending`'s unlocked edit here: the server refused it because another device locked
    /// the note since the version it was made from. It stays waiting, unsent, until the note is
    /// locked here too (``lockNotesHeldUntilLocked()``, or `tresor note lock`); the note keeps
    /// the version it was made from as its base, so the locked change becomes a locked conflict
    /// copy beside the note locked elsewhere.
    /// - Parameter pending: the refused change.
    public func holdUntilLocked(_ pending: PendingNoteSync) throws {
        try pool.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM notes WHERE id = ?", arguments: [pending.localID]) == true else { return }
            try db.execute(sql: "INSERT OR IGNORE INTO sync_note_held_until_locked (note_id) VALUES (?)", arguments: [pending.localID])
        }
    }

    /// How many notes' edits are held until locked (``holdUntilLocked(_:)``).
    public func notesHeldUntilLocked() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_note_held_until_locked") ?? 0 }
    }

    /// Locks each note whose edit is held until locked (``holdUntilLocked(_:)``) through the open
    /// session of the current passphrase; without one (or in Recently Deleted) they stay as they are.
    /// - Returns: how many were locked now.
    /// - Throws: ``NotesError/contentUnavailable``.
    public func lockNotesHeldUntilLocked() throws -> Int {
        let ids = try pool.read { db in try String.fetchAll(db, sql: "SELECT note_id FROM sync_note_held_until_locked ORDER BY note_id") }
        var locked = 0
        for id in ids {
            do {
                try lockNote(id)
                locked += 1
            } catch NotesError.contentUnavailable {
                throw NotesError.contentUnavailable
            } catch is NotesError {
                continue
            }
        }
        return locked
    }

    /// Applies a page of the server's notes and records its cursor, in one transaction. A note
    /// with a change of this device still waiting is left as it is: that change goes next, made
    /// from the version this device holds, and the server merges it. What runs for each note is
    /// a cached statement: a new device's first sync applies thousands.
    /// - Parameters:
    ///   - notes: each changed note by its server id: as it is now, or nil when deleted for good.
    ///   - cursor: the server's counter the page ends at.
    /// - Returns: how many notes changed here.
    /// - Throws: ``NotesError/contentUnavailable``.
    @discardableResult
    public func applySyncedNotes(_ notes: [(serverID: String, state: SyncedNoteState?)], cursor: UInt64) throws -> Int {
        let sealing = try sealing()
        var applied = 0
        let effects = try applying { db, effects in
            for (serverID, state) in notes {
                let localID = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT local_id FROM sync_note_links WHERE server_id = ?"), arguments: [serverID])
                if let localID, let listed = state?.attachments {
                    try AttachmentSyncTables.recordListing(listed, note: localID, db, sealing)
                }
                if let localID,
                    try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sync_note_outbox WHERE note_id = ?"), arguments: [localID]) == true
                {
                    // An edit held because the note was locked elsewhere goes once the lock is off there.
                    if let state, state.locked == nil {
                        try db.cachedStatement(sql: "DELETE FROM sync_note_held_until_locked WHERE note_id = ?").execute(arguments: [localID])
                    }
                    continue
                }
                let row = try localID.flatMap { try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM notes WHERE id = ?"), arguments: [$0]) }.map(
                    NoteRow.init(row:))
                guard let state else {
                    guard let localID else { continue }
                    // A note of this account deleted for good waits for the hold's judgement,
                    // once every page is in (``settleNoteDeletions(allow:)``).
                    if row != nil, try !SharingSyncTables.isSharedWith(localID, db) {
                        try NoteDeletionHoldTables.setAside(serverID, db)
                        continue
                    }
                    if let row {
                        try removeSyncedNote(row, db, &effects)
                        applied += 1
                    } else {
                        try db.execute(sql: "DELETE FROM sync_note_links WHERE local_id = ?", arguments: [localID])
                    }
                    continue
                }
                try NoteDeletionHoldTables.forget(serverID, db)
                if let row, let localID {
                    let held = try Int64.fetchOne(
                        db.cachedStatement(sql: "SELECT server_revision FROM sync_note_links WHERE local_id = ?"), arguments: [localID])
                    if let held, held >= state.revision { continue }
                    // Only its attachments changed (added or removed — maybe by this device, whose
                    // upload made a revision): nothing to write, its revision is recorded.
                    if try holds(state, row, db, sealing) {
                        if let locked = state.locked { try fillSyncedHint(of: locked, db, sealing) }
                        // Its date, though: an attachment added or removed elsewhere dated it there.
                        if state.modified > row.modified {
                            try db.execute(
                                sql: "UPDATE notes SET modified = ? WHERE id = ?", arguments: [state.modified.timeIntervalSince1970, localID])
                            effects.written.append((localID, false, Self.indexEntry(localID, state)))
                        }
                        try saveLink(local: localID, state, db, sealing)
                        // Or who shares it: a share or unshare counts the revision up, too.
                        try SharingSyncTables.record(state.sharing, localID: localID, db, sealing)
                        continue
                    }
                }
                let newID: String
                if let localID {
                    newID = localID
                } else {
                    let taken = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM notes WHERE id = ?"), arguments: [serverID]) == true
                    newID = taken ? UUID().uuidString.lowercased() : serverID
                }
                try write(state, localID: newID, over: row, db, sealing, &effects)
                if localID == nil, let listed = state.attachments { try AttachmentSyncTables.recordListing(listed, note: newID, db, sealing) }
                applied += 1
            }
            try db.execute(sql: "UPDATE sync_note_cursor SET counter = ? WHERE id = 1", arguments: [Int64(cursor)])
        }
        finish(effects)
        return applied
    }

    // MARK: Applying

    /// What applying changed, told once the transaction commits.
    struct NoteSyncEffects {
        var written: [(id: String, created: Bool, entry: SearchIndex.Entry)] = []
        var removed: [String] = []
        var removedFiles: [String] = []
    }

    /// Removes synced note `row` here, as deleted for good on the server: its link, rows and
    /// attachment files (once the transaction commits, ``finish(_:)``).
    func removeSyncedNote(_ row: NoteRow, _ db: Database, _ effects: inout NoteSyncEffects) throws {
        try db.execute(sql: "DELETE FROM sync_note_links WHERE local_id = ?", arguments: [row.id])
        effects.removedFiles += try deleteNoteRows(row, db)
        effects.removed.append(row.id)
    }

    /// Runs `body` in a write transaction in which the outbox triggers record nothing.
    func applying(_ body: (Database, inout NoteSyncEffects) throws -> Void) throws -> NoteSyncEffects {
        try pool.write { db in
            var effects = NoteSyncEffects()
            try db.execute(sql: "INSERT INTO sync_note_applying (id) VALUES (1)")
            try body(db, &effects)
            try db.execute(sql: "DELETE FROM sync_note_applying")
            return effects
        }
    }

    func finish(_ effects: NoteSyncEffects) {
        for id in effects.removed { index.remove(noteID: id) }
        for file in effects.removedFiles { AttachmentFile.remove(file, in: attachmentsFolder) }
        if !effects.removed.isEmpty { purgeRemovedPages() }
        for written in effects.written {
            index.upsert(written.entry)
            announce(written.created ? .created : .changed, note: written.id)
        }
    }

    /// Writes the server's version of a note into local note `localID` (made when `row` is nil),
    /// and links it.
    private func write(
        _ state: SyncedNoteState, localID: String, over row: NoteRow?, _ db: Database, _ sealing: ContentSealing, _ effects: inout NoteSyncEffects
    ) throws {
        let content = state.content
        let folder = try content.folder.map { try folderID(named: $0, account: .local, creating: true, db, sealing)! }
        let layer = try row.map { try sealing.noteLayer($0) } ?? sealing
        let title = try layer.sealText(content.title, table: "notes", id: localID, column: "title")
        let body = try state.locked == nil ? layer.sealText(content.body, table: "notes", id: localID, column: "body") : nil
        let deleted = state.deleted?.timeIntervalSince1970
        if let locked = state.locked {
            try writeLock(locked, localID: localID, exists: row != nil, db, sealing)
        } else if let row, let passphraseID = row.passphraseID {
            // The lock removed elsewhere: the body below replaces the sealed record.
            try db.execute(
                sql: """
                    UPDATE notes SET passphrase_id = NULL, crypto_salt = NULL, crypto_iterations = NULL, crypto_wrapped_key = NULL,
                        crypto_iv = NULL, crypto_tag = NULL, sealed_ciphertext = NULL, body_format = ?, note_proof_hash = NULL
                    WHERE id = ?
                    """, arguments: [BodyFormat.text.rawValue, localID])
            try removeUnusedImportedPassphrase(passphraseID, db)
        }
        if row == nil && state.locked != nil {
            try db.execute(
                sql: "UPDATE notes SET folder_id = ?, created = ?, modified = ?, pinned = ?, sealed_title = ?, deleted = ? WHERE id = ?",
                arguments: [
                    folder, state.created.timeIntervalSince1970, state.modified.timeIntervalSince1970, content.isPinned, title, deleted, localID,
                ])
        } else if row == nil {
            try db.cachedStatement(
                sql: """
                    INSERT INTO notes (id, account_id, folder_id, created, modified, pinned, sealed_title, sealed_body, deleted)
                    VALUES (?, 'local', ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                localID, folder, state.created.timeIntervalSince1970, state.modified.timeIntervalSince1970, content.isPinned, title, body,
                deleted,
            ])
        } else {
            try db.cachedStatement(
                sql: """
                    UPDATE notes SET folder_id = ?, modified = ?, pinned = ?, sealed_title = ?, sealed_body = ?, deleted = ? WHERE id = ?
                    """
            ).execute(arguments: [folder, state.modified.timeIntervalSince1970, content.isPinned, title, body, deleted, localID])
        }
        try saveLink(local: localID, state, db, sealing)
        try SharingSyncTables.record(state.sharing, localID: localID, db, sealing)
        if state.deleted == nil {
            effects.written.append((localID, row == nil, Self.indexEntry(localID, state)))
        } else {
            effects.removed.append(localID)
        }
    }

    /// How the search index holds local note `localID` written as the server's `state`.
    static func indexEntry(_ localID: String, _ state: SyncedNoteState) -> SearchIndex.Entry {
        SearchIndex.Entry(
            noteID: localID, accountID: AccountID.local.rawValue, title: state.content.title, body: state.locked == nil ? state.content.body : nil)
    }

    /// Writes a locked note's sealed record into local note `localID` (inserting the row when it
    /// does not exist; the caller writes the rest of it), under the local account's passphrase
    /// of its salt and source — recorded when missing: a Tresor generation made current when the
    /// account has none, an Apple Notes passphrase never.
    private func writeLock(_ record: SyncedLockedRecord, localID: String, exists: Bool, _ db: Database, _ sealing: ContentSealing) throws {
        let passphraseID: Int64
        if record.passphraseSource == .appleNotes {
            passphraseID = try syncedApplePassphraseID(record, db)
        } else {
            guard let verifier = record.passphraseVerifier else { throw NotesError.invalid("a Tresor passphrase needs its verifier") }
            passphraseID = try syncedPassphraseID(
                SyncedPassphrase(
                    salt: record.passphraseSalt, iterations: record.passphraseIterations, verifier: verifier,
                    proofHash: record.passphraseProofHash, hint: nil), db)
        }
        try fillSyncedHint(of: record, db, sealing)
        let ciphertext = try sealing.seal(record.ciphertext, table: "notes", id: localID, column: "ciphertext")
        let format = record.bodyFormat == .appleNotes ? BodyFormat.appleNotes.rawValue : BodyFormat.text.rawValue
        let arguments: StatementArguments = [
            passphraseID, record.passphraseSalt, record.passphraseIterations, record.wrappedKey, record.iv, record.tag, ciphertext, format,
            record.noteProofHash, localID,
        ]
        if exists {
            try db.execute(
                sql: """
                    UPDATE notes SET sealed_body = NULL, passphrase_id = ?, crypto_salt = ?, crypto_iterations = ?, crypto_wrapped_key = ?,
                        crypto_iv = ?, crypto_tag = ?, sealed_ciphertext = ?, body_format = ?, note_proof_hash = ?
                    WHERE id = ?
                    """, arguments: arguments)
        } else {
            try db.execute(
                sql: """
                    INSERT INTO notes (passphrase_id, crypto_salt, crypto_iterations, crypto_wrapped_key, crypto_iv, crypto_tag,
                                       sealed_ciphertext, body_format, note_proof_hash, id, account_id, created, modified, sealed_title)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'local', 0, 0, X'')
                    """, arguments: arguments)
        }
    }

    /// A local locked note's sealed record as it travels, with its passphrase's source; nil for
    /// an unlocked note, and for one imported from Apple Notes in a shape a Tresor record does
    /// not take (a salt not of 16 bytes, a body over the limit): that one stays here.
    private func lockedRecord(of row: NoteRow, _ db: Database, _ sealing: ContentSealing) throws -> SyncedLockedRecord? {
        guard let passphraseID = row.passphraseID, let wrapped = row.wrappedKey, let iv = row.iv, let tag = row.tag,
            let sealed = row.sealedCiphertext
        else { return nil }
        let passphrase = try PassphraseRow.fetch(passphraseID, db)
        let hint = try hint(of: passphrase, sealing)
        let make = { (hint: String?) in
            try SyncedLockedRecord(
                passphraseSource: passphrase.source, passphraseSalt: passphrase.salt, passphraseIterations: passphrase.iterations,
                passphraseVerifier: passphrase.verifier, passphraseProofHash: passphrase.proofHash, wrappedKey: wrapped, iv: iv, tag: tag,
                ciphertext: try sealing.open(sealed, table: "notes", id: row.id, column: "ciphertext"),
                bodyFormat: row.bodyFormat == .appleNotes ? .appleNotes : .text, noteProofHash: row.noteProofHash, passphraseHint: hint)
        }
        guard passphrase.source == .appleNotes else { return try make(hint) }
        // Apple allows longer hints than Tresor's: such a one stays on this device alone.
        let travellingHint = hint.flatMap { (try? NoteRules.validateHint($0)) == nil ? nil : $0 }
        do { return try make(travellingHint) } catch NotesError.invalid { return nil }
    }

    /// The local passphrase imported from Apple Notes of `record`'s salt, else one recorded as
    /// it came: no verifier, no generation, never current.
    private func syncedApplePassphraseID(_ record: SyncedLockedRecord, _ db: Database) throws -> Int64 {
        let source = LockInfo.Source.appleNotes.rawValue
        if let known = try Int64.fetchOne(
            db, sql: "SELECT id FROM passphrases WHERE account_id = 'local' AND source = ? AND salt = ? ORDER BY id LIMIT 1",
            arguments: [source, record.passphraseSalt])
        {
            return known
        }
        try db.execute(
            sql: """
                INSERT INTO passphrases (account_id, source, salt, iterations, proof_hash, created) VALUES ('local', ?, ?, ?, ?, ?)
                """,
            arguments: [source, record.passphraseSalt, record.passphraseIterations, record.passphraseProofHash, now.timeIntervalSince1970])
        return db.lastInsertedRowID
    }

    /// Gives the local generation of `record`'s salt the record's hint when it has none and is
    /// not the current one (whose hint travels on its own, ``applySyncedPassphrase(_:)``, and may
    /// have been removed on purpose): a note locked under an earlier passphrase shows its hint
    /// here as on the device that set it.
    private func fillSyncedHint(of record: SyncedLockedRecord, _ db: Database, _ sealing: ContentSealing) throws {
        guard let hint = record.passphraseHint,
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT id, sealed_hint IS NULL AND id IS NOT (SELECT current_passphrase_id FROM accounts WHERE id = 'local') AS fills
                    FROM passphrases WHERE account_id = 'local' AND source = ? AND salt = ? ORDER BY id LIMIT 1
                    """, arguments: [record.passphraseSource.rawValue, record.passphraseSalt]),
            row["fills"] as Bool
        else { return }
        let id: Int64 = row["id"]
        try db.execute(
            sql: "UPDATE passphrases SET sealed_hint = ? WHERE id = ?",
            arguments: [try sealing.sealText(hint, table: "passphrases", id: "\(id)", column: "hint"), id])
    }

    /// Whether local note `row` is already the server's version `state`, but for its
    /// attachments (which ``attachmentSyncWork()`` applies) and its dates.
    private func holds(_ state: SyncedNoteState, _ row: NoteRow, _ db: Database, _ sealing: ContentSealing) throws -> Bool {
        guard row.isDeleted == (state.deleted != nil), row.isLocked == (state.locked != nil) else { return false }
        guard try lockedRecord(of: row, db, sealing)?.withoutHint == state.locked?.withoutHint else { return false }
        return try content(of: row, db, sealing) == state.content
    }

    private func saveLink(local localID: String, _ state: SyncedNoteState, _ db: Database, _ sealing: ContentSealing) throws {
        let base = try sealing.seal(try JSONEncoder().encode(state.content), table: "sync_note_links", id: localID, column: "base")
        try db.cachedStatement(
            sql: """
                INSERT INTO sync_note_links (local_id, server_id, server_revision, sealed_base, base_locked_digest) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (local_id) DO UPDATE SET server_id = excluded.server_id, server_revision = excluded.server_revision,
                    sealed_base = excluded.sealed_base, base_locked_digest = excluded.base_locked_digest
                """
        ).execute(arguments: [localID, state.serverID, state.revision, base, state.locked?.textDigest])
    }

    private func link(local localID: String, _ db: Database, _ sealing: ContentSealing) throws -> (
        serverID: String, revision: Int64, base: NoteSyncContent, lockedDigest: Data?
    )? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM sync_note_links WHERE local_id = ?", arguments: [localID]) else { return nil }
        let base = try sealing.open(row["sealed_base"], table: "sync_note_links", id: localID, column: "base")
        guard let content = try? JSONDecoder().decode(NoteSyncContent.self, from: base) else {
            throw NotesError.damaged("the sync base of note \(localID)")
        }
        return (row["server_id"], row["server_revision"], content, row["base_locked_digest"])
    }

    /// A local note's content as sync sends it (a locked note's body is not read).
    private func content(of row: NoteRow, _ db: Database, _ sealing: ContentSealing) throws -> NoteSyncContent {
        let summary = try summary(of: row, db, sealing)
        let body = row.isLocked ? "" : try sealing.noteLayer(row).openText(row.sealedBody ?? Data(), table: "notes", id: row.id, column: "body")
        return NoteSyncContent(title: summary.title, body: body, folder: summary.folder, isPinned: summary.isPinned)
    }
}
