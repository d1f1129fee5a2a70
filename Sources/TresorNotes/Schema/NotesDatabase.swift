import Foundation
import GRDB
import TresorStorage

/// The notes database (`notes.db` in the home), opened as every Tresor database is
/// (``SealedDatabase``: WAL, `secure_delete`, a truncating checkpoint after every change that
/// removes content).
///
/// | table | holds |
/// |---|---|
/// | `accounts` | the local account and web accounts (login name, salted PBKDF2 password hash), the current passphrase, failed entries |
/// | `passphrases` | one row per passphrase generation (salt, rounds, verifier, proof hash, sealed hint) and per imported Apple passphrase |
/// | `folders` | folder names, sealed |
/// | `notes` | dates and pin in the clear; title and body sealed under the content key; a locked note's Apple-shaped crypto fields and note proof hash |
/// | `attachments` | kind, sealed name, size, the name of the sealed file in `attachments/`, whether it is left out of backups |
/// | `participants` | who a shared note is shared with (in the clear, docs/FORMAT.md), and since when |
///
/// Each note also has a `revision` (counted up by trigger on every change) and, while it is in
/// Recently Deleted, the time it was `deleted`.
///
/// Nothing in it is note text in the clear: see `ContentSealing` and docs/FORMAT.md.
enum NotesDatabase {
    static func open(at url: URL) throws -> DatabasePool {
        try SealedDatabase.open(at: url, migrator: migrator)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE accounts (
                        id TEXT PRIMARY KEY,
                        name TEXT NOT NULL,
                        current_passphrase_id INTEGER,
                        keychain_unlock INTEGER NOT NULL DEFAULT 0,
                        failed_passphrase_entries INTEGER NOT NULL DEFAULT 0,
                        last_passphrase_failure REAL,
                        created REAL NOT NULL
                    );
                    CREATE TABLE passphrases (
                        id INTEGER PRIMARY KEY,
                        account_id TEXT NOT NULL REFERENCES accounts(id),
                        source TEXT NOT NULL,
                        generation INTEGER,
                        salt BLOB NOT NULL,
                        iterations INTEGER NOT NULL,
                        verifier BLOB,
                        sealed_hint BLOB,
                        created REAL NOT NULL
                    );
                    CREATE TABLE folders (
                        id TEXT PRIMARY KEY,
                        account_id TEXT NOT NULL REFERENCES accounts(id),
                        sealed_name BLOB NOT NULL,
                        created REAL NOT NULL
                    );
                    CREATE TABLE notes (
                        id TEXT PRIMARY KEY,
                        account_id TEXT NOT NULL REFERENCES accounts(id),
                        folder_id TEXT REFERENCES folders(id),
                        created REAL NOT NULL,
                        modified REAL NOT NULL,
                        pinned INTEGER NOT NULL DEFAULT 0,
                        sealed_title BLOB NOT NULL,
                        sealed_body BLOB,
                        passphrase_id INTEGER REFERENCES passphrases(id),
                        crypto_salt BLOB,
                        crypto_iterations INTEGER,
                        crypto_wrapped_key BLOB,
                        crypto_iv BLOB,
                        crypto_tag BLOB,
                        sealed_ciphertext BLOB,
                        body_format TEXT NOT NULL DEFAULT 'text',
                        import_tag BLOB UNIQUE
                    );
                    CREATE INDEX notes_account ON notes(account_id);
                    CREATE INDEX notes_passphrase ON notes(passphrase_id);
                    CREATE TABLE attachments (
                        id TEXT PRIMARY KEY,
                        note_id TEXT NOT NULL REFERENCES notes(id),
                        kind TEXT NOT NULL,
                        sealed_name BLOB NOT NULL,
                        byte_count INTEGER NOT NULL,
                        created REAL NOT NULL,
                        file TEXT NOT NULL UNIQUE,
                        is_locked INTEGER NOT NULL
                    );
                    CREATE INDEX attachments_note ON attachments(note_id);
                    """)
        }
        // Web accounts and shared notes (docs/FORMAT.md, "Web accounts and shared notes"). A shared
        // note's title and body are sealed under its own record key (`sealed_record_key`, itself
        // sealed under the content key).
        migrator.registerMigration("v2-web") { db in
            try db.execute(
                sql: """
                    ALTER TABLE accounts ADD COLUMN login_name TEXT;
                    ALTER TABLE accounts ADD COLUMN password_salt BLOB;
                    ALTER TABLE accounts ADD COLUMN password_iterations INTEGER;
                    ALTER TABLE accounts ADD COLUMN password_hash BLOB;
                    CREATE UNIQUE INDEX accounts_login_name ON accounts(login_name);
                    ALTER TABLE notes ADD COLUMN sealed_record_key BLOB;
                    CREATE TABLE participants (
                        note_id TEXT NOT NULL REFERENCES notes(id),
                        account_id TEXT NOT NULL REFERENCES accounts(id),
                        added REAL NOT NULL,
                        PRIMARY KEY (note_id, account_id)
                    );
                    CREATE INDEX participants_account ON participants(account_id);
                    """)
        }
        // Proofs of the passphrase and of note keys (docs/SECURITY.md, "Locked-note integrity on
        // the web"): the SHA-256 of each, NULL until recorded — rows from before this version
        // get theirs at the first entry the daemon can check (or the browser's first right one).
        migrator.registerMigration("v3-proofs") { db in
            try db.execute(
                sql: """
                    ALTER TABLE passphrases ADD COLUMN proof_hash BLOB;
                    ALTER TABLE notes ADD COLUMN note_proof_hash BLOB;
                    """)
        }
        // Attachments the user left out of backups (`tresor note attach --exclude-from-backup`).
        migrator.registerMigration("v4-backup-exclusion") { db in
            try db.execute(sql: "ALTER TABLE attachments ADD COLUMN exclude_from_backup INTEGER NOT NULL DEFAULT 0")
        }
        // Revisions (docs/FORMAT.md, "Revisions and merges"): every change of a note's content,
        // lock, pin, folder or place in Recently Deleted counts one up, by trigger, so no code
        // path can change a note without a save made from the old revision noticing.
        migrator.registerMigration("v5-revisions") { db in
            try db.execute(
                sql: """
                    ALTER TABLE notes ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
                    CREATE TRIGGER notes_revision AFTER UPDATE OF
                        account_id, folder_id, modified, pinned, sealed_title, sealed_body, passphrase_id,
                        crypto_iv, crypto_tag, sealed_ciphertext, sealed_record_key
                    ON notes BEGIN
                        UPDATE notes SET revision = OLD.revision + 1 WHERE id = NEW.id;
                    END;
                    """)
        }
        // Recently Deleted (docs/FORMAT.md): a deleted note keeps its row, attachments and
        // participants, with the time it was deleted; after 30 days, or when deleted for good,
        // it goes as `deleteNote` always went.
        migrator.registerMigration("v6-recently-deleted") { db in
            try db.execute(
                sql: """
                    ALTER TABLE notes ADD COLUMN deleted REAL;
                    CREATE INDEX notes_deleted ON notes(deleted) WHERE deleted IS NOT NULL;
                    CREATE TRIGGER notes_revision_deleted AFTER UPDATE OF deleted ON notes BEGIN
                        UPDATE notes SET revision = OLD.revision + 1 WHERE id = NEW.id;
                    END;
                    """)
        }
        // Notes sync (docs/SYNC.md, "Notes"): the outbox, each synced note's server link and
        // the server's cursor (``NoteSyncTables``).
        migrator.registerMigration("v7-sync-notes") { db in try NoteSyncTables.create(db) }
        // Every local change of a note is an insert into the outbox, which the background sync observes.
        migrator.registerMigration("v8-sync-notes-wake") { db in try NoteSyncTables.insertOnEveryChange(db) }
        // Attachments sync (docs/SYNC.md, "Attachments"): which attachments are on the server,
        // and the server's listings waiting to be applied (``AttachmentSyncTables``).
        migrator.registerMigration("v9-sync-attachments") { db in try AttachmentSyncTables.create(db) }
        // The notes passphrase's sync (docs/SYNC.md, "Notes"): the account's current generation
        // as this device last agreed it with the server (``PassphraseSyncTables``).
        migrator.registerMigration("v10-sync-passphrase") { db in try PassphraseSyncTables.create(db) }
        // Folders' sync (docs/SYNC.md, "Notes"): the account's folder names as this device last
        // had them from the server (``FolderSyncTables``).
        migrator.registerMigration("v11-sync-folders") { db in try FolderSyncTables.create(db) }
        // The attachments' excluded-from-backup flag travels (docs/SYNC.md, "Attachments";
        // ``AttachmentSyncTables/addBackupExclusion(_:)``).
        migrator.registerMigration("v12-sync-attachment-backup") { db in try AttachmentSyncTables.addBackupExclusion(db) }
        // Locking or unlocking a note keeps which attachments the server has, in the other form,
        // and a removed lock's key waits for the server's answer (``AttachmentSyncTables/addOtherForm(_:)``).
        migrator.registerMigration("v13-sync-attachment-other-form") { db in try AttachmentSyncTables.addOtherForm(db) }
        // Who shares each synced note shared with or by the sync account (docs/SYNC.md, "Shared
        // notes"; ``SharingSyncTables``).
        migrator.registerMigration("v14-sync-sharing") { db in try SharingSyncTables.create(db) }
        // The mass-deletion hold for notes (docs/SYNC.md, "Notes"): deletions for good set
        // aside until judged, and the hold's window (``NoteDeletionHoldTables``).
        migrator.registerMigration("v15-sync-note-deletion-hold") { db in try NoteDeletionHoldTables.create(db) }
        // A fetched attachment is dated as the server dates it (``AttachmentSyncTables/addListedCreated(_:)``).
        migrator.registerMigration("v16-sync-attachment-created") { db in try AttachmentSyncTables.addListedCreated(db) }
        // A locked note's change says whether it changed its locked text (``NoteSyncTables/addBaseLockedDigest(_:)``).
        migrator.registerMigration("v17-sync-note-base-locked-digest") { db in try NoteSyncTables.addBaseLockedDigest(db) }
        // An unlocked edit of a note locked elsewhere since waits here until locked (``NoteSyncTables/createHeldUntilLocked(_:)``).
        migrator.registerMigration("v18-sync-note-held-until-locked") { db in try NoteSyncTables.createHeldUntilLocked(db) }
        return migrator
    }
}
