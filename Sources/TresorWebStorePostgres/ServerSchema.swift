import Foundation
import Logging
import PostgresNIO

/// The server database's schema (docs/FORMAT.md, "A Tresor server's database"): versioned SQL,
/// applied in order, once, under an advisory lock — however many instances start at once, one
/// applies each version and the others find it done. An instance refuses a database of a newer
/// version than it knows, and a database holding another application's tables.
enum ServerSchema {
    /// The advisory lock every instance takes to migrate ("tresor" in ASCII).
    static let lockKey: Int64 = 0x7472_6573_6f72
    /// The first key of the advisory locks a sign-in counter is updated under ("thrt").
    static let throttleLockSpace: Int32 = 0x7468_7274
    /// The versions, in order; each one's SQL runs in the migrating transaction.
    static let versions: [(version: Int, statements: [String])] = [
        (1, version1), (2, version2), (3, version3), (4, version4), (5, version5), (6, version6), (7, version7), (8, version8),
        (9, version9), (10, version10), (11, version11),
    ]
    static var latest: Int { versions.last!.version }
    /// The tables Tresor makes (a database holding others belongs to another application).
    static let tables: Set<String> = Set([
        "tresor_schema", "tresor_server", "web_sessions", "web_throttles", "web_invites", "web_password_resets",
        "accounts", "passphrases", "folders", "notes", "participants", "attachments", "attachment_uploads", "attachment_chunks",
    ]).union(syncTables).union(notesSyncTables)

    /// Brings the database to ``latest``, checks the server key against it (recording its check
    /// value on a new database), and returns the versions this call applied.
    /// - Throws: ``ServerSetupError/foreignDatabase(database:tables:)``,
    ///   ``ServerSetupError/newerSchema(found:known:)``, ``ServerSetupError/wrongServerKey``.
    static func migrate(_ db: ServerDatabase, sealing: ServerSealing, name: String, now: Date) async throws -> [Int] {
        let logger = db.logger
        return try await db.transaction { connection in
            try await connection.run("SELECT pg_advisory_xact_lock(\(lockKey))", logger)
            let existing = Set(
                try await connection.column(
                    "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()", logger, as: String.self))
            var current = 0
            if existing.contains("tresor_schema") {
                current = try await connection.value("SELECT COALESCE(MAX(version), 0)::bigint FROM tresor_schema", logger, as: Int.self) ?? 0
                // A newer Tresor's tables are not another application's: the version says so first.
                guard current <= latest else { throw ServerSetupError.newerSchema(found: current, known: latest) }
            }
            let foreign = existing.subtracting(tables)
            if !foreign.isEmpty { throw ServerSetupError.foreignDatabase(database: name, tables: foreign.sorted()) }
            if current == 0, !existing.isEmpty {
                throw ServerSetupError.foreignDatabase(database: name, tables: existing.sorted())
            }
            var applied: [Int] = []
            for (version, statements) in versions where version > current {
                for statement in statements { try await connection.run(PostgresQuery(unsafeSQL: statement), logger) }
                try await connection.run("INSERT INTO tresor_schema (version, applied) VALUES (\(version), \(now.timeIntervalSince1970))", logger)
                applied.append(version)
            }
            try await checkKey(connection, sealing: sealing, now: now, logger)
            return applied
        }
    }

    /// Records the key's check value on a new database; on any other, opens it.
    private static func checkKey(_ connection: PostgresConnection, sealing: ServerSealing, now: Date, _ logger: Logger) async throws {
        if let sealed = try await connection.value("SELECT key_check FROM tresor_server WHERE id = 1", logger, as: Data.self) {
            guard (try? sealing.open(sealed, "tresor_server", "1", "key_check")) == Data(ServerSealing.keyCheckText.utf8) else {
                throw ServerSetupError.wrongServerKey
            }
            return
        }
        let check = try sealing.sealText(ServerSealing.keyCheckText, "tresor_server", "1", "key_check")
        try await connection.run("INSERT INTO tresor_server (id, key_check, created) VALUES (1, \(check), \(now.timeIntervalSince1970))", logger)
    }

    /// The server's key check, sessions, sign-in counters and invites (accounts, notes, shares
    /// and attachments are ``version2``).
    static let version1: [String] = [
        """
        CREATE TABLE tresor_schema (version INTEGER PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)
        """,
        """
        CREATE TABLE tresor_server (id INTEGER PRIMARY KEY CHECK (id = 1), key_check BYTEA NOT NULL, created DOUBLE PRECISION NOT NULL)
        """,
        """
        CREATE TABLE web_sessions (
            token_digest BYTEA PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            account_id TEXT NOT NULL,
            account_name TEXT NOT NULL,
            account_is_local BOOLEAN NOT NULL DEFAULT FALSE,
            origin_digest BYTEA NOT NULL,
            csrf_token TEXT NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            last_used DOUBLE PRECISION NOT NULL,
            secure_session_reported DOUBLE PRECISION
        )
        """,
        """
        CREATE INDEX web_sessions_account ON web_sessions(account_id)
        """,
        """
        CREATE TABLE web_throttles (
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            count INTEGER NOT NULL,
            last DOUBLE PRECISION NOT NULL,
            in_flight INTEGER NOT NULL,
            PRIMARY KEY (kind, key)
        )
        """,
        """
        CREATE TABLE web_invites (
            login_name TEXT PRIMARY KEY,
            code_digest BYTEA NOT NULL,
            expires DOUBLE PRECISION NOT NULL
        )
        """,
    ]

