import Crypto
import Foundation
import GRDB
import TresorNotesDomain

// Attachments sync (docs/SYNC.md, "Attachments"): an attachment's bytes never change once added,
// so it syncs by its id, the same here and on the server; only its excluded-from-backup flag
// changes, and travels as a change of its own (`sync_attachments.excluded_from_backup` is the
// flag as the server has it). `sync_attachments` records which of the
// local notes' attachments the server has (a row once sent or fetched, gone once a removal went
// either way); a pulled note's listing of the server's attachments waits in
// `sync_attachment_listings` until its attachments are fetched and its removals applied.

/// An attachment of a synced note as the server lists it.
public struct SyncedAttachment: Sendable, Equatable {
    public var id: String
    public var kind: AttachmentKind
    public var name: String
    public var byteCount: Int
    /// A locked note's attachment on the server: it travels as its chunks sealed under the note key.
    public var isSealed: Bool
    /// Whether backups leave it out; nil from a server that does not keep the flag.
    public var excludedFromBackup: Bool?
    /// When it was added, as the server dates it; nil from a server that does not: the fetch's time.
    public var created: Date?

    public init(
        id: String, kind: AttachmentKind, name: String, byteCount: Int, isSealed: Bool = false, excludedFromBackup: Bool? = nil,
        created: Date? = nil
    ) {
        self.excludedFromBackup = excludedFromBackup
        self.created = created
        self.id = id
        self.kind = kind
        self.name = name
        self.byteCount = byteCount
        self.isSealed = isSealed
    }
}

/// What one sync of attachments has to do, read from the notes database at once.
public struct AttachmentSyncWork: Sendable {
    /// An attachment of a local note and its note's ids here and on the server.
    public struct Entry: Sendable {
        public var localNoteID: String
        public var serverNoteID: String
        public var attachmentID: String
        /// A locked note's attachment: it goes as its chunks sealed under the note key.
        public var isSealed: Bool
        /// Whether backups leave it out here.
        public var excludedFromBackup = false
    }

    /// A listing of the server's attachments of one local note, waiting to be applied.
    public struct Listing: Sendable {
        public var localNoteID: String
        public var serverNoteID: String
        /// On the server, not here, not removed here: to fetch (of a locked note, only those the
        /// server holds sealed; of an unlocked one, only those it does not).
        public var fetch: [SyncedAttachment]
        /// Here and synced, no longer on the server: to remove here.
        public var remove: [String]
    }

    /// The largest attachment of a note in Recently Deleted that travels with it; a larger one
    /// waits until its note is restored.
    public static let recentlyDeletedBytes = 16 << 20

    /// The listings to apply first (fetches and removals of what changed on the server).
    public var listings: [Listing]
    /// Local attachments the server does not have: to send.
    public var send: [Entry]
    /// Synced attachments removed here: their removals to send.
    public var removeOnServer: [Entry]
    /// Synced attachments left out of backups here, or put back in, since the server had them:
    /// their flag to send (`excludedFromBackup`).
    public var backupChanges: [Entry] = []
}

/// The rows of the attachments the server has (their tables: `Schema/NotesSyncSchema.swift`).
enum AttachmentSyncTables {
    /// Holds the outbox triggers off and records attachment `id` of `note` as synced (a fetched
    /// attachment being added, with the server's flag; `inOtherForm` when the server holds it
    /// sealed and this device unlocked); ``endApplying(_:)`` ends it in the same transaction.
    static func beginApplying(recordingSynced id: String, note: String, excludedFromBackup: Bool, inOtherForm: Bool, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO sync_note_applying (id) VALUES (1)")
        try recordSynced(id, note: note, excludedFromBackup: excludedFromBackup, inOtherForm: inOtherForm, db)
    }

    static func endApplying(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM sync_note_applying")
    }

