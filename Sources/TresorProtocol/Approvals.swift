import FoundationEssentials

/// An application waiting for the user to allow a secret that needs their presence
/// (`POST /v1/approvals/next`, for `tresor approve`).
public struct ApprovalRequest: Codable, Sendable, Equatable {
    /// Names this request in the answer.
    public var id: String
    /// The application's id (`TEAM.app`).
    public var application: String
    /// The executable the daemon identified.
    public var executable: String
    /// Which item, in words: its class and the attributes the application asked by.
    public var item: String
    /// Seconds since the Unix epoch.
    public var created: Double

    public init(id: String, application: String, executable: String, item: String, created: Double) {
        self.id = id
        self.application = application
        self.executable = executable
        self.item = item
        self.created = created
    }
}

/// `POST /v1/approvals/next`: how long to wait for a request (1–60 s, default 25).
public struct NextApprovalRequest: Codable, Sendable, Equatable {
    public var waitSeconds: Int?
    public init(waitSeconds: Int? = nil) { self.waitSeconds = waitSeconds }
}

/// `POST /v1/approvals/next`'s answer: a request, or none within the wait.
public struct NextApprovalResponse: Codable, Sendable, Equatable {
    public var request: ApprovalRequest?
    public init(request: ApprovalRequest?) { self.request = request }
}

/// `POST /v1/approvals/answer`: allowing needs the passcode — it is what proves the user is
/// there; refusing does not.
public struct ApprovalAnswer: Codable, Sendable, Equatable {
    public var id: String
    public var allow: Bool
    public var passcode: String?
    /// Allowing a generic Secret Service client (secret-tool, git's helper, an interpreter): remember
    /// it under the same parent processes for this many seconds ("for this session") instead of
    /// allowing one read. Nil, or for any other request: once.
    public var rememberSeconds: Int?

    public init(id: String, allow: Bool, passcode: String? = nil, rememberSeconds: Int? = nil) {
        self.id = id
        self.allow = allow
        self.passcode = passcode
        self.rememberSeconds = rememberSeconds
    }
}
