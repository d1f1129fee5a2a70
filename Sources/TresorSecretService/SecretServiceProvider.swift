import FoundationEssentials
import Logging
import Synchronization
import TresorDBus
import TresorKeybag
import TresorKeychain
import TresorModel
import TresorSystem

/// The freedesktop Secret Service (`org.freedesktop.secrets`, "Secret Service API Draft 0.2")
/// answered from Tresor's keychain, so `secret-tool`, git's libsecret helper, Python `keyring`
/// and browsers use Tresor unchanged — each executable seeing only its own items
/// (docs/SECRET-SERVICE.md).
///
/// Everything D-Bus happens on one thread of the provider's own: messages are read, answered
/// and signals sent there, so libdbus never sees two threads. Keychain work is done in place;
/// the lookups clients make are answered from blind indexes in well under a millisecond.
public final class SecretServiceProvider: @unchecked Sendable {
    public static let busName = "org.freedesktop.secrets"

    let connection: DBusConnection
    let login: KeychainCollection
    let memory = MemoryCollection()
    let collectionLabels: CollectionLabels
    let sessions = TransferSessions()
    let lockKeybag: @Sendable () -> Void
    let askUser: PresenceAsker?
    /// Called when a client was handed a secret: activity, for auto-lock.
    let secretRead: (@Sendable (_ executable: String) -> Void)?
    /// Asks the user on the desktop to unlock the keybag for a waiting client; nil, nobody is.
    let askToUnlock: UnlockAsker?
    /// What the user trusts of generic clients (`TresorModel.GenericClients`); nil, nothing: every read of
    /// theirs is asked.
    let trust: (any GenericClientTrust)?
    /// The answers to unlock questions, from the thread that asked, for the D-Bus thread.
    let unlockAnswers = Mutex<[(path: String, answer: UnlockAnswer, executable: String)]>([])
    /// Told of each prompt dismissed because nobody could be asked (for `tresor status`).
    let promptUnasked: (@Sendable (UnaskedPrompt) -> Void)?
    let logger: Logger
    // Touched on the D-Bus thread only.
    let clients: BusClients
    let prompts = Prompts()
    /// `userPresence` items the user approved, by client (unique bus name) and item id, until when.
    var approvals: [String: [String: Date]] = [:]
    /// Generic clients' approved reads, which the same program run by the same process may write back.
    var approvedReads = ApprovedReads()
    /// `Prompt` calls whose reply waits for the asker to say whether anyone can be asked.
    var heldPromptCalls = HeldPromptCalls()
    /// The desktop's one question to unlock the keybag, while it is asked: the prompts waiting on
    /// it (the first is the one it was asked for) and how to take it back.
    var desktopUnlock: (prompts: [String], withdrawal: PromptWithdrawal)?
    /// The questions put to the user about presence prompts, by prompt, while they are asked.
    var presenceQuestions: [String: PromptWithdrawal] = [:]
    /// The calls that made unlock prompts, by prompt: once the keybag is unlocked, the items
    /// among them the client must still ask for are asked about then (``askWhatTheUnlockLeft()``).
    var unlockRequests: [String: SecretRequest] = [:]
    /// The unlock prompts whose desktop question allowed their generic client's read as well: once
    /// the keybag is unlocked, the read is approved without asking again.
    var readsAllowedByUnlock: Set<String> = []
    /// Each client's last `SearchItems`, by unique bus name: an unlock prompt for the locked items
    /// it found names them by the attributes they were found by.
    var lastSearches: [String: ClientSearch] = [:]
    private var loginWasLocked: Bool?
    /// The user's answers to presence prompts, from the thread that asked, for the D-Bus thread;
    /// `unasked` when nobody could be asked.
    let answers = Mutex<[(path: String, allowed: Bool, unasked: UnaskedPrompt?)]>([])

    /// How long an approval waits for the client's read; it serves one read.
    static let approvalLifetime: TimeInterval = 60

