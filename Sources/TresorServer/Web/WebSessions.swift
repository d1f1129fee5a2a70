import Foundation
import Synchronization
import TresorCrypto
import TresorNotes

/// A signed-in browser: which account, when it signed in, its CSRF token, and whether the
/// browser says its secure session (its locked-note keys) is open.
struct WebSession: Sendable {
    let account: WebAccount
    /// A public name for the session (`tresor web sessions`): random, and no use for signing in.
    let id: String
    /// The SHA-256 of the cookie's token: the token itself is never kept.
    let tokenDigest: Data
    /// The SHA-256 of the origin token: the second half of the session, which the page keeps
    /// in its origin's storage and sends as `X-Tresor-Origin-Token` (docs/WEB.md, "The origin
    /// token"). Browsers send the cookie to every port of 127.0.0.1; this they send only from
    /// our page.
    let originTokenDigest: Data
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

    /// Starts a session for `account`: its cookie token and origin token (each sent once, in
    /// the sign-in answer) and the session.
    func start(for account: WebAccount, now: Date = Date()) -> (token: String, originToken: String, session: WebSession) {
        let token = Self.randomToken()
        let originToken = Self.randomToken()
        let digest = Self.digest(token)
        let session = WebSession(
            account: account, id: SecureRandom.bytes(count: 8).map { String(format: "%02x", $0) }.joined(), tokenDigest: digest,
            originTokenDigest: Self.digest(originToken), csrfToken: Self.randomToken(), created: now, lastUsed: now,
            secureSessionReported: nil)
        sessions.withLock { sessions in
            if sessions.count >= Self.capacity, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                sessions[oldest.key] = nil
            }
            sessions[digest] = session
        }
        return (token, originToken, session)
    }

    /// The live session of a cookie token and its origin token, marked as used now; nil for a
    /// forged, ended or expired token, or an origin token that is not this session's (a cookie
    /// alone is worth nothing). An expired session is removed.
    func session(forToken token: String, originToken: String, now: Date = Date()) -> WebSession? {
        // Anything but our own format is forged: no need to hash arbitrary input.
        guard token.utf8.count == 43, originToken.utf8.count == 43 else { return nil }
        let digest = Self.digest(token)
        let originDigest = Self.digest(originToken)
        return sessions.withLock { sessions in
            guard var session = sessions[digest], ConstantTime.equals(session.tokenDigest, digest),
                  ConstantTime.equals(session.originTokenDigest, originDigest)
            else { return nil }
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

    /// The live sessions, oldest sign-in first (`tresor web sessions`).
    func list(now: Date = Date()) -> [WebSession] {
        sessions.withLock { sessions in sessions.values.filter { isLive($0, now: now) } }
            .sorted { ($0.created, $0.id) < ($1.created, $1.id) }
    }

    /// Signs out the sessions `which` selects; returns how many ended.
    @discardableResult
    func end(where which: (WebSession) -> Bool) -> Int {
        sessions.withLock { sessions in
            let ended = sessions.filter { which($0.value) }.map(\.key)
            for key in ended { sessions[key] = nil }
            return ended.count
        }
    }

    /// Records what the browser says about its secure session.
    func reportSecureSession(_ session: WebSession, open: Bool, now: Date = Date()) {
        sessions.withLock { sessions in
            sessions[session.tokenDigest]?.secureSessionReported = open ? now : nil
        }
    }

    /// Whether the browser of `session` said its secure session is open, recently enough to
    /// still count (the widget follows each browser's own).
    func secureSessionOpen(of session: WebSession, now: Date = Date()) -> Bool {
        sessions.withLock { sessions in
            guard let current = sessions[session.tokenDigest], isLive(current, now: now), let reported = current.secureSessionReported else { return false }
            return now.timeIntervalSince(reported) < TimeInterval(secureSessionSeconds)
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

    /// Whether the session of this cookie-token digest is live (live updates end with it).
    func isLive(tokenDigest: Data, now: Date = Date()) -> Bool {
        sessions.withLock { sessions in sessions[tokenDigest].map { isLive($0, now: now) } ?? false }
    }

    /// When `session` ends unless used again: its absolute expiry or its idle one, the earlier.
    func expiry(of session: WebSession) -> Date {
        min(session.created.addingTimeInterval(TimeInterval(sessionSeconds)), session.lastUsed.addingTimeInterval(TimeInterval(idleSeconds)))
    }

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
