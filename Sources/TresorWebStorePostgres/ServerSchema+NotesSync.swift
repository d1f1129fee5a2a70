extension ServerSchema {
    /// The tables of notes sync (docs/SYNC.md, "Notes").
    static let notesSyncTables: Set<String> = [
        "sync_notes_gone", "sync_note_origins", "attachment_unlocked_copies", "attachment_unlocked_chunks",
    ]

    /// Notes sync: every write of a note — whatever route or store method makes it — takes the
    /// next number of its account's notes counter, by trigger, so no code path changes a note
    /// unseen by the devices. The counter lives in the account's row, which a write keeps locked
    /// until it commits: a write that takes a later number commits later, and a device reading
    /// changes after a cursor never skips one committed late. A note deleted for good leaves its
    /// id and counter in `sync_notes_gone`; `sync_note_origins` remembers which device note a
    /// device's push created, so a retried creation finds it instead of making it twice.
    static let version4: [String] = [
        """
        ALTER TABLE accounts ADD COLUMN notes_counter BIGINT NOT NULL DEFAULT 0
        """,
        """
        ALTER TABLE notes ADD COLUMN sync_counter BIGINT NOT NULL DEFAULT 0
        """,
        // Notes from before: numbered once, in the order they were made.
        """
        UPDATE notes SET sync_counter = numbered.counter
        FROM (SELECT id, row_number() OVER (PARTITION BY account_id ORDER BY created, id) AS counter FROM notes) AS numbered
        WHERE notes.id = numbered.id
        """,
        """
        UPDATE accounts SET notes_counter = COALESCE((SELECT MAX(sync_counter) FROM notes WHERE notes.account_id = accounts.id), 0)
        """,
        """
        CREATE INDEX notes_sync_counter ON notes(account_id, sync_counter)
        """,
        """
        CREATE TABLE sync_notes_gone (
            account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            note_id TEXT NOT NULL,
            sync_counter BIGINT NOT NULL,
            PRIMARY KEY (account_id, note_id)
        )
        """,
        """
        CREATE INDEX sync_notes_gone_counter ON sync_notes_gone(account_id, sync_counter)
        """,
        """
        CREATE TABLE sync_note_origins (
            account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            device_id TEXT NOT NULL,
            local_id TEXT NOT NULL,
            note_id TEXT NOT NULL,
            PRIMARY KEY (account_id, device_id, local_id)
        )
        """,
        """
        CREATE FUNCTION tresor_notes_sync_counter() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE accounts SET notes_counter = notes_counter + 1 WHERE id = NEW.account_id RETURNING notes_counter INTO NEW.sync_counter;
            RETURN NEW;
        END
        $$
        """,
        """
        CREATE TRIGGER notes_sync_counter BEFORE INSERT OR UPDATE ON notes FOR EACH ROW EXECUTE FUNCTION tresor_notes_sync_counter()
        """,
        // An account deleted with its notes has no row left to count in: nothing to tell.
        """
        CREATE FUNCTION tresor_notes_sync_gone() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            counter BIGINT;
        BEGIN
            UPDATE accounts SET notes_counter = notes_counter + 1 WHERE id = OLD.account_id RETURNING notes_counter INTO counter;
            IF FOUND THEN
                INSERT INTO sync_notes_gone (account_id, note_id, sync_counter) VALUES (OLD.account_id, OLD.id, counter)
                ON CONFLICT (account_id, note_id) DO UPDATE SET sync_counter = EXCLUDED.sync_counter;
            END IF;
            RETURN OLD;
        END
        $$
        """,
        """
        CREATE TRIGGER notes_sync_gone AFTER DELETE ON notes FOR EACH ROW EXECUTE FUNCTION tresor_notes_sync_gone()
        """,
    ]

    /// The notes' settings counter: every change of an account's folders or notes passphrases
    /// (a new one, its hint, which is current) takes the next number of
    /// `accounts.notes_settings_counter`, by trigger, so a device that saw a number asks for
    /// neither again until it moves (docs/SYNC.md, "A sync with nothing to do"). A number, not a
    /// digest of what is there: a folder made and deleted again moves it twice.
    static let version5: [String] = [
        """
        ALTER TABLE accounts ADD COLUMN notes_settings_counter BIGINT NOT NULL DEFAULT 0
        """,
        """
        CREATE FUNCTION tresor_notes_settings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE accounts SET notes_settings_counter = notes_settings_counter + 1
            WHERE id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END);
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER folders_notes_settings AFTER INSERT OR UPDATE OR DELETE ON folders
        FOR EACH ROW EXECUTE FUNCTION tresor_notes_settings_changed()
        """,
        """
        CREATE TRIGGER passphrases_notes_settings AFTER INSERT OR UPDATE OR DELETE ON passphrases
        FOR EACH ROW EXECUTE FUNCTION tresor_notes_settings_changed()
        """,
        """
        CREATE FUNCTION tresor_current_passphrase_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.notes_settings_counter = OLD.notes_settings_counter + 1;
            RETURN NEW;
        END
        $$
        """,
        """
        CREATE TRIGGER accounts_current_passphrase BEFORE UPDATE OF current_passphrase_id ON accounts
        FOR EACH ROW WHEN (OLD.current_passphrase_id IS DISTINCT FROM NEW.current_passphrase_id)
        EXECUTE FUNCTION tresor_current_passphrase_changed()
        """,
    ]

    /// A lock removed on a device from a note with attachments (docs/SYNC.md, "A lock removed
    /// travels"): the device sends each attachment's plaintext first, kept here as its
    /// **unlocked copy** beside the sealed chunks it replaces — `attachment_unlocked_copies`
    /// (complete once all of it came) and its chunks in `attachment_unlocked_chunks`, sealed
    /// under the server key bound as `attachment_chunks` binds them, so the lock removal's
    /// transaction moves them into `attachment_chunks` as they are. A copy goes with its
    /// attachment.
    static let version6: [String] = [
        """
        CREATE TABLE attachment_unlocked_copies (
            id TEXT PRIMARY KEY REFERENCES attachments(id) ON DELETE CASCADE,
            byte_count BIGINT NOT NULL,
            chunk_count BIGINT NOT NULL,
            complete BOOLEAN NOT NULL DEFAULT FALSE
        )
        """,
        """
        CREATE TABLE attachment_unlocked_chunks (
            attachment_id TEXT NOT NULL REFERENCES attachment_unlocked_copies(id) ON DELETE CASCADE,
            chunk_index BIGINT NOT NULL,
            sealed_bytes BYTEA NOT NULL,
            PRIMARY KEY (attachment_id, chunk_index)
        )
        """,
    ]

    /// An attachment's excluded-from-backup flag (`tresor note attach --exclude-from-backup`),
    /// kept so that it travels between the account's devices (docs/SYNC.md, "Attachments").
    static let version7: [String] = [
        """
        ALTER TABLE attachments ADD COLUMN excluded_from_backup BOOLEAN NOT NULL DEFAULT FALSE
        """
    ]
}
