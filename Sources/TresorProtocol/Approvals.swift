import FoundationEssentials
import TresorModel
import TresorSystem

/// An application waiting for the user to allow a secret that needs their presence, or a
/// change to an item that needs the user (`POST /v1/approvals/next`, for `tresor approve`).
public struct ApprovalRequest: Codable, Sendable, Equatable {
    /// Names this request in the answer.
    public var id: String
    /// The application's id (`TEAM.app`).
    public var application: String
    /// The executable the daemon identified.
    public var executable: String
    /// Which item, in words: its class and the attributes the application asked by.
    public var item: String
    /// What the application asks to do with the item; nil (a daemon that does not say) is a read.
    public var access: SecretAccess?
    /// When the application asked, in seconds since the Unix epoch.
    public var created: Double
    /// The process that asks, then its parent, its parent's parent… as the daemon read them
    /// when it asked (nil from a daemon that does not say).
    public var processes: [ApprovalProcess]?
    /// Set when the daemon could not verify which program asks (a bus connection another
    /// process may be speaking on): why. The executable above is then only what the bus names.
    public var unverifiedIdentity: String?

    /// Makes an approval request; the parameters are the properties of the same names.
    public init(
        id: String, application: String, executable: String, item: String, access: SecretAccess? = nil, created: Double,
        processes: [ApprovalProcess]? = nil, unverifiedIdentity: String? = nil
    ) {
        self.id = id
        self.application = application
        self.executable = executable
        self.item = item
        self.access = access
        self.created = created
        self.processes = processes
        self.unverifiedIdentity = unverifiedIdentity
    }
}

/// A process in an approval request: the one that asks, or one of its parents, as
/// ``ProcessChain`` reads it.
public typealias ApprovalProcess = ProcessSummary

extension ApprovalRequest {
    /// What the application asks, in words that go before the item: "asks for the secret of",
    /// "asks to replace the secret of", "asks to delete".
    public var asks: String {
        switch access ?? .read {
        case .read: "asks for the secret of"
        case .replace: "asks to replace the secret of"
        case .delete: "asks to delete"
        }
    }

    /// Who asks, in lines for the user (`tresor approve`, the desktop's prompter): the process and
    /// each of its parents, and a warning when the daemon could not verify the program. Every
    /// control and formatting character is shown as `?`: a command line is the asker's own text,
    /// and must not draw anything on the user's screen.
    public var requesterLines: [String] {
        var lines: [String] = []
        if let unverified = unverifiedIdentity {
            lines.append("Tresor could not verify which program asks: \(TerminalText.printable(unverified, limit: 300))")
        }
        for (index, process) in (processes ?? []).enumerated() {
            let command = process.commandLine.isEmpty ? process.executable : process.commandLine.joined(separator: " ")
            let who = index == 0 ? "process" : String(repeating: "  ", count: min(index, 8)) + "started by"
            lines.append("\(who) \(process.pid): \(TerminalText.printable(command, limit: 300))")
        }
        return lines
    }
}

/// `POST /v1/approvals/next`: how long to wait for a request (1–60 s, default 25).
public struct NextApprovalRequest: Codable, Sendable, Equatable {
    /// How long to wait for a request, 1 to 60 seconds; nil: 25.
    public var waitSeconds: Int?
    /// Makes a wait request; the parameter is the property of the same name.
    public init(waitSeconds: Int? = nil) { self.waitSeconds = waitSeconds }
}

/// `POST /v1/approvals/next`'s answer: a request, or none within the wait.
public struct NextApprovalResponse: Codable, Sendable, Equatable {
    /// The next application waiting; nil when none asked within the wait.
    public var request: ApprovalRequest?
    /// Makes the answer; the parameter is the property of the same name.
    public init(request: ApprovalRequest?) { self.request = request }
}

/// `POST /v1/approvals/answer`: allowing needs the passcode — it is what proves the user is
/// there; refusing does not.
public struct ApprovalAnswer: Codable, Sendable, Equatable {
    /// The request's `id`, as `POST /v1/approvals/next` gave it (`404 notFound` when the
    /// application stopped waiting).
    public var id: String
    /// `true` allows the request (with `passcode`), `false` refuses it.
    public var allow: Bool
    /// The keybag passcode: required to allow (`401 passcodeRequired` without it; counted when
    /// wrong, as at unlock).
    public var passcode: String?
    /// Allowing a generic Secret Service client (secret-tool, git's helper, an interpreter): remember
    /// it under the same parent processes for this many seconds ("for this session") instead of
    /// allowing one read; 1 second to 366 days. Nil, or for any other request: once.
    public var rememberSeconds: Int?

    /// Makes an answer; the parameters are the properties of the same names.
    public init(id: String, allow: Bool, passcode: String? = nil, rememberSeconds: Int? = nil) {
        self.id = id
        self.allow = allow
        self.passcode = passcode
        self.rememberSeconds = rememberSeconds
    }
}