    /// The web accounts and their notes (`PostgresWebStore`): every title, body, folder name,
    /// attachment name and byte, locked ciphertext and hint is sealed (``ServerSealing``); ids,
    /// dates, sizes, pins, revisions and who shares what are in the clear (docs/FORMAT.md, "A
    /// Tresor server's database").
    static let version2: [String] = [
        """
        CREATE TABLE accounts (
            id TEXT PRIMARY KEY,
            login_name TEXT NOT NULL UNIQUE,
            password_salt BYTEA NOT NULL,
            password_rounds BIGINT NOT NULL,
            password_hash BYTEA NOT NULL,
            current_passphrase_id BIGINT,
            failed_passphrase_entries BIGINT NOT NULL DEFAULT 0,
            last_passphrase_failure DOUBLE PRECISION,
            created DOUBLE PRECISION NOT NULL
        )
        """,
        """
        CREATE TABLE passphrases (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            generation BIGINT NOT NULL,
            salt BYTEA NOT NULL,
            iterations BIGINT NOT NULL,
            verifier BYTEA NOT NULL,
            proof_hash BYTEA,
            sealed_hint BYTEA,
            created DOUBLE PRECISION NOT NULL,
            UNIQUE (account_id, generation)
        )
        """,
        """
        ALTER TABLE accounts ADD CONSTRAINT accounts_current_passphrase FOREIGN KEY (current_passphrase_id) REFERENCES passphrases(id)
        """,
        """
        CREATE TABLE folders (
            id TEXT PRIMARY KEY,
            account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            sealed_name BYTEA NOT NULL,
            created DOUBLE PRECISION NOT NULL
        )
        """,
        """
        CREATE INDEX folders_account ON folders(account_id)
        """,
        """
        CREATE TABLE notes (
            id TEXT PRIMARY KEY,
            account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            folder_id TEXT REFERENCES folders(id) ON DELETE SET NULL,
            created DOUBLE PRECISION NOT NULL,
            modified DOUBLE PRECISION NOT NULL,
            pinned BOOLEAN NOT NULL DEFAULT FALSE,
            revision BIGINT NOT NULL DEFAULT 1,
            deleted DOUBLE PRECISION,
            sealed_title BYTEA NOT NULL,
            sealed_body BYTEA,
            passphrase_id BIGINT REFERENCES passphrases(id),
            crypto_salt BYTEA,
            crypto_iterations BIGINT,
            crypto_wrapped_key BYTEA,
            crypto_iv BYTEA,
            crypto_tag BYTEA,
            sealed_ciphertext BYTEA,
            body_format TEXT NOT NULL DEFAULT 'text',
            note_proof_hash BYTEA
        )
        """,
        """
        CREATE INDEX notes_account ON notes(account_id, deleted)
        """,
        """
        CREATE INDEX notes_folder ON notes(folder_id)
        """,
        """
        CREATE INDEX notes_passphrase ON notes(passphrase_id) WHERE passphrase_id IS NOT NULL
        """,
        """
        CREATE INDEX notes_deleted ON notes(deleted) WHERE deleted IS NOT NULL
        """,
        // Revisions (docs/FORMAT.md, "Revisions and merges"): as in the embedded store, every
        // statement that sets a note's content, lock, pin, folder or place in Recently Deleted
        // counts its revision up, so no code path can change a note unnoticed by a late save.
        """
        CREATE FUNCTION tresor_notes_revision() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.revision := OLD.revision + 1;
            RETURN NEW;
        END
        $$
        """,
        """
        CREATE TRIGGER notes_revision BEFORE UPDATE OF
            account_id, folder_id, modified, pinned, sealed_title, sealed_body, passphrase_id, crypto_iv, crypto_tag,
            sealed_ciphertext, deleted
        ON notes FOR EACH ROW EXECUTE FUNCTION tresor_notes_revision()
        """,
        """
        CREATE TABLE participants (
            note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
            account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            added DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (note_id, account_id)
        )
        """,
        """
        CREATE INDEX participants_account ON participants(account_id)
        """,
        """
        CREATE TABLE attachments (
            id TEXT PRIMARY KEY,
            note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            sealed_name BYTEA NOT NULL,
            byte_count BIGINT NOT NULL,
            chunk_count BIGINT NOT NULL,
            is_locked BOOLEAN NOT NULL DEFAULT FALSE,
            created DOUBLE PRECISION NOT NULL
        )
        """,
        """
        CREATE INDEX attachments_note ON attachments(note_id)
        """,
        // An upload in progress: its chunks are written as they arrive, the attachment row comes
        // with the last one. Uploads a day old are swept with their chunks.
        """
        CREATE TABLE attachment_uploads (
            id TEXT PRIMARY KEY,
            note_id TEXT NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
            started DOUBLE PRECISION NOT NULL
        )
        """,
        """
        CREATE TABLE attachment_chunks (
            attachment_id TEXT NOT NULL,
            chunk_index BIGINT NOT NULL,
            sealed_bytes BYTEA NOT NULL,
            PRIMARY KEY (attachment_id, chunk_index)
        )
        """,
    ]

    /// Where each session was signed in from (``WebSessionClient``), for `tresor web sessions`:
    /// sessions from before have none.
    static let version10: [String] = [
        """
        ALTER TABLE web_sessions ADD COLUMN client_address TEXT, ADD COLUMN client_browser TEXT
        """
    ]

    /// Codes the owner made to set a forgotten password (`tresor web reset-password NAME`),
    /// hashed as invites are.
    static let version11: [String] = [
        """
        CREATE TABLE web_password_resets (
            login_name TEXT PRIMARY KEY,
            code_digest BYTEA NOT NULL,
            expires DOUBLE PRECISION NOT NULL
        )
        """
    ]
}