    /// Moves local note `noteID` to the server's revision its own attachment change made (an
    /// upload, a removal, a backup flag), when that change alone made the next revision from the
    /// one the device holds: a change of the note still waiting (a lock put on meanwhile, a lock
    /// removal the server refused until then) is made from it, not turned into a conflict copy by
    /// the device's own change.
    /// A step of more than one revision had another change in it: nothing moves.
    static func holdOwnRevisionStep(_ revisions: (before: Int64, after: Int64)?, of noteID: String, _ db: Database) throws {
        guard let revisions, revisions.after == revisions.before + 1 else { return }
        try db.execute(
            sql: "UPDATE sync_note_links SET server_revision = ? WHERE local_id = ? AND server_revision = ?",
            arguments: [revisions.after, noteID, revisions.before])
    }

    /// Records that the server holds attachment `id` in the other form than the one it was
    /// sealed anew in here (its note locked or unlocked): what the server has no longer opens as
    /// the note is, so it is sent again — the server replaces its copy — and, removed here, its
    /// removal goes.
    static func markInOtherForm(_ id: String, _ db: Database) throws {
        try db.execute(sql: "UPDATE sync_attachments SET in_other_form = 1 WHERE id = ?", arguments: [id])
    }

    static func recordSynced(_ id: String, note: String, excludedFromBackup: Bool, inOtherForm: Bool = false, _ db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO sync_attachments (id, note_id, excluded_from_backup, in_other_form) VALUES (?, ?, ?, ?)",
            arguments: [id, note, excludedFromBackup, inOtherForm])
    }

    /// Keeps the key of synced note `noteID`, whose lock is being removed here, until the
    /// server answers the removal.
    static func keepUnlockKey(_ key: SymmetricKey, ofNote noteID: String, _ db: Database, _ sealing: ContentSealing) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_note_links WHERE local_id = ?", arguments: [noteID]) == true else { return }
        let sealed = try key.withUnsafeBytes { try sealing.seal(Data($0), table: "sync_unlock_keys", id: noteID, column: "key") }
        try db.execute(sql: "INSERT OR REPLACE INTO sync_unlock_keys (note_id, sealed_key) VALUES (?, ?)", arguments: [noteID, sealed])
    }

    /// Whether note `noteID` keeps the key of a lock removed here that the server has not answered.
    static func keepsUnlockKey(ofNote noteID: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_unlock_keys WHERE note_id = ?", arguments: [noteID]) == true
    }

    /// Drops the key kept for note `noteID`'s lock removal: the server answered it.
    static func dropUnlockKey(ofNote noteID: String, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM sync_unlock_keys WHERE note_id = ?", arguments: [noteID])
    }

    /// Replaces local note `note`'s waiting listing with `attachments`, names sealed.
    static func recordListing(_ attachments: [SyncedAttachment], note: String, _ db: Database, _ sealing: ContentSealing) throws {
        try db.cachedStatement(sql: "DELETE FROM sync_attachment_listings WHERE note_id = ?").execute(arguments: [note])
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO sync_attachment_listed (note_id) VALUES (?)").execute(arguments: [note])
        for attachment in attachments {
            try insertListed(attachment, note: note, db, sealing)
        }
    }

    static func insertListed(_ attachment: SyncedAttachment, note: String, _ db: Database, _ sealing: ContentSealing) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO sync_attachment_listings
                    (note_id, id, kind, sealed_name, byte_count, is_sealed, excluded_from_backup, created)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            note, attachment.id, attachment.kind.rawValue,
            try sealing.sealText(attachment.name, table: "sync_attachment_listings", id: "\(note)/\(attachment.id)", column: "name"),
            attachment.byteCount, attachment.isSealed, attachment.excludedFromBackup, attachment.created?.timeIntervalSince1970,
        ])
    }

    /// Forgets every synced attachment and listing (another sync account starts afresh).
    static func forgetAll(_ db: Database) throws {
        try db.execute(
            sql:
                "DELETE FROM sync_attachments; DELETE FROM sync_attachment_listed; DELETE FROM sync_attachment_listings; DELETE FROM sync_unlock_keys"
        )
    }
}