    /// - Parameters:
    ///   - address: the bus to serve (the session bus's `DBUS_SESSION_BUS_ADDRESS`).
    ///   - loginKeychain: the login keychain (throws before `tresor init`).
    ///   - identify: who a process is, by the daemon's rules for executables.
    ///   - lockKeybag: what a client's `Lock` does: locks the keybag, as `tresor lock` does.
    ///   - askUser: puts a `userPresence` read to the user (`tresor approve`); nil, nobody is
    ///     asked and such items stay locked.
    ///   - secretRead: called with the client's executable each time a client is handed a secret
    ///     (nil: reads are not activity).
    ///   - askToUnlock: asks the user on the desktop to unlock the keybag for a client's `Unlock`
    ///     prompt; nil, the prompt waits for `tresor unlock` a few seconds only.
    ///   - collectionLabels: the file keeping the names clients give the collections
    ///     (`TresorPaths.secretServiceCollections`); nil, they are kept in memory.
    ///   - trust: what the user trusts of generic clients; nil, nothing is, and each of their
    ///     reads is put to the user as a `userPresence` item's is.
    ///   - promptUnasked: told of each prompt dismissed because nobody could be asked (no desktop
    ///     prompter, nobody at `tresor unlock` or `tresor approve`), once it is dismissed.
    /// - Throws: ``DBusError`` when the bus cannot be reached.
    public init(
        address: String, loginKeychain: @escaping @Sendable () throws -> KeychainStore, identify: @escaping SecretServiceIdentifier,
        lockKeybag: @escaping @Sendable () -> Void, askUser: PresenceAsker? = nil, secretRead: (@Sendable (_ executable: String) -> Void)? = nil,
        askToUnlock: UnlockAsker? = nil, collectionLabels: URL? = nil, trust: (any GenericClientTrust)? = nil,
        promptUnasked: (@Sendable (UnaskedPrompt) -> Void)? = nil, logger: Logger
    ) throws {
        connection = try DBusConnection(address: address)
        login = KeychainCollection(keychain: loginKeychain)
        self.collectionLabels = CollectionLabels(file: collectionLabels)
        clients = BusClients(identify: identify, connections: BusConnections(connection: connection), logger: logger)
        self.lockKeybag = lockKeybag
        self.askUser = askUser
        self.secretRead = secretRead
        self.askToUnlock = askToUnlock
        self.trust = trust
        self.promptUnasked = promptUnasked
        self.logger = logger
    }

    /// Takes `org.freedesktop.secrets` and starts answering on a thread of its own.
    /// - Parameter whenEnded: called on that thread once it stops answering: ``stop()``, or the
    ///   bus went away (the desktop session ended).
    /// - Throws: ``DBusError`` when another provider (gnome-keyring, KeePassXC) owns the name.
    public func start(whenEnded: @escaping @Sendable () -> Void = {}) throws {
        guard try connection.requestName(Self.busName) else {
            throw DBusError.failed(
                "another Secret Service provider owns \(Self.busName) on this bus; stop it (or import its items first with `tresor import secret-service`)"
            )
        }
        try connection.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        clients.connections.load(from: connection)
        DetachedThread.start { [self] in
            connection.run(tickMilliseconds: 2_000, tick: tick, handle)
            logger.notice("the Secret Service stopped: the bus connection ended")
            whenEnded()
        }
    }

    /// Stops answering (the name is released with the connection).
    public func stop() { connection.stop() }

    /// Has the provider look at the keybag now (after an unlock or a lock), so waiting prompts
    /// complete and `Locked` changes are signalled at once.
    public func keybagChanged() { connection.wake() }

    // MARK: The loop

    private func handle(_ message: DBusMessage) {
        switch message.kind {
        case .signal:
            guard message.member == "NameOwnerChanged", message.sender == "org.freedesktop.DBus",
                case .string(let name)? = message.arguments.first, name.hasPrefix(":"), case .string(let owner)? = message.arguments.last
            else { return }
            if owner.isEmpty {
                clients.forget(name)
                clients.connections.left(name)
                sessions.closeAll(of: name)
                prompts.forget(owner: name)
                heldPromptCalls.forget(sender: name)
                approvals[name] = nil
                lastSearches[name] = nil
            } else {
                // As early as the bus tells: what the process runs now is what it connected as.
                clients.connections.appeared(name, on: connection)
            }
        case .methodCall:
            var signals: [DBusMessage] = []
            let reply: DBusMessage
            do {
                reply = .reply(to: message, try answer(message, signals: &signals))
            } catch {
                let wire = Self.wireError(error)
                logger.debug("secret service call refused", metadata: ["member": "\(message.member ?? "")", "error": "\(wire.name)"])
                reply = .error(to: message, wire)
                signals = []
            }
            if message.expectsReply && !heldPromptCalls.holds(message) { connection.send(reply) }
            signals.forEach(connection.send)
        default:
            break
        }
    }

