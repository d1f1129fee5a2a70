import Foundation
import Logging
import PostgresNIO
import TresorWebStore

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
    static let versions: [(version: Int, statements: [String])] = [(1, version1)]
    static var latest: Int { versions.last!.version }
    /// The tables Tresor makes (a database holding others belongs to another application).
    static let tables: Set<String> = ["tresor_schema", "tresor_server", "web_sessions", "web_throttles", "web_invites"]

    /// Brings the database to ``latest``, checks the server key against it (recording its check
    /// value on a new database), and returns the versions this call applied.
    /// - Throws: ``ServerSetupError/foreignDatabase(database:tables:)``,
    ///   ``ServerSetupError/newerSchema(found:known:)``, ``ServerSetupError/wrongServerKey``.
    static func migrate(_ db: ServerDatabase, sealing: ServerSealing, name: String, now: Date) async throws -> [Int] {
        let logger = db.logger
        return try await db.transaction { connection in
            try await connection.run("SELECT pg_advisory_xact_lock(\(lockKey))", logger)
            let existing = Set(try await connection.column(
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

    /// The server's key check, sessions, sign-in counters and invites. (Accounts, notes, shares
    /// and attachments come with the PostgreSQL `WebStore`, as a version of their own.)
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
}
