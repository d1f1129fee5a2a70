/// `POST /v1/holds`: keep the keybag from locking while idle, for a stated reason.
/// The hold ends with `DELETE /v1/holds/{id}` or when the connection that made it closes.
public struct HoldRequest: Codable, Sendable {
    /// Shown in `tresor status`; 1 to 200 characters.
    public var reason: String
    public init(reason: String) { self.reason = reason }
}

/// An active auto-lock hold.
public struct Hold: Codable, Sendable, Equatable {
    public var id: String
    public var reason: String
    public var client: ClientDescription
    /// Seconds since the Unix epoch.
    public var since: Double

    public init(id: String, reason: String, client: ClientDescription, since: Double) {
        self.id = id
        self.reason = reason
        self.client = client
        self.since = since
    }
}

/// Who a client is, as the daemon established it from the socket's peer credentials.
public struct ClientDescription: Codable, Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    /// The executable path as `/proc/<pid>/exe` names it.
    public var executable: String
    /// Hex SHA-256 of the executable the kernel mapped.
    public var executableSHA256: String

    public init(pid: Int32, uid: UInt32, executable: String, executableSHA256: String) {
        self.pid = pid
        self.uid = uid
        self.executable = executable
        self.executableSHA256 = executableSHA256
    }
}
