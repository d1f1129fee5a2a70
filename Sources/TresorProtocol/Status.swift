import TresorModel

/// `GET /v1/status`: the daemon and its keybag. Holds no secret.
public struct DaemonStatus: Codable, Sendable, Equatable {
    /// The API version this daemon serves (``APIVersion/current``).
    public var apiVersion: Int
    /// The daemon's release (``TresorVersion/current``).
    public var daemonVersion: String
    /// The daemon's process id.
    public var pid: Int32
    /// The absolute path of the home this daemon serves.
    public var home: String
    /// The login keybag's state.
    public var keybag: KeybagState
    /// Why the keybag is `damaged`, or a warning about the attempts file.
    public var problem: String?
    /// Whether the login keybag has a passcode.
    public var passcodeSet: Bool
    /// Consecutive distinct wrong passcodes since the last right one (the login keybag's); kept
    /// across daemon restarts.
    public var failedAttempts: Int
    /// Seconds until the next passcode attempt is allowed; nil when one is allowed now.
    public var retryAfterSeconds: Int?
    /// Protection classes whose keys are in memory.
    public var availableClasses: [String]
    /// Idle time before the keybag locks itself; 0 means never.
    public var autoLockSeconds: Int
    /// Whole seconds since the last client activity (`GET /v1/status` is not activity).
    public var idleSeconds: Int
    /// Active auto-lock holds, oldest first.
    public var holds: [Hold]
    /// Keychains the user created, with their own lock state (the login keychain follows `keybag`).
    public var keychains: [KeychainSummary]?
    /// Terminals where the `tresor` tool reveals secrets without asking (`tresor unlock --for`).
    public var terminalSessions: [TerminalSessionInfo]?
    /// The login keybag's link to the login password (`tresor passcode link-login`), when made.
    public var loginLink: LoginLinkInfo?
    /// Why the keybag was locked last (`keybag` is `locked`): "auto-lock after 300 s idle",
    /// "asked by /usr/bin/tresor (pid 41)", "the login session locked"…
    public var lockReason: String?
    /// When that was, in seconds since the Unix epoch.
    public var lockedAt: Double?
    /// How the keybag was unlocked last (`keybag` is `unlocked`): "the login password, through
    /// the PAM module (a login or a screen unlock)", "the passcode, from /usr/bin/tresor (pid 41)",
    /// "the passcode in the desktop's prompter, for /usr/bin/secret-tool"…
    public var unlockedBy: String?
    /// When that was, in seconds since the Unix epoch.
    public var unlockedAt: Double?
    /// What reset the auto-lock clock last ("/usr/bin/secret-tool read a secret on the Secret
    /// Service", "the web client of the local account"…).
    public var lastActivity: String?
    /// What the daemon serves besides its socket.
    public var serving: ServingInfo?

    /// Makes a status; the parameters are the properties of the same names, and the properties
    /// it does not take start nil.
    public init(
        apiVersion: Int, daemonVersion: String, pid: Int32, home: String, keybag: KeybagState, problem: String?,
        passcodeSet: Bool, failedAttempts: Int, retryAfterSeconds: Int?, availableClasses: [String],
        autoLockSeconds: Int, idleSeconds: Int, holds: [Hold]
    ) {
        self.apiVersion = apiVersion
        self.daemonVersion = daemonVersion
        self.pid = pid
        self.home = home
        self.keybag = keybag
        self.problem = problem
        self.passcodeSet = passcodeSet
        self.failedAttempts = failedAttempts
        self.retryAfterSeconds = retryAfterSeconds
        self.availableClasses = availableClasses
        self.autoLockSeconds = autoLockSeconds
        self.idleSeconds = idleSeconds
        self.holds = holds
    }
}

/// What a daemon serves besides its socket API, as `tresor status` shows it.
public struct ServingInfo: Codable, Sendable, Equatable {
    /// The web client's address (`http://127.0.0.1:8080/`), when the daemon serves it.
    public var web: String?
    /// The Secret Service on the session bus: "answering on the session bus", or why it is not ("not started: …");
    /// omitted when it is not asked for.
    public var secretService: String?
    /// The session bus the Secret Service answers on (`unix:path=/run/user/1000/bus`), while it
    /// answers: `tresor daemon restart` hands it to the daemon it starts.
    public var secretServiceBus: String?
    /// The last Secret Service prompt refused because nobody could be asked, since the daemon started.
    public var lastPromptNobodyAnswered: DismissedPrompt?

    /// Makes a serving description; the parameters are the properties of the same names.
    public init(
        web: String? = nil, secretService: String? = nil, secretServiceBus: String? = nil, lastPromptNobodyAnswered: DismissedPrompt? = nil
    ) {
        self.web = web
        self.secretService = secretService
        self.secretServiceBus = secretServiceBus
        self.lastPromptNobodyAnswered = lastPromptNobodyAnswered
    }
}

/// A desktop client's prompt (Secret Service) refused because nobody could be asked — no
/// desktop prompter, nobody at `tresor unlock` in time, no `tresor approve` waiting — so the
/// client got nothing: dismissed, or its `Prompt` call failed saying why. `tresor status` says
/// when, for which program, and why.
public struct DismissedPrompt: Codable, Sendable, Equatable {
    /// What the client waited for.
    public enum WaitedFor: String, Codable, Sendable {
        /// The keybag unlocked.
        case unlock
        /// The user's approval of a read (an item that needs the user, a generic client's read),
        /// or of a generic client's change (``access`` says which).
        case approval
    }

    /// When it was refused, in seconds since the Unix epoch.
    public var at: Double
    /// The client's executable, as `tresor secret-service owners` names it.
    public var executable: String
    /// What the client waited for: the keybag unlocked, or the user's approval.
    public var waitedFor: WaitedFor
    /// For an approval: what the client asked to do (nil from a daemon that does not say: a read).
    public var access: SecretAccess?
    /// Why nobody was asked, in words.
    public var reason: String

    /// Makes a dismissed prompt; the parameters are the properties of the same names.
    public init(at: Double, executable: String, waitedFor: WaitedFor, access: SecretAccess? = nil, reason: String) {
        self.at = at
        self.executable = executable
        self.waitedFor = waitedFor
        self.access = access
        self.reason = reason
    }
}

/// A terminal session as `tresor status` shows it: which keychain, which terminal, until when.
public struct TerminalSessionInfo: Codable, Sendable, Equatable {
    /// The longest terminal session `tresor unlock --for` opens: one hour.
    public static let longestSeconds = 3600

    /// The keychain the session is for (`login` or a created keychain).
    public var keychain: String
    /// The terminal as `tty` names it without `/dev/` (`pts/3`).
    public var terminal: String
    /// When it ends, in seconds since the Unix epoch (sooner if the keybag locks).
    public var expires: Double

    /// Makes a terminal session description; the parameters are the properties of the same names.
    public init(keychain: String, terminal: String, expires: Double) {
        self.keychain = keychain
        self.terminal = terminal
        self.expires = expires
    }
}
