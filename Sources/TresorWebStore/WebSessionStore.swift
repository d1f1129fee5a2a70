import Foundation
import TresorCrypto
import TresorNotesDomain

/// A signed-in browser: which account, when it signed in, its CSRF token, and whether the
/// browser says its secure session (its locked-note keys) is open.
public struct WebSession: Sendable, Equatable {
    public var account: WebAccount
    /// A public name for the session (`tresor web sessions`): random, and no use for signing in.
    public var id: String
    /// The SHA-256 of the cookie's token: the token itself is never kept.
    public var tokenDigest: Data
    /// The SHA-256 of the origin token, the second half of the session (docs/WEB.md, "The
    /// origin token").
    public var originTokenDigest: Data
    public var csrfToken: String
    public var created: Date
    public var lastUsed: Date
    /// When the browser last said its secure session is open; nil when it said closed, or never.
    public var secureSessionReported: Date?
    /// Where it was signed in from; nil for a session started without one.
    public var client: WebSessionClient?

    public init(
        account: WebAccount, id: String, tokenDigest: Data, originTokenDigest: Data, csrfToken: String, created: Date,
        lastUsed: Date, secureSessionReported: Date?, client: WebSessionClient? = nil
    ) {
        self.client = client
        self.account = account
        self.id = id
        self.tokenDigest = tokenDigest
        self.originTokenDigest = originTokenDigest
        self.csrfToken = csrfToken
        self.created = created
        self.lastUsed = lastUsed
        self.secureSessionReported = secureSessionReported
    }
}

/// How long sessions last (docs/WEB.md, "Accounts and sessions").
public struct SessionLifetimes: Sendable, Equatable {
    /// A sign-in ends this long after it was made…
    public var sessionSeconds: Int
    /// …or this long after its last request.
    public var idleSeconds: Int
    /// How long a browser's "my secure session is open" counts without being said again.
    public var secureSessionSeconds: Int

    public init(sessionSeconds: Int, idleSeconds: Int, secureSessionSeconds: Int) {
        self.sessionSeconds = sessionSeconds
        self.idleSeconds = idleSeconds
        self.secureSessionSeconds = secureSessionSeconds
    }

    /// How stale a session's recorded last use may get before a request records it again: a
    /// tenth of the idle time, at most a minute. A store that writes the use to disk (the
    /// server's database) writes it this seldom, so a session may end up to this much before its
    /// idle time — never after it.
    public var useRecordingInterval: TimeInterval { min(60, TimeInterval(idleSeconds) / 10) }

    /// Whether a session made at `created` and last used at `lastUsed` is live at `now`.
    public func isLive(created: Date, lastUsed: Date, now: Date) -> Bool {
        now.timeIntervalSince(created) < TimeInterval(sessionSeconds) && now.timeIntervalSince(lastUsed) < TimeInterval(idleSeconds)
    }

    /// When `session` ends unless used again: its absolute expiry or its idle one, the earlier.
    public func expiry(of session: WebSession) -> Date {
        min(session.created.addingTimeInterval(TimeInterval(sessionSeconds)), session.lastUsed.addingTimeInterval(TimeInterval(idleSeconds)))
    }

    /// Whether a secure session reported open at `reported` still counts at `now`.
    public func secureSessionCounts(reported: Date?, now: Date) -> Bool {
        guard let reported else { return false }
        return now.timeIntervalSince(reported) < TimeInterval(secureSessionSeconds)
    }
}

/// A new session's secrets, each sent to the browser once, in the sign-in answer.
public struct StartedSession: Sendable {
    /// The cookie's token.
    public var token: String
    /// The origin token the page keeps in its origin's storage.
    public var originToken: String
    public var session: WebSession

    public init(token: String, originToken: String, session: WebSession) {
        self.token = token
        self.originToken = originToken
        self.session = session
    }
}

/// Which sessions to sign out.
public enum SessionSelection: Sendable, Equatable {
    /// The one of this public id.
    case id(String)
    /// Every one.
    case all
    /// Every session of an account but one (a password change keeps the changing one).
    case account(AccountID, except: String?)
    /// Every session of the local account (a keybag lock, a passcode change).
    case localAccount
}

