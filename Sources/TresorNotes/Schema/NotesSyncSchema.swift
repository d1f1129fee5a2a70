import Foundation
import GRDB

// The sync tables of notes.db (docs/FORMAT.md; docs/SYNC.md, "Notes"), each made or changed by
// one migration of `NotesDatabase`: the notes' outbox and links, the attachments the server
// has, the deletions held, the notes shared, the folders and the passphrase as last agreed with
// the server. What reads and writes them lives beside the sync code that uses it (`Sync/`).

enum NoteSyncTables {
    /// A link keeps the digest of its base's locked record (migration
    /// `v17-sync-note-base-locked-digest`): a change of a locked note that changed no locked text
    /// says so, and the server keeps a newer text rather than making a conflict copy.
    static func addBaseLockedDigest(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE sync_note_links ADD COLUMN base_locked_digest BLOB")
    }

    /// `sync_note_held_until_locked` (migration `v18-sync-note-held-until-locked`): the local
    /// notes whose unlocked edit the server refused because another device locked the note since
    /// the version it was made from. Such an edit stays here until the note is locked here too
    /// (then it goes as a locked change, and the server keeps it as a locked conflict copy); a
    /// trigger forgets the note once it is locked or deleted here.
    static func createHeldUntilLocked(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_note_held_until_locked (note_id TEXT PRIMARY KEY);
                CREATE TRIGGER sync_note_held_until_locked_locked AFTER UPDATE OF passphrase_id ON notes
                WHEN NEW.passphrase_id IS NOT NULL BEGIN
                    DELETE FROM sync_note_held_until_locked WHERE note_id = NEW.id;
                END;
                CREATE TRIGGER sync_note_held_until_locked_deleted AFTER DELETE ON notes BEGIN
                    DELETE FROM sync_note_held_until_locked WHERE note_id = OLD.id;
                END;
                """)
    }

    /// `sync_note_outbox`: the local notes changed since they last went to the server (one row
    /// a note). `sync_note_links`: each synced note's server id, revision and sealed base.
    /// `sync_note_applying`: a row only inside a transaction applying the server's notes, during
    /// which the triggers record nothing. `sync_note_cursor`: the sync account (server and name)
    /// and the counter of its notes read.
    static func create(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_note_outbox (note_id TEXT PRIMARY KEY);
                CREATE TABLE sync_note_links (
                    local_id TEXT PRIMARY KEY,
                    server_id TEXT NOT NULL UNIQUE,
                    server_revision INTEGER NOT NULL,
                    sealed_base BLOB NOT NULL
                );
                CREATE TABLE sync_note_applying (id INTEGER PRIMARY KEY CHECK (id = 1));
                CREATE TABLE sync_note_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), counter INTEGER NOT NULL, account TEXT NOT NULL);
                """ + outboxTriggers(onConflict: "IGNORE"))
    }

    /// The triggers again, writing the row anew when the note already waits (`OR REPLACE`, not
    /// `OR IGNORE`): every local change is then an insert into the outbox, which the background
    /// sync observes (``NotesStore/observeSyncOutbox(_:)``) — also a change made while an
    /// earlier one of the same note travelled.
    static func insertOnEveryChange(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TRIGGER sync_note_outbox_insert;
                DROP TRIGGER sync_note_outbox_update;
                DROP TRIGGER sync_note_outbox_delete;
                """ + outboxTriggers(onConflict: "REPLACE"))
    }

    /// The outbox's triggers: each insert, update and delete of a local note outside an apply
    /// writes the note's id, `INSERT OR <onConflict>` when it waits already.
    private static func outboxTriggers(onConflict: String) -> String {
        [("insert", "INSERT", "NEW"), ("update", "UPDATE", "NEW"), ("delete", "DELETE", "OLD")].map { name, event, row in
            """
            CREATE TRIGGER sync_note_outbox_\(name) AFTER \(event) ON notes
            WHEN \(row).account_id = 'local' AND NOT EXISTS (SELECT 1 FROM sync_note_applying) BEGIN
                INSERT OR \(onConflict) INTO sync_note_outbox (note_id) VALUES (\(row).id);
            END;
            """
        }.joined(separator: "\n")
    }
}

extension AttachmentSyncTables {
    static func create(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_attachments (id TEXT PRIMARY KEY, note_id TEXT NOT NULL);
                CREATE TABLE sync_attachment_listed (note_id TEXT PRIMARY KEY);
                CREATE TABLE sync_attachment_listings (
                    note_id TEXT NOT NULL,
                    id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    sealed_name BLOB NOT NULL,
                    byte_count INTEGER NOT NULL,
                    is_sealed BOOLEAN NOT NULL,
                    PRIMARY KEY (note_id, id)
                );
                CREATE TRIGGER sync_note_outbox_attachment_insert AFTER INSERT ON attachments
                WHEN NOT EXISTS (SELECT 1 FROM sync_note_applying) BEGIN
                    INSERT OR IGNORE INTO sync_note_outbox (note_id)
                    SELECT id FROM notes WHERE id = NEW.note_id AND account_id = 'local';
                END;
                CREATE TRIGGER sync_note_outbox_attachment_delete AFTER DELETE ON attachments
                WHEN NOT EXISTS (SELECT 1 FROM sync_note_applying) BEGIN
                    INSERT OR IGNORE INTO sync_note_outbox (note_id)
                    SELECT id FROM notes WHERE id = OLD.note_id AND account_id = 'local';
                END;
                """)
    }

    /// The excluded-from-backup flag travels (migration `v12-sync-attachment-backup`): the flag
    /// as the server has it, the flag a listing gives (NULL from a server that does not keep
    /// it), and a change of it here puts its note in the outbox, as an insert, which the
    /// background sync observes.
    static func addBackupExclusion(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE sync_attachments ADD COLUMN excluded_from_backup BOOLEAN NOT NULL DEFAULT 0;
                ALTER TABLE sync_attachment_listings ADD COLUMN excluded_from_backup BOOLEAN;
                CREATE TRIGGER sync_note_outbox_attachment_backup AFTER UPDATE OF exclude_from_backup ON attachments
                WHEN OLD.exclude_from_backup IS NOT NEW.exclude_from_backup AND NOT EXISTS (SELECT 1 FROM sync_note_applying) BEGIN
                    INSERT OR REPLACE INTO sync_note_outbox (note_id)
                    SELECT id FROM notes WHERE id = NEW.note_id AND account_id = 'local';
                END;
                """)
    }

    /// A listed attachment keeps the date the server gives it (migration
    /// `v16-sync-attachment-created`): fetched, it is dated as it was added, not as it arrived.
    static func addListedCreated(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE sync_attachment_listings ADD COLUMN created DOUBLE")
    }

    /// A lock put on or taken off here no longer makes the device forget which attachments the
    /// server has (migration `v13-sync-attachment-other-form`): `sync_attachments.in_other_form`
    /// marks one the server holds as the note was before — sent again in the note's form now,
    /// and its removal sent when it is removed here. `sync_unlock_keys` keeps, sealed, the key of
    /// a synced note whose lock was removed here until the server answered the removal, so an
    /// attachment the server holds sealed that this device lacks is taken in opened; a trigger
    /// drops it once the note is locked again or deleted.
    static func addOtherForm(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE sync_attachments ADD COLUMN in_other_form BOOLEAN NOT NULL DEFAULT 0;
                CREATE TABLE sync_unlock_keys (note_id TEXT PRIMARY KEY, sealed_key BLOB NOT NULL);
                CREATE TRIGGER sync_unlock_keys_locked AFTER UPDATE OF passphrase_id ON notes WHEN NEW.passphrase_id IS NOT NULL BEGIN
                    DELETE FROM sync_unlock_keys WHERE note_id = NEW.id;
                END;
                CREATE TRIGGER sync_unlock_keys_deleted AFTER DELETE ON notes BEGIN
                    DELETE FROM sync_unlock_keys WHERE note_id = OLD.id;
                END;
                """)
    }
}

extension NoteDeletionHoldTables {
    /// `sync_note_deletions_held`: the server ids of notes held here that the server deleted for
    /// good, not applied yet. `sync_note_deletion_window`: the hold's window.
    static func create(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_note_deletions_held (server_id TEXT PRIMARY KEY);
                CREATE TABLE sync_note_deletion_window (id INTEGER PRIMARY KEY CHECK (id = 1), start REAL NOT NULL, deleted INTEGER NOT NULL);
                """)
    }
}

extension SharingSyncTables {
    /// `sync_note_sharing`: a row per local note shared with or by the sync account.
    static func create(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_note_sharing (
                    local_id TEXT PRIMARY KEY,
                    is_owner BOOLEAN NOT NULL,
                    sealed_sharing BLOB NOT NULL
                )
                """)
    }
}

enum FolderSyncTables {
    static func create(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE sync_folders (id INTEGER PRIMARY KEY CHECK (id = 1), sealed_names BLOB NOT NULL)")
    }
}

enum PassphraseSyncTables {
    static func create(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE sync_passphrase (id INTEGER PRIMARY KEY CHECK (id = 1), sealed_agreed BLOB NOT NULL)")
    }
}