    private func tick() {
        let locked = login.isLocked
        if let before = loginWasLocked, before != locked {
            connection.send(
                .signal(
                    path: SecretObjectPath.collection(CollectionName.login).path, interface: SecretInterface.properties,
                    member: "PropertiesChanged",
                    arguments: [.string(SecretInterface.collection), .properties(["Locked": .boolean(locked)]), .array(elementSignature: "s", [])]))
        }
        loginWasLocked = locked
        for answer in answers.withLock({ answers in
            defer { answers = [] }; return answers
        }) {
            // Nobody could be asked, or the user refused a change: a client that still waits for
            // its `Prompt` call is told so, as the call's error.
            let refusal = answer.unasked?.refusal ?? (answer.allowed ? nil : prompts.change(at: answer.path)?.refusedByTheUser)
            if let refusal, failHeldCall(of: answer.path, with: refusal) {
                prompts.remove(answer.path)
                if let unasked = answer.unasked { promptUnasked?(unasked) }
                continue
            }
            if let held = heldPromptCalls.release(answer.path) { connection.send(.reply(to: held)) }
            if let unasked = answer.unasked { prompts.nobodyAsked(answer.path, unasked) }
            prompts.answer(answer.path, allowed: answer.allowed)
        }
        heldPromptCalls.expired().forEach { connection.send(.reply(to: $0)) }
        for unlock in unlockAnswers.withLock({ answers in
            defer { answers = [] }; return answers
        }) {
            // One question on the desktop answers every prompt that waited on it.
            var waiting = [unlock.path]
            if let asked = desktopUnlock, asked.prompts.first == unlock.path {
                waiting = asked.prompts
                desktopUnlock = nil
            }
            if case .unlockedAndAllowed(let allowed) = unlock.answer { allowRead(of: unlock.path, allowed) }
            for path in waiting {
                switch unlock.answer {
                case .unlocked, .unlockedAndAllowed: prompts.unlockAnswer(path, refused: false)  // completes below: the keybag is unlocked
                case .refused: prompts.unlockAnswer(path, refused: true)
                case .nobodyToAsk, .unanswered, .wrongPasscodes:
                    // A `tresor unlock` in the while left still completes it; else the client is told why.
                    prompts.unlockAnswer(path, refused: false)
                    let reason =
                        switch unlock.answer {
                        case .unanswered: UnaskedPrompt.unansweredOnTheDesktop
                        case .wrongPasscodes: UnaskedPrompt.wrongPasscodesOnTheDesktop
                        default: UnaskedPrompt.noPrompterToUnlock
                        }
                    let unasked = UnaskedPrompt(executable: unlock.executable, need: .unlock, reason: reason)
                    prompts.nobodyAsked(path, unasked)
                    heldPromptCalls.holdLonger(path, for: HeldPromptCalls.unlockHold)
                }
            }
        }
        defer { withdrawQuestionsNobodyWaitsFor() }
        guard !prompts.isEmpty else { return }
        if !locked { askWhatTheUnlockLeft() }
        let until = Date().addingTimeInterval(Self.approvalLifetime)
        for signal in prompts.due(
            unlocked: !locked,
            approved: { owner, ids in
                for id in ids { approvals[owner, default: [:]][id] = until }
            }, carryOut: { _, change in carryOut(change) },
            unasked: { path, unasked in
                promptUnasked?(unasked)
                return failHeldCall(of: path, with: unasked.refusal)
            })
        {
            // A prompt's `Completed` comes after the reply to its `Prompt` call.
            if let path = signal.path, let held = heldPromptCalls.release(path) { connection.send(.reply(to: held)) }
            connection.send(signal)
        }
    }