/// Where sessions live: daemon memory for one embedded daemon, the database for a server of
/// several instances — where a sign-out on one instance ends the session on all at the next
/// request. Tokens are 256 random bits, kept only as their SHA-256.
public protocol WebSessionStore: Sendable {
    /// How long sessions last.
    var lifetimes: SessionLifetimes { get }

    /// Starts a session for `account`.
    /// - Parameters:
    ///   - account: who signed in.
    ///   - client: where from, kept for the session's listing.
    ///   - now: the time.
    /// - Returns: the tokens to send once, and the session.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func start(for account: WebAccount, client: WebSessionClient?, now: Date) async throws -> StartedSession

    /// The live session of a cookie token and its origin token, marked as used now (at most
    /// ``SessionLifetimes/useRecordingInterval`` late); nil for a forged, ended or expired one,
    /// or an origin token of another session.
    /// - Parameters:
    ///   - token: the cookie's token.
    ///   - originToken: the `X-Tresor-Origin-Token` header.
    ///   - now: the time.
    /// - Returns: the session, or nil.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func session(forToken token: String, originToken: String, now: Date) async throws -> WebSession?

    /// Signs sessions out.
    /// - Parameter selection: which.
    /// - Returns: how many ended.
    /// - Throws: ``NotesError/unavailable(_:)``.
    @discardableResult
    func end(_ selection: SessionSelection) async throws -> Int

    /// The live sessions, oldest sign-in first.
    /// - Parameter now: the time.
    /// - Returns: the sessions.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func list(now: Date) async throws -> [WebSession]

    /// Records what a browser says about its secure session.
    /// - Parameters:
    ///   - session: the browser's session.
    ///   - open: whether its secure session is open.
    ///   - now: the time.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func reportSecureSession(_ session: WebSession, open: Bool, now: Date) async throws

    /// Whether the browser of `session` said recently enough that its secure session is open.
    /// - Parameters:
    ///   - session: the browser's session.
    ///   - now: the time.
    /// - Returns: true when it counts.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func secureSessionOpen(of session: WebSession, now: Date) async throws -> Bool

    /// Forgets every browser's secure-session report (the keybag locked).
    /// - Throws: ``NotesError/unavailable(_:)``.
    func forgetSecureSessions() async throws

    /// Removes expired sessions.
    /// - Parameter now: the time.
    /// - Returns: how many.
    /// - Throws: ``NotesError/unavailable(_:)``.
    @discardableResult
    func removeExpired(now: Date) async throws -> Int

    /// Which of these cookie-token digests belong to live sessions (live updates end with them).
    /// - Parameters:
    ///   - digests: token digests.
    ///   - now: the time.
    /// - Returns: the live ones.
    /// - Throws: ``NotesError/unavailable(_:)``.
    func liveSessions(among digests: [Data], now: Date) async throws -> Set<Data>
}

/// How session secrets are made and compared (both stores).
public enum SessionTokens {
    /// The session cookie's name.
    public static let cookieName = "tresor_session"

    /// 32 random bytes, base64url without padding (43 characters).
    public static func random() -> String {
        SecureRandom.bytes(count: 32).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A token's SHA-256, which is all a store keeps of it.
    public static func digest(_ token: String) -> Data { Digest.sha256(Data(token.utf8)) }

    /// Whether `token` has the shape ``random()`` makes: anything else is forged, and not hashed.
    public static func isWellFormed(_ token: String) -> Bool { token.utf8.count == 43 }

    /// A session's public id: 8 random bytes in hex.
    public static func publicID() -> String {
        SecureRandom.bytes(count: 8).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
        }.joined()
    }

    /// A new session for `account`: its tokens and the session to keep.
    /// - Parameters:
    ///   - account: who signed in.
    ///   - now: the time.
    /// - Returns: the tokens and the session.
    public static func newSession(for account: WebAccount, client: WebSessionClient?, now: Date) -> StartedSession {
        let token = random(), originToken = random()
        let session = WebSession(
            account: account, id: publicID(), tokenDigest: digest(token), originTokenDigest: digest(originToken), csrfToken: random(),
            created: now, lastUsed: now, secureSessionReported: nil, client: client)
        return StartedSession(token: token, originToken: originToken, session: session)
    }
}

extension WebSessionStore {
    /// Starts a session for `account` with no client recorded (``start(for:client:now:)``).
    public func start(for account: WebAccount, now: Date) async throws -> StartedSession {
        try await start(for: account, client: nil, now: now)
    }
}
