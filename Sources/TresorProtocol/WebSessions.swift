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
    /// Whether the account is the home's local account (the one the `tresor` CLI acts for).
    public var isLocal: Bool
    /// When the browser signed in (seconds since 1970 on the wire).
    public var created: Date
    /// When the session last made a request.
    public var lastUsed: Date
    /// When the session ends unless used again: the sooner of its longest life and its idle limit.
    public var expires: Date
    /// The client's address at sign-in; nil when not recorded.
    public var address: String?
    /// Its browser and system in words ("Firefox on Linux"); nil when not known.
    public var browser: String?

    /// Makes a session description; the parameters are the properties of the same names.
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

    /// Makes a session list; the parameter is the property of the same name.
    public init(sessions: [WebSessionInfo]) { self.sessions = sessions }
}

/// `POST /v1/web/sessions/end`: exactly one of `id` and `all`.
public struct EndWebSessionsRequest: Codable, Equatable, Sendable {
    /// The session to end, by its public id (`404 notFound` when there is none); not with `all`.
    public var id: String?
    /// `true` ends every session; not with `id`.
    public var all: Bool?

    /// Makes an end request; the parameters are the properties of the same names.
    public init(id: String? = nil, all: Bool? = nil) {
        self.id = id
        self.all = all
    }
}

/// How many sessions a `POST /v1/web/sessions/end` signed out.
public struct EndWebSessionsResponse: Codable, Equatable, Sendable {
    /// How many sessions were signed out.
    public var ended: Int

    /// Makes the answer; the parameter is the property of the same name.
    public init(ended: Int) { self.ended = ended }
}
