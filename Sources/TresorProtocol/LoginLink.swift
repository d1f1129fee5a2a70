/// `POST /v1/login-link`: tie the login keybag to the login password (`tresor passcode link-login`).
public struct LinkLoginRequest: Codable, Sendable {
    /// The keybag's passcode: linking is the user's consent.
    public var passcode: String
    /// The user's login password (1 to 1,024 bytes of UTF-8), which will unlock the keybag at login.
    public var loginPassword: String
    /// Makes a link request; the parameters are the properties of the same names.
    public init(passcode: String, loginPassword: String) {
        self.passcode = passcode
        self.loginPassword = loginPassword
    }
}

/// `POST /v1/login-link/remove`: stop unlocking the keybag at login. The passcode, as for
/// linking: no other program of the user's takes the link away behind their back.
public struct UnlinkLoginRequest: Codable, Sendable {
    /// The keybag's passcode (checked, and counted when wrong, only while a link exists).
    public var passcode: String
    /// Makes an unlink request; the parameter is the property of the same name.
    public init(passcode: String) { self.passcode = passcode }
}

/// `POST /v1/login-link/unlock`: the PAM module hands over the password the user logged in (or
/// unlocked the screen) with. One that does not open the link is never a wrong passcode.
public struct LoginUnlockRequest: Codable, Sendable {
    /// The login password as the user typed it (1 to 1,024 bytes of UTF-8).
    public var password: String
    /// Makes a login unlock request; the parameter is the property of the same name.
    public init(password: String) { self.password = password }
}

/// `POST /v1/login-link/password-changed`: the PAM module saw the login password change
/// (`passwd`). Without `old` (root's `passwd USER`) the link is marked stale.
public struct LoginPasswordChangedRequest: Codable, Sendable {
    /// The login password before the change, which must open the link; nil when the change was
    /// made without it (root's `passwd USER`): the link is then marked stale.
    public var old: String?
    /// The new login password, which the link is re-wrapped under.
    public var new: String
    /// Makes a password change notice; the parameters are the properties of the same names.
    public init(old: String?, new: String) {
        self.old = old
        self.new = new
    }
}

/// The login link in `GET /v1/status`.
public struct LoginLinkInfo: Codable, Sendable, Equatable {
    /// Why the link may no longer open with the login password: the wire values of the same name.
    public enum Staleness: String, Codable, Sendable {
        /// Changed without the old password (root's `passwd USER`).
        case passwordChangedWithoutOld
        /// A login password handed over did not open it.
        case passwordDidNotOpen
    }

    /// When it was made, in seconds since the Unix epoch.
    public var linkedAt: Double
    /// Set when the link may no longer match the login password: relink with `tresor passcode link-login`.
    public var stale: Staleness?
    /// When the link became stale, in seconds since the Unix epoch; nil when `stale` is nil.
    public var staleSince: Double?
    /// Distinct login passwords that did not open it since the last one that did.
    public var failedAttempts: Int
    /// Seconds until the link takes another login password, while a delay runs; nil otherwise.
    public var retryAfterSeconds: Int?
    /// Set when logging in opens another home than this one — the PAM module knows only the
    /// user's home folder, not `TRESOR_HOME` or `XDG_DATA_HOME` —: the path of the home it opens.
    /// This home is then not unlocked at login.
    public var loginOpensOtherHome: String?

    /// Makes a login link description; the parameters are the properties of the same names.
    public init(
        linkedAt: Double, stale: Staleness?, staleSince: Double?, failedAttempts: Int, retryAfterSeconds: Int?, loginOpensOtherHome: String? = nil
    ) {
        self.loginOpensOtherHome = loginOpensOtherHome
        self.linkedAt = linkedAt
        self.stale = stale
        self.staleSince = staleSince
        self.failedAttempts = failedAttempts
        self.retryAfterSeconds = retryAfterSeconds
    }
}
