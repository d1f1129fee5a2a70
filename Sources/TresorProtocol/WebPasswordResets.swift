import FoundationEssentials

// A forgotten web account password (docs/WEB.md, "A forgotten password"; docs/API.md): the
// owner makes a one-time code for the account with `tresor web reset-password NAME` and hands
// it over; the web client's "Forgot your password?" form takes it with a new password.

extension Route {
    /// `POST /v1/web/password-resets` `{name}` → ``WebPasswordReset``. The `tresor` CLI only.
    public static let webPasswordResets = "/v1/web/password-resets"
}

/// `POST /v1/web/password-resets`: a code to set a new password for this web account.
public struct WebPasswordResetRequest: Codable, Sendable {
    /// The account's login name (case-folded); not `local`, whose password is the passcode.
    public var name: String

    /// Makes a request; the parameter is the property of the same name.
    public init(name: String) { self.name = name }
}

/// A password-reset code: the one time the code is shown, to hand to the account's owner.
public struct WebPasswordReset: Codable, Sendable {
    /// The account's login name (case-folded).
    public var name: String
    /// 43 characters of base64url: 256 random bits.
    public var code: String
    /// When the code stops working (seconds since 1970 on the wire): a day on, or sooner if
    /// the daemon of a home stops.
    public var expires: Date

    /// Makes a reset; the parameters are the properties of the same names.
    public init(name: String, code: String, expires: Date) {
        self.name = name
        self.code = code
        self.expires = expires
    }
}
