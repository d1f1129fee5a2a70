import FoundationEssentials

extension Route {
    /// `POST`: answer the Secret Service on a session bus (``SecretServiceBusRequest``).
    public static let secretServiceBus = "/v1/secret-service/bus"
}

/// `POST /v1/secret-service/bus`: answer the Secret Service, and follow the screen saver, on the
/// session bus at `address` — what a `tresord --secret-service` started in a desktop session (by
/// the bus, on a program's first use) asks of the daemon already running for its home, started
/// before that session had a bus (at login, by the PAM module).
public struct SecretServiceBusRequest: Codable, Sendable, Equatable {
    /// The bus's address, as `DBUS_SESSION_BUS_ADDRESS` gives it (a `unix:` address).
    public var address: String

    /// Makes a bus request; the parameter is the property of the same name.
    public init(address: String) { self.address = address }
}

/// The answer to ``SecretServiceBusRequest``: the daemon answers on that bus now.
public struct SecretServiceBusAnswer: Codable, Sendable, Equatable {
    /// What the daemon serves on the Secret Service, in `tresor status`'s words.
    public var secretService: String
    /// Whether this request started it; false, the daemon answered on that bus already.
    public var started: Bool

    /// Makes a bus answer; the parameters are the properties of the same names.
    public init(secretService: String, started: Bool) {
        self.secretService = secretService
        self.started = started
    }
}