    // MARK: Errors

    /// A refusal in the words clients know: the Secret Service's own errors where it has
    /// them, D-Bus's otherwise. Keychain errors never carry a secret.
    static func wireError(_ error: any Error) -> DBusError {
        switch error {
        case let error as DBusError: return error
        case let refusal as StorageRefusal: return .failed(refusal.description)
        case let error as KeychainError:
            switch error {
            case .itemNotFound, .noSuchKeychain: return DBusError(SecretError.noSuchObject, "no such item")
            case .interactionNotAllowed: return DBusError(SecretError.isLocked, "the keybag is locked: unlock it with `tresor unlock`")
            case .presenceRequired:
                return DBusError(SecretError.isLocked, "this item needs you: Unlock it, and allow it in the desktop's prompter or `tresor approve`")
            case .param(let why): return .invalidArguments(why)
            case .missingEntitlement(let why): return .accessDenied(why)
            case .readOnly: return .accessDenied("this collection cannot be changed")
            default: return .failed(error.description)
            }
        // Before `tresor init`, or with the home's keybag or device key damaged: said as it is
        // (no keybag error carries a passcode or key).
        case KeybagError.notInitialized: return .failed("Tresor has no keybag yet: run `tresor init` first")
        case let error as KeybagError: return .failed(error.description)
        default: return .failed("the request could not be served")
        }
    }
}

/// What came of asking the user on the desktop to unlock the keybag.
public enum UnlockAnswer: Sendable, Equatable {
    /// The keybag is unlocked now.
    case unlocked
    /// The keybag is unlocked now, and the generic client's read the question named is allowed
    /// with the same passcode: once, or for this session.
    case unlockedAndAllowed(PresenceAnswer)
    /// The user cancelled.
    case refused
    /// The user typed wrong passcodes until the prompter stopped asking.
    case wrongPasscodes
    /// No desktop prompter could be asked.
    case nobodyToAsk
    /// The desktop's prompter asked, and nobody answered before it gave up.
    case unanswered
}

/// A client's prompt dismissed without the user's yes: nobody could be asked (no desktop prompter,
/// and nobody unlocked with `tresor unlock` in time or waited in `tresor approve`), nobody answered
/// the prompter, or the passcode typed there was wrong each time. The daemon shows the last one in
/// `tresor status`, so a program that got nothing is explained.
public struct UnaskedPrompt: Sendable, Equatable {
    /// What the client waited for.
    public enum Need: String, Sendable {
        /// The keybag unlocked (`Unlock`'s prompt).
        case unlock
        /// The user's approval of a read (an item that needs the user, a generic client's read), or
        /// of a generic client's change to one of its items.
        case approval
    }

    /// The client's executable, as `tresor secret-service owners` names it.
    public var executable: String
    public var need: Need
    /// For an approval: what the client asked to do.
    public var access: SecretAccess?
    /// Why nobody was asked, in words, with what the user can do.
    public var reason: String

    public init(executable: String, need: Need, access: SecretAccess? = nil, reason: String) {
        self.executable = executable
        self.need = need
        self.access = access
        self.reason = reason
    }

    static let noPrompterToUnlock =
        "no desktop prompter could be asked, and nobody ran `tresor unlock` within \(Int(Prompts.unlockWait)) s"
    /// Why a client was refused after the desktop asked and nobody answered.
    static let unansweredOnTheDesktop = "nobody answered the desktop's prompt in time"
    /// Why a client was refused after wrong passcodes in the desktop's prompter.
    static let wrongPasscodesOnTheDesktop = "the passcode typed in the desktop's prompter was wrong each time: run `tresor unlock`"
    /// The error a client that still waits for its `Prompt` call gets instead of a dismissal,
    /// which secret-tool prints.
    var refusal: DBusError {
        switch need {
        case .unlock: DBusError(SecretError.isLocked, "Tresor is locked: \(reason)")
        case .approval: .accessDenied("your approval is needed, but \(reason)")
        }
    }

