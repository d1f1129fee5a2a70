import FoundationEssentials

// The web server's sessions, seen and ended from the socket (`tresor web sessions`,
// docs/WEB.md "Sessions end"). Tokens never leave the daemon: a session is named by a random
// id that signs nobody in.

extension Route {
    /// `GET`: every live web session (``WebSessionList``).
    public static let webSessions = "/v1/web/sessions"
    /// `POST`: end one session or all (``EndWebSessionsRequest`` → ``EndWebSessionsResponse``).
    public static let endWebSessions = "/v1/web/sessions/end"
}

/// One signed-in browser.
public struct WebSessionInfo: Codable, Equatable, Sendable {
    /// The session's public id (16 hex digits): names it for `end`, and is no credential.
    public var id: String
    /// The account's login name (`local` for the local account).
    public var account: String
    public var isLocal: Bool
    public var created: Date
    public var lastUsed: Date
    public var expires: Date
    /// The client's address at sign-in; nil when not recorded.
    public var address: String?
    /// Its browser and system in words ("Firefox on Linux"); nil when not known.
    public var browser: String?

    public init(
        id: String, account: String, isLocal: Bool, created: Date, lastUsed: Date, expires: Date, address: String? = nil, browser: String? = nil
    ) {
        self.address = address
        self.browser = browser
        self.id = id
        self.account = account
        self.isLocal = isLocal
        self.created = created
        self.lastUsed = lastUsed
        self.expires = expires
    }
}

/// `GET /v1/web/sessions`.
public struct WebSessionList: Codable, Equatable, Sendable {
    /// Oldest sign-in first.
    public var sessions: [WebSessionInfo]

    public init(sessions: [WebSessionInfo]) { self.sessions = sessions }
}

/// `POST /v1/web/sessions/end`: exactly one of `id` and `all`.
public struct EndWebSessionsRequest: Codable, Equatable, Sendable {
    public var id: String?
    public var all: Bool?

    public init(id: String? = nil, all: Bool? = nil) {
        self.id = id
        self.all = all
    }
}

/// How many sessions a `POST /v1/web/sessions/end` signed out.
public struct EndWebSessionsResponse: Codable, Equatable, Sendable {
    public var ended: Int

    public init(ended: Int) { self.ended = ended }
}
