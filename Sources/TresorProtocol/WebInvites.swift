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
    public var name: String

    public init(name: String) { self.name = name }
}

/// An invite: the code to hand to the person who registers `name`, once.
public struct WebInvite: Codable, Sendable {
    /// The login name the invite registers (case-folded).
    public var name: String
    /// 43 characters of base64url: 256 random bits.
    public var code: String
    public var expires: Date
    /// Whether the web server takes invites now (`"webRegistration": "invite"`, the default);
    /// with `open` anyone registers without one.
    public var registration: String

    public init(name: String, code: String, expires: Date, registration: String) {
        self.name = name
        self.code = code
        self.expires = expires
        self.registration = registration
    }
}
