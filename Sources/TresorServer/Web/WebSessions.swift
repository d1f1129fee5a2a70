import Foundation
import Synchronization
import TresorCrypto
import TresorNotes

/// A signed-in browser: which account, when it signed in, its CSRF token, and whether the
/// browser says its secure session (its locked-note keys) is open.
struct WebSession: Sendable {
    let account: WebAccount
    /// The SHA-256 of the cookie's token: the token itself is never kept.
    let tokenDigest: Data
    let csrfToken: String
    let created: Date
    var lastUsed: Date
    /// When the browser last said its secure session is open (`POST /api/secure-session`);
    /// nil when it said closed, or never said.
    var secureSessionReported: Date?
}

/// The web server's sessions, in memory only: a daemon restart signs everyone out.
///
/// Tokens are 256 random bits from the system's CSPRNG, sent to the browser once in the
/// cookie and kept here only as their SHA-256, so the table lookup reveals nothing about a
/// valid token; the found digest is then compared in constant time anyway. A session ends
/// `sessionSeconds` after sign-in or `idleSeconds` after its last request.
final class WebSessions: Sendable {
    static let cookieName = "tresor_session"
    /// Sessions at most; the oldest is signed out to make room.
    static let capacity = 4096

    let sessionSeconds: Int
    let idleSeconds: Int
    /// How long a browser's "my secure session is open" counts without being said again.
    let secureSessionSeconds: Int
    private let sessions = Mutex<[Data: WebSession]>([:])

    init(sessionSeconds: Int, idleSeconds: Int, secureSessionSeconds: Int) {
        self.sessionSeconds = sessionSeconds
        self.idleSeconds = idleSeconds
        self.secureSessionSeconds = secureSessionSeconds
    }

    /// Starts a session for `account`: its cookie token (to send once) and the session.
    func start(for account: WebAccount, now: Date = Date()) -> (token: String, session: WebSession) {
        let token = Self.randomToken()
        let digest = Self.digest(token)
        let session = WebSession(
            account: account, tokenDigest: digest, csrfToken: Self.randomToken(), created: now, lastUsed: now, secureSessionReported: nil)
        sessions.withLock { sessions in
            if sessions.count >= Self.capacity, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                sessions[oldest.key] = nil
            }
            sessions[digest] = session
        }
        return (token, session)
    }

    /// The live session of a cookie token, marked as used now; nil for a forged, ended or
    /// expired token (an expired one is removed).
    func session(forToken token: String, now: Date = Date()) -> WebSession? {
        // Anything but our own format is forged: no need to hash arbitrary input.
        guard token.utf8.count == 43 else { return nil }
        let digest = Self.digest(token)
        return sessions.withLock { sessions in
            guard var session = sessions[digest], ConstantTime.equals(session.tokenDigest, digest) else { return nil }
            guard isLive(session, now: now) else {
                sessions[digest] = nil
                return nil
            }
            session.lastUsed = now
            sessions[digest] = session
            return session
        }
    }

    /// Signs a session out.
    func end(_ session: WebSession) {
        sessions.withLock { _ = $0.removeValue(forKey: session.tokenDigest) }
    }

    /// Records what the browser says about its secure session.
    func reportSecureSession(_ session: WebSession, open: Bool, now: Date = Date()) {
        sessions.withLock { sessions in
            sessions[session.tokenDigest]?.secureSessionReported = open ? now : nil
        }
    }

    /// Whether a live browser session of `account` said its secure session is open, recently
    /// enough to still count.
    func secureSessionOpen(for account: AccountID, now: Date = Date()) -> Bool {
        sessions.withLock { sessions in
            sessions.values.contains { session in
                guard session.account.id == account, isLive(session, now: now), let reported = session.secureSessionReported else { return false }
                return now.timeIntervalSince(reported) < TimeInterval(secureSessionSeconds)
            }
        }
    }

    /// The keybag locked: no browser's secure session counts any more until it says so again.
    func forgetSecureSessions() {
        sessions.withLock { sessions in
            for key in sessions.keys where sessions[key]?.secureSessionReported != nil {
                sessions[key]?.secureSessionReported = nil
            }
        }
    }

    /// Removes expired sessions; returns how many.
    @discardableResult
    func removeExpired(now: Date = Date()) -> Int {
        sessions.withLock { sessions in
            let expired = sessions.filter { !isLive($0.value, now: now) }.map(\.key)
            for key in expired { sessions[key] = nil }
            return expired.count
        }
    }

    var count: Int { sessions.withLock { $0.count } }

    private func isLive(_ session: WebSession, now: Date) -> Bool {
        now.timeIntervalSince(session.created) < TimeInterval(sessionSeconds)
            && now.timeIntervalSince(session.lastUsed) < TimeInterval(idleSeconds)
    }

    /// 32 random bytes, base64url without padding (43 characters).
    static func randomToken() -> String {
        SecureRandom.bytes(count: 32).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func digest(_ token: String) -> Data { Digest.sha256(Data(token.utf8)) }
}
