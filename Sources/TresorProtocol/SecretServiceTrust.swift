import FoundationEssentials

extension Route {
    /// `GET`: the generic Secret Service clients the user trusts now (``SecretServiceTrustList``);
    /// `POST`: trust one ahead of time (``SecretServiceTrustGrant``).
    public static let secretServiceTrust = "/v1/secret-service/trust"
    /// `POST`: take trust back (``SecretServiceTrustRemoval``).
    public static let secretServiceTrustRemove = "/v1/secret-service/trust/remove"
}

/// A generic Secret Service client (an interpreter, secret-tool, git's credential helper) the
/// user trusts: its secrets are read without asking until ``until`` (docs/SECURITY.md, "Generic clients").
public struct SecretServiceTrustEntry: Codable, Sendable, Equatable {
    /// How the trust came about.
    public enum Origin: String, Codable, Sendable {
        /// `tresor secret-service trust add`, ahead of time: any process running the executable.
        case granted
        /// The user's "for this session" answer to a request: the executable run under the same
        /// parent chain only.
        case approved
    }

    /// The executable's group (``ExecutableGroup``: `exe:/usr/bin/secret-tool`, `exe-sha256:…`).
    public var executable: String
    /// How the trust came about.
    public var origin: Origin
    /// For ``Origin/approved``: the own group of each ancestor, the parent first, up to the login
    /// session's leader, then the session (`session:<leader pid>@<its start time>`). Empty for a
    /// grant, which holds under any parent.
    public var parentChain: [String]
    /// Seconds since the Unix epoch.
    public var since: Double
    /// Seconds since the Unix epoch; nil: until the daemon stops.
    public var until: Double?
    /// For ``Origin/granted``: the path it was granted by (links followed) — what a group known
    /// by its hash alone (`exe-sha256:…`) was, for the user to recognise it.
    public var path: String?

    /// Makes a trust entry; the parameters are the properties of the same names.
    public init(executable: String, origin: Origin, parentChain: [String], since: Double, until: Double?, path: String? = nil) {
        self.executable = executable
        self.origin = origin
        self.parentChain = parentChain
        self.since = since
        self.until = until
        self.path = path
    }
}

/// `GET /v1/secret-service/trust`, and the answer to each change.
public struct SecretServiceTrustList: Codable, Sendable, Equatable {
    /// Every generic client trusted now.
    public var trusted: [SecretServiceTrustEntry]
    /// Makes a trust list; the parameter is the property of the same name.
    public init(trusted: [SecretServiceTrustEntry]) { self.trusted = trusted }
}

/// `POST /v1/secret-service/trust`: trust the generic clients at `executablePaths` ahead of time,
/// for `seconds` (nil: until the daemon stops) — all of them, or none when one is not a generic
/// client. Needs the keybag unlocked and, when one is set, the passcode.
public struct SecretServiceTrustGrant: Codable, Sendable, Equatable {
    /// The executables to trust, 1 to 16 paths; each must be a generic client (`400 param`
    /// otherwise, and none is trusted).
    public var executablePaths: [String]
    /// How long the trust lasts, 1 second to ``longestSeconds``; nil: until the daemon stops.
    public var seconds: Int?
    /// The longest a generic client is trusted ahead of time or remembered for a session
    /// (`rememberSeconds` of an approval too): 366 days.
    public static let longestSeconds = 366 * 86400
    /// The keybag passcode again: required when one is set, counted when wrong.
    public var passcode: String?

    /// Makes a trust request; the parameters are the properties of the same names.
    public init(executablePaths: [String], seconds: Int?, passcode: String?) {
        self.executablePaths = executablePaths
        self.seconds = seconds
        self.passcode = passcode
    }
}

/// `POST /v1/secret-service/trust/remove`: take back all trust in the executable at
/// `executablePath`, or all trust in every one (`all`).
public struct SecretServiceTrustRemoval: Codable, Sendable, Equatable {
    /// The executable, by path or as the list names it (`exe:PATH`, `exe-sha256:HEX`); nil with `all`.
    /// One that is not trusted is `404 notFound`.
    public var executablePath: String?
    /// `true` takes back the trust in every executable; not with `executablePath`.
    public var all: Bool

    /// Makes a removal request; the parameters are the properties of the same names.
    public init(executablePath: String?, all: Bool) {
        self.executablePath = executablePath
        self.all = all
    }
}
