import Foundation
import Logging
import PostgresNIO
import TresorModel
import TresorNotesDomain
import TresorWebStore

/// A server's web sessions, in its database (docs/WEB.md, "Running a Tresor server"): every
/// instance finds a session another one started, and a sign-out on one instance ends it on all
/// at their next request. Only the SHA-256 of each token is kept.
final class PostgresSessionStore: WebSessionStore {
    let lifetimes: SessionLifetimes
    private let db: ServerDatabase

    init(db: ServerDatabase, lifetimes: SessionLifetimes) {
        self.db = db
        self.lifetimes = lifetimes
    }

    /// The oldest `created` and `last_used` a session live at `now` may have.
    private func liveBounds(_ now: Date) -> (created: Double, lastUsed: Double) {
        (now.timeIntervalSince1970 - Double(lifetimes.sessionSeconds), now.timeIntervalSince1970 - Double(lifetimes.idleSeconds))
    }

    func start(for account: WebAccount, client: WebSessionClient?, now: Date) async throws -> StartedSession {
        let started = SessionTokens.newSession(for: account, client: client, now: now)
        let session = started.session
        try await db.transaction { [logger = db.logger] connection in
            try await connection.run(
                """
                INSERT INTO web_sessions (token_digest, id, account_id, account_name, account_is_local, origin_digest, csrf_token, created, last_used,
                                          client_address, client_browser)
                VALUES (\(session.tokenDigest), \(session.id), \(account.id.rawValue), \(account.name), \(account.isLocal),
                        \(session.originTokenDigest), \(session.csrfToken), \(now.timeIntervalSince1970), \(now.timeIntervalSince1970),
                        \(client?.address), \(client?.browser))
                """, logger)
        }
        return started
    }

    func session(forToken token: String, originToken: String, now: Date) async throws -> WebSession? {
        guard SessionTokens.isWellFormed(token), SessionTokens.isWellFormed(originToken) else { return nil }
        let digest = SessionTokens.digest(token), originDigest = SessionTokens.digest(originToken)
        let bounds = liveBounds(now)
        // A read, and a write only when the recorded use is older than the recording interval:
        // a durable UPDATE for every request was a commit per note opened.
        let row = try await db.read { [logger = db.logger] connection in
            try await connection.row(
                """
                SELECT \(unescaped: Self.columns) FROM web_sessions
                WHERE token_digest = \(digest) AND origin_digest = \(originDigest) AND created > \(bounds.created) AND last_used > \(bounds.lastUsed)
                """, logger, as: SessionRow.self)
        }
        guard var session = row.map(Self.session) else { return nil }
        if now.timeIntervalSince(session.lastUsed) >= lifetimes.useRecordingInterval {
            try await db.read { [logger = db.logger] connection in
                try await connection.run(
                    "UPDATE web_sessions SET last_used = \(now.timeIntervalSince1970) WHERE token_digest = \(digest) AND last_used < \(now.timeIntervalSince1970)",
                    logger)
            }
        }
        session.lastUsed = now
        return session
    }

    func end(_ selection: SessionSelection) async throws -> Int {
        let query: PostgresQuery
        switch selection {
        case .id(let id): query = "DELETE FROM web_sessions WHERE id = \(id) RETURNING 1"
        case .all: query = "DELETE FROM web_sessions RETURNING 1"
        case .account(let account, let except):
            query = "DELETE FROM web_sessions WHERE account_id = \(account.rawValue) AND id IS DISTINCT FROM \(except) RETURNING 1"
        case .localAccount: query = "DELETE FROM web_sessions WHERE account_is_local RETURNING 1"
        }
        return try await db.read { [logger = db.logger] connection in try await connection.count(query, logger) }
    }

    func list(now: Date) async throws -> [WebSession] {
        let bounds = liveBounds(now)
        let rows = try await db.read { [logger = db.logger] connection in
            try await connection.rows(
                """
                SELECT \(unescaped: Self.columns) FROM web_sessions
                WHERE created > \(bounds.created) AND last_used > \(bounds.lastUsed) ORDER BY created, id
                """, logger, as: SessionRow.self)
        }
        return rows.map(Self.session)
    }

    func reportSecureSession(_ session: WebSession, open: Bool, now: Date) async throws {
        let reported: Double? = open ? now.timeIntervalSince1970 : nil
        try await db.read { [logger = db.logger] connection in
            try await connection.run(
                "UPDATE web_sessions SET secure_session_reported = \(reported) WHERE token_digest = \(session.tokenDigest)", logger)
        }
    }

    func secureSessionOpen(of session: WebSession, now: Date) async throws -> Bool {
        let bounds = liveBounds(now)
        let reported = try await db.read { [logger = db.logger] connection in
            try await connection.value(
                """
                SELECT secure_session_reported FROM web_sessions
                WHERE token_digest = \(session.tokenDigest) AND created > \(bounds.created) AND last_used > \(bounds.lastUsed)
                """, logger, as: Double?.self)
        }
        guard let reported, let reported else { return false }
        return lifetimes.secureSessionCounts(reported: Date(timeIntervalSince1970: reported), now: now)
    }

    func forgetSecureSessions() async throws {
        try await db.read { [logger = db.logger] connection in
            try await connection.run(
                "UPDATE web_sessions SET secure_session_reported = NULL WHERE secure_session_reported IS NOT NULL", logger)
        }
    }

    func removeExpired(now: Date) async throws -> Int {
        let bounds = liveBounds(now)
        return try await db.read { [logger = db.logger] connection in
            try await connection.count(
                "DELETE FROM web_sessions WHERE created <= \(bounds.created) OR last_used <= \(bounds.lastUsed) RETURNING 1", logger)
        }
    }

    func liveSessions(among digests: [Data], now: Date) async throws -> Set<Data> {
        guard !digests.isEmpty else { return [] }
        let bounds = liveBounds(now)
        let hex = digests.map(\.hexString)
        let live = try await db.read { [logger = db.logger] connection in
            try await connection.column(
                """
                SELECT token_digest FROM web_sessions
                WHERE encode(token_digest, 'hex') = ANY(\(hex)) AND created > \(bounds.created) AND last_used > \(bounds.lastUsed)
                """, logger, as: Data.self)
        }
        return Set(live)
    }

    private typealias SessionRow = (String, String, String, Bool, Data, Data, String, Double, Double, Double?, String?, String?)
    private static let columns =
        "id, account_id, account_name, account_is_local, token_digest, origin_digest, csrf_token, created, last_used, secure_session_reported, "
        + "client_address, client_browser"

    private static func session(_ row: SessionRow) -> WebSession {
        let (id, accountID, accountName, isLocal, tokenDigest, originDigest, csrf, created, lastUsed, reported, address, browser) = row
        return WebSession(
            account: WebAccount(id: AccountID(rawValue: accountID), name: accountName, isLocal: isLocal), id: id, tokenDigest: tokenDigest,
            originTokenDigest: originDigest, csrfToken: csrf, created: Date(timeIntervalSince1970: created),
            lastUsed: Date(timeIntervalSince1970: lastUsed), secureSessionReported: reported.map(Date.init(timeIntervalSince1970:)),
            client: address == nil && browser == nil ? nil : WebSessionClient(address: address, browser: browser))
    }
}