    /// Why nobody could be asked to approve a read or a change: the Secret Service's and the
    /// socket API's words.
    public static let noPrompterOrApprover =
        "no desktop prompter could be asked, and no `tresor approve` waited in the foreground of a terminal of yours"
    /// The same for generic client `executable`, which the user may also trust ahead of time.
    static func noPrompterOrApprover(forAGenericClient executable: String) -> String {
        noPrompterOrApprover + " (`tresor secret-service trust add \(executable)` lets it in without asking)"
    }
}

/// Asks the user on the desktop to unlock the keybag because `executable` (as Tresor names it)
/// waits for it, and unlocks it with the passcode they type; `requester` is the process behind the
/// client, for the user to see. Given `read` — a generic client's read of its items, in words —
/// the same passcode allows that read too (``UnlockAnswer/unlockedAndAllowed(_:)``), so the user
/// types it once. Runs off the D-Bus thread; may take as long as the user does. `withdrawal` is
/// taken back once no client waits any more: the question is closed then.
public typealias UnlockAsker =
    @Sendable (_ executable: String, _ requester: PresenceRequester, _ read: String?, _ withdrawal: PromptWithdrawal) async -> UnlockAnswer

/// Asks the user whether `executable` (known to Tresor as `application`) may read, replace or
/// delete (`access`) `item` — a `userPresence` item or a generic client's, in words — and says how
/// they answered; a generic client (`mayRemember`) may be allowed "for this session". `requester`
/// is the process behind the client, for the user to see. Returns ``PresenceAnswer/nobodyToAsk``
/// at once when nobody can be asked. `withdrawal` is taken back once the client no longer waits:
/// the question is closed then.
public typealias PresenceAsker =
    @Sendable (
        _ executable: String, _ application: String, _ item: String, _ access: SecretAccess, _ requester: PresenceRequester,
        _ mayRemember: Bool, _ withdrawal: PromptWithdrawal
    ) async -> PresenceAnswer

/// The process behind a Secret Service client that asks the user, as the user is shown it.
public struct PresenceRequester: Sendable, Equatable {
    /// The process the bus names for the client's connection; nil when it was not read.
    public var pid: Int32?
    /// Why Tresor cannot be sure that process is who speaks on the connection (``BusConnections``'s
    /// checks, run again as the user is asked), or nil when no check found anything.
    public var unverified: String?

    public init(pid: Int32?, unverified: String? = nil) {
        self.pid = pid
        self.unverified = unverified
    }
}

/// The user's answer to a read or a change that needs them.
public enum PresenceAnswer: Sendable, Equatable {
    /// No, or nobody answered.
    case refused
    /// Nobody could be asked: no desktop prompter, no `tresor approve` waiting.
    case nobodyToAsk
    /// The desktop's prompter asked, and nobody answered before it gave up.
    case unanswered
    /// Yes, for this one read or change.
    case once
    /// Yes, and for a generic client: remember it under the same parent chain this long.
    case forSession(TimeInterval)
}

/// What the user trusts of generic clients (`TresorModel.GenericClients`), as the daemon keeps it.
public protocol GenericClientTrust: Sendable {
    /// Whether the user trusts `client` now: its secrets are read without asking.
    func trusts(_ client: SecretServiceClient) -> Bool
    /// Remembers the user's "for this session" answer for `client`, for `duration`.
    func remember(_ client: SecretServiceClient, for duration: TimeInterval)
}

/// The Secret Service's interface names.
enum SecretInterface {
    static let service = "org.freedesktop.Secret.Service"
    static let collection = "org.freedesktop.Secret.Collection"
    static let item = "org.freedesktop.Secret.Item"
    static let session = "org.freedesktop.Secret.Session"
    static let prompt = "org.freedesktop.Secret.Prompt"
    static let properties = "org.freedesktop.DBus.Properties"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let peer = "org.freedesktop.DBus.Peer"
}

/// The Secret Service's error names.
enum SecretError {
    static let isLocked = "org.freedesktop.Secret.Error.IsLocked"
    static let noSession = "org.freedesktop.Secret.Error.NoSession"
    static let noSuchObject = "org.freedesktop.Secret.Error.NoSuchObject"
}
