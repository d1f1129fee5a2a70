import Foundation
import PostgresNIO
import TresorWebStore

/// A server's invites, hashed in its database: an invite made through one instance is redeemed
/// on another, once.
final class PostgresInviteStore: WebInviteStore {
    private let db: ServerDatabase

    init(db: ServerDatabase) {
        self.db = db
    }

    func issue(name: String, now: Date) async throws -> (code: String, expires: Date) {
        let code = SessionTokens.random()
        let expires = now.addingTimeInterval(WebInviteLifetime.seconds)
        try await db.transaction { [logger = db.logger] connection in
            try await connection.run("DELETE FROM web_invites WHERE expires <= \(now.timeIntervalSince1970)", logger)
            try await connection.run(
                """
                INSERT INTO web_invites (login_name, code_digest, expires) VALUES (\(name), \(SessionTokens.digest(code)), \(expires.timeIntervalSince1970))
                ON CONFLICT (login_name) DO UPDATE SET code_digest = EXCLUDED.code_digest, expires = EXCLUDED.expires
                """, logger)
        }
        return (code, expires)
    }

    func redeem(name: String, code: String, now: Date) async throws -> Bool {
        let digest = SessionTokens.digest(code)
        // One statement: of two instances redeeming the same invite at once, one deletes it.
        return try await db.read { [logger = db.logger] connection in
            try await connection.count(
                """
                DELETE FROM web_invites WHERE login_name = \(name) AND code_digest = \(digest) AND expires > \(now.timeIntervalSince1970)
                RETURNING 1
                """, logger)
        } > 0
    }
}
