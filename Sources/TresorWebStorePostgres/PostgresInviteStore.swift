import Foundation
import PostgresNIO
import TresorWebStore

/// A server's invites, or its password-reset codes, hashed in its database (`web_invites`,
/// `web_password_resets`): a code made through one instance is redeemed on another, once.
final class PostgresInviteStore: WebInviteStore {
    private let db: ServerDatabase
    private let table: String
    private let lifetime: TimeInterval

    init(db: ServerDatabase, purpose: WebInvitePurpose) {
        self.db = db
        lifetime = purpose.lifetime
        switch purpose {
        case .registration: table = "web_invites"
        case .passwordReset: table = "web_password_resets"
        }
    }

    func issue(name: String, now: Date) async throws -> (code: String, expires: Date) {
        let code = SessionTokens.random()
        let expires = now.addingTimeInterval(lifetime)
        try await db.transaction { [logger = db.logger, table] connection in
            try await connection.run("DELETE FROM \(unescaped: table) WHERE expires <= \(now.timeIntervalSince1970)", logger)
            try await connection.run(
                """
                INSERT INTO \(unescaped: table) (login_name, code_digest, expires) VALUES (\(name), \(SessionTokens.digest(code)), \(expires.timeIntervalSince1970))
                ON CONFLICT (login_name) DO UPDATE SET code_digest = EXCLUDED.code_digest, expires = EXCLUDED.expires
                """, logger)
        }
        return (code, expires)
    }

    func redeem(name: String, code: String, now: Date) async throws -> Bool {
        let digest = SessionTokens.digest(code)
        // One statement: of two instances redeeming the same code at once, one deletes it.
        return try await db.read { [logger = db.logger, table] connection in
            try await connection.count(
                """
                DELETE FROM \(unescaped: table) WHERE login_name = \(name) AND code_digest = \(digest) AND expires > \(now.timeIntervalSince1970)
                RETURNING 1
                """, logger)
        } > 0
    }
}
