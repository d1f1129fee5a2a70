import FoundationEssentials

// Invites to register a web account (docs/WEB.md, "Registration"; docs/API.md): the owner
// makes one for a name with `tresor web invite NAME` and hands the code over; the web server's
// registration takes it. The name is the owner's choice, so registering reveals nothing
// about which other names exist.

extension Route {
    /// `POST /v1/web/invites` `{name}` → ``WebInvite``. The `tresor` CLI only.
    public static let webInvites = "/v1/web/invites"
}

/// `POST /v1/web/invites`: an invite for this login name.
public struct WebInviteRequest: Codable, Sendable {
    /// The login name: 1 to 32 of `a-z 0-9 . _ -` after case folding, not `local` nor a name
    /// already registered.
    public var name: String

    /// Makes an invite request; the parameter is the property of the same name.
    public init(name: String) { self.name = name }
}

/// An invite: the code to hand to the person who registers `name`, once.
public struct WebInvite: Codable, Sendable {
    /// The login name the invite registers (case-folded).
    public var name: String
    /// 43 characters of base64url: 256 random bits.
    public var code: String
    /// When the code stops working (seconds since 1970 on the wire): 7 days on, or sooner if
    /// the daemon stops.
    public var expires: Date
    /// Whether the web server takes invites now (`"webRegistration": "invite"`, the default);
    /// with `open` anyone registers without one.
    public var registration: String

    /// Makes an invite; the parameters are the properties of the same names.
    public init(name: String, code: String, expires: Date, registration: String) {
        self.name = name
        self.code = code
        self.expires = expires
        self.registration = registration
    }
}
