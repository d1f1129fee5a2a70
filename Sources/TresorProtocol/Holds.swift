/// `POST /v1/holds`: keep the keybag from locking while idle, for a stated reason.
/// The hold ends with `DELETE /v1/holds/{id}` or when the connection that made it closes.
public struct HoldRequest: Codable, Sendable {
    /// Why the keybag must stay unlocked, shown in `tresor status`: 1 to 200 characters after
    /// trimming white space, no control characters.
    public var reason: String
    /// Makes a hold request; the parameter is the property of the same name.
    public init(reason: String) { self.reason = reason }
}

/// An active auto-lock hold.
public struct Hold: Codable, Sendable, Equatable {
    /// Names the hold in `DELETE /v1/holds/{id}`: opaque (today a lower-case UUID).
    public var id: String
    /// Why the keybag must stay unlocked, as the client gave it (trimmed).
    public var reason: String
    /// The client that made the hold.
    public var client: ClientDescription
    /// Seconds since the Unix epoch.
    public var since: Double

    /// Makes a hold; the parameters are the properties of the same names.
    public init(id: String, reason: String, client: ClientDescription, since: Double) {
        self.id = id
        self.reason = reason
        self.client = client
        self.since = since
    }
}

/// Who a client is, as the daemon established it from the socket's peer credentials.
public struct ClientDescription: Codable, Sendable, Equatable {
    /// The client's process id.
    public var pid: Int32
    /// The client's user id (the daemon's own: other users are refused).
    public var uid: UInt32
    /// The executable path as `/proc/<pid>/exe` names it.
    public var executable: String
    /// Hex SHA-256 of the executable the kernel mapped.
    public var executableSHA256: String

    /// Makes a client description; the parameters are the properties of the same names.
    public init(pid: Int32, uid: UInt32, executable: String, executableSHA256: String) {
        self.pid = pid
        self.uid = uid
        self.executable = executable
        self.executableSHA256 = executableSHA256
    }
}