extension NotesStore {
    /// What the next sync of attachments has to do (docs/SYNC.md, "Attachments"). Only notes of
    /// the local account that the server has (linked) take part — of a note in Recently Deleted,
    /// only attachments up to ``AttachmentSyncWork/recentlyDeletedBytes`` and no removal; a
    /// locked note's attachments travel as their chunks sealed under the note key.
    /// - Returns: the listings to apply, the attachments to send and the removals to send.
    /// - Throws: ``NotesError/contentUnavailable`` while the keybag was never unlocked.
    public func attachmentSyncWork() throws -> AttachmentSyncWork {
        let sealing = try sealing()
        try forgetAttachmentSyncOfGoneNotes()
        return try pool.read { db in
            let eligible = """
                SELECT n.id AS local_id, l.server_id, n.passphrase_id IS NOT NULL AS locked, n.deleted IS NOT NULL AS deleted
                FROM notes n JOIN sync_note_links l ON l.local_id = n.id
                WHERE n.account_id = 'local'
                """
            let small = AttachmentSyncWork.recentlyDeletedBytes
            var listings: [AttachmentSyncWork.Listing] = []
            for row in try Row.fetchAll(
                db,
                sql:
                    "SELECT e.local_id, e.server_id, e.locked, e.deleted FROM (\(eligible)) e JOIN sync_attachment_listed d ON d.note_id = e.local_id"
            ) {
                let note: String = row["local_id"], locked: Bool = row["locked"]
                // Sealed only into a locked note, plaintext only into an unlocked one: a listing
                // made while the note's lock was changing waits for the next. An attachment held
                // here otherwise than the note now is — plaintext in a locked note (it came before
                // the lock did), sealed in an unlocked one (the lock was removed elsewhere, and its
                // note key with it) — is replaced by the server's copy: removed, then fetched.
                // A note whose lock was removed here, the removal not answered yet, also takes
                // what the server holds sealed and this device lacks, opened with the kept key.
                let fetch = try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT * FROM sync_attachment_listings WHERE note_id = ? AND (NOT ? OR byte_count <= ?)
                                AND (is_sealed = ? OR (is_sealed AND NOT ? AND note_id IN (SELECT note_id FROM sync_unlock_keys)))
                                AND id NOT IN (SELECT id FROM attachments WHERE is_locked = ?)
                                AND id NOT IN (
                                    SELECT s.id FROM sync_attachments s LEFT JOIN attachments a ON a.id = s.id
                                    WHERE a.id IS NULL OR a.is_locked = ?)
                            ORDER BY id
                            """), arguments: [note, row["deleted"] as Bool, small, locked, locked, locked, locked]
                ).map { listed -> SyncedAttachment in
                    let id: String = listed["id"]
                    guard let kind = AttachmentKind(rawValue: listed["kind"]) else { throw NotesError.damaged("attachment \(id)") }
                    let name = try sealing.openText(listed["sealed_name"], table: "sync_attachment_listings", id: "\(note)/\(id)", column: "name")
                    return SyncedAttachment(
                        id: id, kind: kind, name: name, byteCount: listed["byte_count"], isSealed: listed["is_sealed"],
                        excludedFromBackup: listed["excluded_from_backup"],
                        created: (listed["created"] as Double?).map(Date.init(timeIntervalSince1970:)))
                }
                let remove = try String.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT s.id FROM sync_attachments s JOIN attachments a ON a.id = s.id
                            WHERE s.note_id = ? AND a.note_id = ? AND (s.id NOT IN (SELECT id FROM sync_attachment_listings WHERE note_id = ?)
                                OR (a.is_locked <> ? AND s.id IN (SELECT id FROM sync_attachment_listings WHERE note_id = ? AND is_sealed = ?)))
                            ORDER BY s.id
                            """), arguments: [note, note, note, locked, note, locked])
                listings.append(.init(localNoteID: note, serverNoteID: row["server_id"], fetch: fetch, remove: remove))
            }
            let send = try Row.fetchAll(
                db,
                sql: """
                    SELECT e.local_id, e.server_id, a.id, a.is_locked, a.exclude_from_backup
                    FROM (\(eligible)) e JOIN attachments a ON a.note_id = e.local_id
                    WHERE a.is_locked = e.locked AND (NOT e.deleted OR a.byte_count <= ?)
                        AND a.id NOT IN (SELECT id FROM sync_attachments WHERE NOT in_other_form)
                    ORDER BY a.created, a.id
                    """, arguments: [small]
            ).map(Self.flaggedEntry)
            let removeOnServer = try Row.fetchAll(
                db,
                sql: """
                    SELECT e.local_id, e.server_id, e.locked, s.id FROM (\(eligible)) e JOIN sync_attachments s ON s.note_id = e.local_id
                    WHERE NOT e.deleted AND s.id NOT IN (SELECT id FROM attachments) ORDER BY s.id
                    """
            ).map {
                AttachmentSyncWork.Entry(localNoteID: $0["local_id"], serverNoteID: $0["server_id"], attachmentID: $0["id"], isSealed: $0["locked"])
            }
            let backupChanges = try Row.fetchAll(
                db,
                sql: """
                    SELECT e.local_id, e.server_id, a.id, a.is_locked, a.exclude_from_backup
                    FROM (\(eligible)) e JOIN attachments a ON a.note_id = e.local_id JOIN sync_attachments s ON s.id = a.id
                    WHERE s.note_id = e.local_id AND a.exclude_from_backup IS NOT s.excluded_from_backup ORDER BY a.id
                    """
            ).map(Self.flaggedEntry)
            return AttachmentSyncWork(listings: listings, send: send, removeOnServer: removeOnServer, backupChanges: backupChanges)
        }
    }

    /// Forgets the synced attachments of notes no longer here (deleted for good), and the
    /// listings of such notes — in a write only when there are some: a sync with nothing to do
    /// writes nothing.
    private func forgetAttachmentSyncOfGoneNotes() throws {
        let gone = [
            "sync_attachments WHERE note_id NOT IN (SELECT local_id FROM sync_note_links) AND id NOT IN (SELECT id FROM attachments)",
            "sync_attachment_listings WHERE note_id NOT IN (SELECT id FROM notes)",
            "sync_attachment_listed WHERE note_id NOT IN (SELECT id FROM notes)",
        ]
        let exists = gone.map { "EXISTS (SELECT 1 FROM \($0))" }.joined(separator: " OR ")
        guard try pool.read({ try Bool.fetchOne($0, sql: "SELECT \(exists)") }) == true else { return }
        try pool.write { db in
            for rows in gone { try db.execute(sql: "DELETE FROM \(rows)") }
        }
    }

    /// A row of `local_id`, `server_id`, `id`, `is_locked` and `exclude_from_backup` as an
    /// entry of ``AttachmentSyncWork``: an attachment to send, or whose flag to send.
    private static func flaggedEntry(_ row: Row) -> AttachmentSyncWork.Entry {
        AttachmentSyncWork.Entry(
            localNoteID: row["local_id"], serverNoteID: row["server_id"], attachmentID: row["id"], isSealed: row["is_locked"],
            excludedFromBackup: row["exclude_from_backup"])
    }

    /// Starts adding an attachment the server lists for local note `noteID`, with its id: its
    /// bytes are then appended as they arrive, and ``AttachmentUpload/finish()`` adds it as synced
    /// without putting the note in the outbox.
    /// - Parameters:
    ///   - attachment: the server's attachment.
    ///   - noteID: the local note.
    /// - Returns: the upload to hand the bytes to.
    /// - Throws: as ``beginAttachment(to:kind:name:passphrase:excludedFromBackup:id:)``.
    public func beginSyncedAttachment(_ attachment: SyncedAttachment, to noteID: String) throws -> AttachmentUpload {
        try beginAttachment(
            to: noteID, kind: attachment.kind, name: attachment.name, passphrase: nil, excludedFromBackup: attachment.excludedFromBackup ?? false,
            id: attachment.id, created: attachment.created, isSynced: true, arrivesSealed: attachment.isSealed,
            byteCount: attachment.byteCount)
    }

    /// The key kept for note `noteID`'s lock removal, while the server has not answered it.
    func keptUnlockKey(ofNote noteID: String, _ db: Database, _ sealing: ContentSealing) throws -> SymmetricKey? {
        guard let sealed = try Data.fetchOne(db, sql: "SELECT sealed_key FROM sync_unlock_keys WHERE note_id = ?", arguments: [noteID]) else {
            return nil
        }
        return SymmetricKey(data: try sealing.open(sealed, table: "sync_unlock_keys", id: noteID, column: "key"))
    }

    /// Applies the excluded-from-backup flags the server's waiting listings give for attachments
    /// this device has, without putting their notes in the outbox: the server's flag becomes
    /// the one the server has, and this device's too unless it was changed here since (that
    /// change goes next).
    /// - Returns: how many attachments here changed.
    /// - Throws: a storage error.
    @discardableResult
    public func applyListedBackupExclusions() throws -> Int {
        let listed = """
            SELECT a.id, a.note_id, l.excluded_from_backup AS listed, s.excluded_from_backup AS agreed, a.exclude_from_backup AS here
            FROM attachments a JOIN sync_attachments s ON s.id = a.id AND s.note_id = a.note_id
                JOIN sync_attachment_listings l ON l.id = a.id AND l.note_id = a.note_id
            WHERE l.excluded_from_backup IS NOT NULL AND l.excluded_from_backup IS NOT s.excluded_from_backup
            """
        // The usual sync: nothing listed differs, nothing is written.
        guard try pool.read({ try Bool.fetchOne($0, sql: "SELECT EXISTS (\(listed))") }) == true else { return 0 }
        let changed = try pool.write { db -> [(id: String, note: String)] in
            let rows = try Row.fetchAll(db, sql: listed)
            guard !rows.isEmpty else { return [] }
            var changed: [(id: String, note: String)] = []
            try db.execute(sql: "INSERT INTO sync_note_applying (id) VALUES (1)")
            for row in rows {
                let id: String = row["id"], note: String = row["note_id"], flag: Bool = row["listed"]
                if (row["agreed"] as Bool) == (row["here"] as Bool) {
                    try db.execute(sql: "UPDATE attachments SET exclude_from_backup = ? WHERE id = ?", arguments: [flag, id])
                    changed.append((id, note))
                }
                try db.execute(sql: "UPDATE sync_attachments SET excluded_from_backup = ? WHERE id = ?", arguments: [flag, id])
            }
            try AttachmentSyncTables.endApplying(db)
            return changed
        }
        for note in Set(changed.map(\.note)) { announce(.changed, note: note) }
        return changed.count
    }

    /// Records that the server has attachment `attachmentID` left out of backups or not, as
    /// `excluded` says (its change went); a listing still waiting says so from now on. The
    /// change's own revision of the note is the device's, as an attachment's removal's is
    /// (``recordAttachmentRemovalSent(_:of:revisions:)``).
    /// - Parameters:
    ///   - attachmentID: the attachment.
    ///   - noteID: its local note.
    ///   - excluded: the flag the server has now.
    ///   - revisions: the note's revisions on the server before and after the change, if it
    ///     made one.
    /// - Throws: a storage error.
    public func recordBackupExclusionSent(_ attachmentID: String, of noteID: String, excluded: Bool, revisions: (before: Int64, after: Int64)?)
        throws
    {
        try pool.write { db in
            try db.execute(sql: "UPDATE sync_attachments SET excluded_from_backup = ? WHERE id = ?", arguments: [excluded, attachmentID])
            try db.execute(sql: "UPDATE sync_attachment_listings SET excluded_from_backup = ? WHERE id = ?", arguments: [excluded, attachmentID])
            try AttachmentSyncTables.holdOwnRevisionStep(revisions, of: noteID, db)
        }
    }

    /// Removes an attachment the server no longer has, without putting its note in the outbox.
    /// - Parameters:
    ///   - attachmentID: the attachment.
    ///   - noteID: its local note.
    /// - Throws: a storage error.
    public func removeSyncedAttachment(_ attachmentID: String, of noteID: String) throws {
        let file = try pool.write { db -> String? in
            try db.execute(sql: "INSERT INTO sync_note_applying (id) VALUES (1)")
            let file = try String.fetchOne(
                db, sql: "SELECT file FROM attachments WHERE id = ? AND note_id = ?", arguments: [attachmentID, noteID])
            try db.execute(sql: "DELETE FROM attachments WHERE id = ? AND note_id = ?", arguments: [attachmentID, noteID])
            try db.execute(sql: "DELETE FROM sync_attachments WHERE id = ?", arguments: [attachmentID])
            try AttachmentSyncTables.endApplying(db)
            return file
        }
        guard let file else { return }
        AttachmentFile.remove(file, in: attachmentsFolder)
        purgeRemovedPages()
        announce(.changed, note: noteID)
    }

    /// Records that the server has attachment `attachmentID` of local note `noteID` (sent, or
    /// found there); a listing still waiting for the note lists it from now on.
    /// - Parameters:
    ///   - attachmentID: the attachment.
    ///   - noteID: its local note.
    ///   - excludedFromBackup: its flag as the server has it (false from a server that does not
    ///     keep it: a flag set here then waits to go).
    ///   - revisions: the note's revisions on the server before and after the upload, if said:
    ///     the device holds the new one when the upload alone made it
    ///     (`AttachmentSyncTables.holdOwnRevisionStep`), so a lock put on here meanwhile goes
    ///     from it rather than as a conflict copy.
    /// - Throws: a storage error.
    public func recordAttachmentSent(
        _ attachmentID: String, of noteID: String, excludedFromBackup: Bool = false, revisions: (before: Int64, after: Int64)? = nil
    ) throws {
        let sealing = try sealing()
        try pool.write { db in
            try AttachmentSyncTables.recordSynced(attachmentID, note: noteID, excludedFromBackup: excludedFromBackup, db)
            try AttachmentSyncTables.holdOwnRevisionStep(revisions, of: noteID, db)
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_attachment_listed WHERE note_id = ?", arguments: [noteID]) == true,
                let row = try AttachmentRow.fetchAll(note: noteID, db).first(where: { $0.id == attachmentID })
            else { return }
            let listed = SyncedAttachment(
                id: attachmentID, kind: row.kind, name: try attachmentName(row, sealing), byteCount: row.byteCount, isSealed: row.isLocked,
                excludedFromBackup: excludedFromBackup)
            try AttachmentSyncTables.insertListed(listed, note: noteID, db, sealing)
        }
    }

    /// Records that the server no longer has attachment `attachmentID` (its removal went). When
    /// the removal alone made the note's next revision from the one this device holds, the
    /// device holds the new one: a change of the note still waiting (a lock removal the server
    /// refused until the attachment was gone) is made from it, not turned into a conflict copy
    /// by its own removal (`AttachmentSyncTables.holdOwnRevisionStep`).
    /// - Parameters:
    ///   - attachmentID: the attachment.
    ///   - noteID: its local note.
    ///   - revisions: the note's revisions on the server before and after the removal, if said.
    /// - Throws: a storage error.
    public func recordAttachmentRemovalSent(_ attachmentID: String, of noteID: String, revisions: (before: Int64, after: Int64)?) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM sync_attachments WHERE id = ?", arguments: [attachmentID])
            try db.execute(sql: "DELETE FROM sync_attachment_listings WHERE id = ?", arguments: [attachmentID])
            try AttachmentSyncTables.holdOwnRevisionStep(revisions, of: noteID, db)
        }
    }

    /// Drops the listings of local notes `noteIDs` once they were applied, in one transaction:
    /// a new device's first sync finishes one per note, most of them empty.
    /// - Parameter noteIDs: the local notes.
    /// - Throws: a storage error.
    public func finishAttachmentListings(of noteIDs: [String]) throws {
        guard !noteIDs.isEmpty else { return }
        try pool.write { db in
            let listings = try db.cachedStatement(sql: "DELETE FROM sync_attachment_listings WHERE note_id = ?")
            let listed = try db.cachedStatement(sql: "DELETE FROM sync_attachment_listed WHERE note_id = ?")
            for noteID in noteIDs {
                try listings.execute(arguments: [noteID])
                try listed.execute(arguments: [noteID])
            }
        }
    }
}
