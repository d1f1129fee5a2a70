extension ServerSchema {
    /// The tables of notes sync (docs/SYNC.md, "Notes").
    static let notesSyncTables: Set<String> = [
        "sync_notes_gone", "sync_note_origins", "attachment_unlocked_copies", "attachment_unlocked_chunks",
        "sync_shared_note_changes",
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

    /// Notes shared with an account reach its devices (docs/SYNC.md, "Shared notes"): every
    /// write of a shared note takes, for each participant, the next number of *that
    /// participant's* notes counter, and so does a participant added or removed (also by
    /// cascade, a note deleted for good). `sync_shared_note_changes` keeps each participant's
    /// latest number of each note; whether the note still is the participant's is decided when a
    /// page is read. Participants' rows are locked in id order, as the web store locks a
    /// shared note's accounts before it writes (`noteForWrite`), so two notes shared across
    /// two accounts cannot deadlock. Shares from before count once.
    static let version9: [String] = [
        """
        CREATE TABLE sync_shared_note_changes (
            account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            note_id TEXT NOT NULL,
            sync_counter BIGINT NOT NULL,
            PRIMARY KEY (account_id, note_id)
        )
        """,
        """
        CREATE INDEX sync_shared_note_changes_counter ON sync_shared_note_changes(account_id, sync_counter)
        """,
        """
        WITH numbered AS (
            SELECT account_id, note_id, row_number() OVER (PARTITION BY account_id ORDER BY added, note_id) AS number FROM participants
        )
        INSERT INTO sync_shared_note_changes (account_id, note_id, sync_counter)
        SELECT numbered.account_id, numbered.note_id, accounts.notes_counter + numbered.number
        FROM numbered JOIN accounts ON accounts.id = numbered.account_id
        """,
        """
        UPDATE accounts SET notes_counter = notes_counter + (SELECT COUNT(*) FROM participants WHERE participants.account_id = accounts.id)
        """,
        // A participant's account deleted has no row left to count in: nothing to tell.
        """
        CREATE FUNCTION tresor_shared_note_changed(changed_note TEXT, participant TEXT) RETURNS void LANGUAGE plpgsql AS $$
        DECLARE
            counter BIGINT;
        BEGIN
            UPDATE accounts SET notes_counter = notes_counter + 1 WHERE id = participant RETURNING notes_counter INTO counter;
            IF FOUND THEN
                INSERT INTO sync_shared_note_changes (account_id, note_id, sync_counter) VALUES (participant, changed_note, counter)
                ON CONFLICT (account_id, note_id) DO UPDATE SET sync_counter = EXCLUDED.sync_counter;
            END IF;
        END
        $$
        """,
        """
        CREATE FUNCTION tresor_shared_note_sync_counter() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            participant TEXT;
        BEGIN
            FOR participant IN SELECT account_id FROM participants WHERE note_id = NEW.id ORDER BY account_id LOOP
                PERFORM tresor_shared_note_changed(NEW.id, participant);
            END LOOP;
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER notes_shared_sync_counter AFTER UPDATE ON notes FOR EACH ROW EXECUTE FUNCTION tresor_shared_note_sync_counter()
        """,
        """
        CREATE FUNCTION tresor_participants_sync_counter() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                PERFORM tresor_shared_note_changed(OLD.note_id, OLD.account_id);
            ELSE
                PERFORM tresor_shared_note_changed(NEW.note_id, NEW.account_id);
            END IF;
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER participants_sync_counter AFTER INSERT OR DELETE ON participants
        FOR EACH ROW EXECUTE FUNCTION tresor_participants_sync_counter()
        """,
    ]
}
