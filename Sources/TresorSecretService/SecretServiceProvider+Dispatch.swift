import Crypto
import FoundationEssentials
import TresorDBus
import TresorKeychain
import TresorSystem

/// One method call being answered: who sent it and what it carries.
struct SecretRequest {
    /// The sender's unique bus name (sessions and prompts belong to it).
    var sender: String
    var client: SecretServiceClient
    var arguments: [DBusValue]
    var caller: Caller { client.caller }

    /// The arguments, after checking the call has `signature` (libdbus checked that they are
    /// well-formed; this checks they are what the method takes).
    func arguments(_ signature: String, _ member: String) throws -> [DBusValue] {
        let actual = arguments.map(\.signature).joined()
        guard actual == signature else {
            throw DBusError.invalidArguments("\(member) takes (\(signature)), not (\(actual))")
        }
        return arguments
    }
}

extension SecretServiceProvider {
    /// The reply's arguments for one method call; signals to send after the reply go to `signals`.
    func answer(_ message: DBusMessage, signals: inout [DBusMessage]) throws -> [DBusValue] {
        guard let path = message.path, let member = message.member, let sender = message.sender else {
            throw DBusError.invalidArguments("a method call needs a path, a member and a sender")
        }
        // Introspection and Ping say nothing about anyone's items: no identity needed.
        switch (message.interface, member) {
        case (SecretInterface.introspectable, "Introspect"), (nil, "Introspect"):
            return [.string(try Introspection.xml(for: path))]
        case (SecretInterface.peer, "Ping"), (nil, "Ping"):
            return []
        default:
            break
        }
        guard let object = SecretObjectPath(path) else { throw DBusError.unknownObject(path) }
        var request = SecretRequest(sender: sender, client: try clients.client(sender, on: connection), arguments: message.arguments)
        request.client.approvedItems = approvedItems(of: sender)
        // Asked on every call: the user may take their trust back at any time.
        request.client.needsApproval = request.client.isGenericClient && !(trust?.trusts(request.client) ?? false)
        let interface = message.interface ?? Self.interface(of: object, member: member)
        if interface == SecretInterface.properties {
            return try properties(member, of: object, request, signals: &signals)
        }
        switch (object, interface) {
        case (.service, SecretInterface.service):
            return try service(member, request)
        case (.collection(let name), SecretInterface.collection):
            return try collectionMethod(member, of: try collection(name), request, signals: &signals)
        case (.item(let collectionName, let id), SecretInterface.item):
            return try itemMethod(member, id: id, of: try collection(collectionName), request, signals: &signals)
        case (.session, SecretInterface.session):
            guard member == "Close" else { throw DBusError.unknownMethod("Session has no method \(member.prefix(64))") }
            try sessions.close(path, for: sender)
            return []
        case (.prompt, SecretInterface.prompt):
            switch member {
            case "Prompt":
                if let question = try prompts.start(path, caller: sender) {
                    ask(question, prompt: path, request)
                    holdPromptCall(message, of: path, for: question.change == nil ? HeldPromptCalls.hold : HeldPromptCalls.changeHold, request)
                } else if login.isLocked {
                    let nobodyAsked = askToUnlock(prompt: path, request)
                    // Failed with the reason if nobody unlocks in time, or if the passcode typed in
                    // the desktop's prompter is wrong each time while the reply is held.
                    holdPromptCall(message, of: path, for: nobodyAsked ? HeldPromptCalls.unlockHold : HeldPromptCalls.desktopHold, request)
                }
                connection.wake()  // a prompt whose answer is known already completes now
                return []
            case "Dismiss":
                signals.append(try prompts.dismiss(path, caller: sender))
                if let held = heldPromptCalls.release(path) { connection.send(.reply(to: held)) }
                return []
            default:
                throw DBusError.unknownMethod("Prompt has no method \(member.prefix(64))")
            }
        default:
            throw DBusError.unknownMethod("no method \(member.prefix(64)) of \(interface.prefix(128)) at this path")
        }
    }

    /// The collection called `name`.
    func collection(_ name: String) throws -> any SecretCollection {
        switch name {
        case CollectionName.login: return login
        case CollectionName.session: return memory
        default: throw DBusError(SecretError.noSuchObject, "no such collection")
        }
    }

    /// The interface a call without one means: the object's own (every member name is unique
    /// to one interface of each object).
    private static func interface(of object: SecretObjectPath, member: String) -> String {
        if ["Get", "GetAll", "Set"].contains(member) { return SecretInterface.properties }
        switch object {
        case .service: return SecretInterface.service
        case .collection: return SecretInterface.collection
        case .item: return SecretInterface.item
        case .session: return SecretInterface.session
        case .prompt: return SecretInterface.prompt
        }
    }

    /// The object an item path names, if it is one of this provider's collections'.
    func itemReference(_ path: String) -> (collection: any SecretCollection, id: String)? {
        guard case .item(let name, let id)? = SecretObjectPath(path), let collection = try? collection(name) else { return nil }
        return (collection, id)
    }

    func itemPath(_ collection: any SecretCollection, _ id: String) -> String {
        SecretObjectPath.item(collection: collection.name, id: id).path
    }

    /// The known clients that see `group`, by unique name: `ItemCreated`, `ItemChanged` and
    /// `ItemDeleted` go to them only, so no other application learns an item exists.
    func audience(for group: String) -> [String] {
        clients.all.filter { $0.client.caller.mayUse(group: group) }.map(\.name)
    }

    func itemSignal(_ member: String, collection: any SecretCollection, id: String, group: String) -> [DBusMessage] {
        let path = SecretObjectPath.collection(collection.name).path
        return audience(for: group).map { name in
            .signal(
                path: path, interface: SecretInterface.collection, member: member, arguments: [.objectPath(itemPath(collection, id))],
                destination: name)
        }
    }
}

// MARK: Held `Prompt` calls

extension SecretServiceProvider {
    /// Holds the reply to `call`, the `Prompt` of the prompt at `path`, for `duration` at most
    /// (``HeldPromptCalls``) — for a client that reads an error there as the reason it was
    /// refused (``PromptErrorReaders``); an earlier call of the same prompt is answered now.
    func holdPromptCall(_ call: DBusMessage, of path: String, for duration: TimeInterval, _ request: SecretRequest) {
        guard call.expectsReply, PromptErrorReaders.readPromptErrors(pid: request.client.pid) else { return }
        if let earlier = heldPromptCalls.hold(call, prompt: path, for: duration) { connection.send(.reply(to: earlier)) }
    }

    /// Answers the client that still waits for the `Prompt` call of the prompt at `path` with
    /// `error`, instead of a `Completed` signal.
    /// - Returns: whether a client waited.
    func failHeldCall(of path: String, with error: DBusError) -> Bool {
        guard let held = heldPromptCalls.release(path) else { return false }
        connection.send(.error(to: held, error))
        return true
    }
}

// MARK: Asking to unlock

extension SecretServiceProvider {
    /// A client waits on an unlock prompt: asks the user on the desktop when a prompter can be
    /// asked (on a task of its own, the answer handed back to the D-Bus thread), and says in the
    /// log what to do either way.
    /// - Returns: whether nobody is asked: no desktop prompter is configured.
    func askToUnlock(prompt path: String, _ request: SecretRequest) -> Bool {
        let executable = request.client.executable
        guard let askToUnlock else {
            logger.notice(
                "a Secret Service client waits for the keybag: run `tresor unlock` (it is refused in \(Int(Prompts.unlockWait)) s)",
                metadata: ["executable": "\(executable)"])
            prompts.nobodyAsked(path, UnaskedPrompt(executable: executable, need: .unlock, reason: UnaskedPrompt.noPrompterToUnlock))
            return true
        }
        // The user is asked once: a client that waits while the question is on the desktop waits on it too.
        if let asked = desktopUnlock {
            prompts.askingToUnlock(path)
            desktopUnlock = (asked.prompts + [path], asked.withdrawal)
            logger.notice("a Secret Service client waits for the keybag: the desktop is asked already", metadata: ["executable": "\(executable)"])
            return false
        }
        let read = readToAllow(withUnlockOf: path)
        prompts.askingToUnlock(path, allowingTheRead: read != nil)
        // Read now, while the client waits on its call, not when the user answers.
        if read != nil { _ = request.client.parentChain }
        logger.notice("a Secret Service client waits for the keybag: asking on the desktop", metadata: ["executable": "\(executable)"])
        let requester = requester(of: request), withdrawal = PromptWithdrawal()
        desktopUnlock = ([path], withdrawal)
        Task.detached { [self] in
            let answer = await askToUnlock(executable, requester, read, withdrawal)
            if answer == .nobodyToAsk || answer == .unanswered || answer == .wrongPasscodes {
                let why =
                    switch answer {
                    case .nobodyToAsk: "no desktop prompter can be asked"
                    case .wrongPasscodes: "the passcodes typed in the desktop's prompter were wrong"
                    default: "nobody answered the desktop's prompt"
                    }
                logger.notice(
                    "a Secret Service client waits for the keybag, and \(why): run `tresor unlock` (it is refused in \(Int(Prompts.unlockWait)) s)",
                    metadata: ["executable": "\(executable)"])
            }
            unlockAnswers.withLock { $0.append((path, answer, executable)) }
            connection.wake()
        }
        return false
    }
}

// MARK: User presence

extension SecretServiceProvider {
    /// The `userPresence` items the user approved for `sender` that it has not read yet.
    func approvedItems(of sender: String) -> Set<String> {
        guard let approved = approvals[sender] else { return [] }
        let now = Date()
        let current = approved.filter { $0.value > now }
        approvals[sender] = current.isEmpty ? nil : current
        return Set(current.keys)
    }

    /// An approval serves one read: `id`'s secret was read by `request`'s client. A generic
    /// client's approved read is kept, so that the same program run by the same process may write
    /// it back unchanged without asking again (``ApprovedReads``).
    func consumeApproval(of id: String, in collection: any SecretCollection, _ request: SecretRequest) {
        approvals[request.sender]?[id] = nil
        let client = request.client
        guard client.needsApproval, let parent = Self.parent(of: client) else { return }
        approvedReads.record(ApprovedReads.Read(collection: collection.name, id: id, program: client.ownGroup, parent: parent))
    }

    /// The process that ran `client`, by which its approved reads are kept; nil for an orphan,
    /// whose parent is init — every orphan's.
    private static func parent(of client: SecretServiceClient) -> RunningProcess? {
        guard let pid = client.pid, let parent = ProcessAncestors.parent(of: pid), parent.pid > 1 else { return nil }
        return parent
    }

    /// Puts a presence prompt's question to the user on a task of its own — the answer can take
    /// the user a while, and the D-Bus thread keeps serving — and hands the answer back to the
    /// D-Bus thread (``answers``, then a wake-up).
    func ask(_ question: Prompts.Presence, prompt path: String, _ request: SecretRequest) {
        let client = request.client, executable = client.executable, application = request.caller.defaultAccessGroup
        // Read now, while the client waits on its call, not when the user answers.
        if client.isGenericClient { _ = client.parentChain }
        let requester = requester(of: request), withdrawal = PromptWithdrawal()
        presenceQuestions[path] = withdrawal
        logger.notice(
            "a Secret Service client asks for an item that needs you: the user is asked (the desktop's prompter, else `tresor approve`)",
            metadata: ["executable": "\(executable)", "asked": "\(question.access)"])
        // The question's words only: a replacement's secret stays with its prompt.
        let askUser = self.askUser, item = question.description, access = question.access
        Task.detached { [self] in
            let answer = await askUser?(executable, application, item, access, requester, client.isGenericClient, withdrawal) ?? .nobodyToAsk
            remember(client, as: answer)
            let allowed = ![.refused, .nobodyToAsk, .unanswered].contains(answer)
            let unasked: UnaskedPrompt? =
                switch answer {
                case .nobodyToAsk:
                    UnaskedPrompt(
                        executable: executable, need: .approval, access: access,
                        reason: client.isGenericClient
                            ? UnaskedPrompt.noPrompterOrApprover(forAGenericClient: executable) : UnaskedPrompt.noPrompterOrApprover)
                case .unanswered: UnaskedPrompt(executable: executable, need: .approval, access: access, reason: UnaskedPrompt.unansweredOnTheDesktop)
                default: nil
                }
            if let unasked {
                logger.notice(
                    "the Secret Service client is refused: \(unasked.reason)", metadata: ["executable": "\(executable)", "asked": "\(access)"])
            }
            answers.withLock { $0.append((path, allowed, unasked)) }
            connection.wake()
        }
    }

    /// Remembers `client` for this session when the user answered so — a generic client only: a
    /// `userPresence` item is asked each time. Called from any thread.
    func remember(_ client: SecretServiceClient, as answer: PresenceAnswer) {
        guard case .forSession(let duration) = answer, client.isGenericClient else { return }
        trust?.remember(client, for: duration)
        logger.notice("a generic Secret Service client is trusted for this session", metadata: ["executable": "\(client.executable)"])
    }

    /// For each unlock prompt the keybag's unlock completes now: the items among its objects that
    /// its client must still ask for — a generic client's own, not trusted now, or `userPresence`
    /// items — are asked about first, and the prompt completes with the user's answer, so that
    /// what it says is unlocked is what the client can then read.
    func askWhatTheUnlockLeft() {
        for waiting in prompts.unlockedNow() {
            guard var request = unlockRequests.removeValue(forKey: waiting.path) else { continue }
            var presence = needingPresence(waiting.objects, request)
            if readsAllowedByUnlock.remove(waiting.path) != nil {
                (request, presence) = approveReadAllowedByUnlock(presence, of: waiting.objects, request)
            }
            guard !presence.paths.isEmpty else { continue }
            ask(prompts.ask(waiting.path, ids: presence.ids, description: presence.description), prompt: waiting.path, request)
        }
    }

    /// Takes back each question to the user whose prompts are all gone — dismissed, their client
    /// gone, completed (the keybag unlocked another way): the desktop's window closes.
    func withdrawQuestionsNobodyWaitsFor() {
        unlockRequests = unlockRequests.filter { prompts.contains($0.key) }
        readsAllowedByUnlock = readsAllowedByUnlock.filter(prompts.contains)
        for (path, withdrawal) in presenceQuestions where !prompts.contains(path) {
            withdrawal.withdraw()
            presenceQuestions[path] = nil
        }
        if let asked = desktopUnlock, !asked.prompts.contains(where: prompts.contains) {
            asked.withdrawal.withdraw()
            desktopUnlock = nil
        }
    }

    /// The process behind `request`'s client as the user is shown it, with the borrowed-connection
    /// checks (``BusConnections``) run again now: their doubt, if any, is shown too.
    func requester(of request: SecretRequest) -> PresenceRequester {
        let pid = request.client.pid
        return PresenceRequester(pid: pid, unverified: pid.flatMap { clients.connections.doubt(about: request.sender, pid: $0) })
    }

    /// The items among `paths` whose secret needs `request`'s client to be approved by the user
    /// first (`userPresence`), with their keychain ids and how the user reads them.
    func needingPresence(_ paths: [String], _ request: SecretRequest) -> (paths: [String], ids: [String], description: String) {
        var needing: [(path: String, item: SecretItem)] = []
        for path in paths {
            guard let (collection, id) = itemReference(path), let item = try? collection.item(id, client: request.client), item.needsPresence else {
                continue
            }
            needing.append((path, item))
        }
        let description = needing.map { Self.described($0.item) }.joined(separator: "; ")
        return (needing.map(\.path), needing.map(\.item.id), description)
    }

    /// A prompt for `request`'s client that makes `change` once the user allows it. Returns its path.
    func changePrompt(_ change: PendingChange, _ request: SecretRequest) throws -> String {
        let collection = try collection(change.collection)
        let item = try collection.item(change.id, client: request.client)
        return try prompts.presence(
            [itemPath(collection, change.id)], ids: [change.id], description: Self.described(item), change: change, for: request.sender)
    }

    /// Whether `change` writes back, unchanged, an item its program read with the user's approval
    /// when run by the same process as now (``ApprovedReads``): the same label and the same secret
    /// as the item has. Such a replacement is made without asking the user a second time. The read
    /// is used up by the first replacement that could write it back, whether it does or not: a
    /// guess of the secret gets one try per approved read.
    func writesBackAnApprovedRead(_ change: PendingChange) -> Bool {
        guard case .replace(let label, let secret) = change.kind, let parent = Self.parent(of: change.client) else { return false }
        let read = ApprovedReads.Read(collection: change.collection, id: change.id, program: change.client.ownGroup, parent: parent)
        guard approvedReads.take(read) else { return false }
        var client = change.client
        client.approvedItems.insert(change.id)
        guard let collection = try? collection(change.collection), let item = try? collection.item(change.id, client: client),
            let current = try? collection.secret(change.id, client: client), item.label == label, current.contentType == secret.contentType,
            SHA256.hash(data: current.bytes) == SHA256.hash(data: secret.bytes)  // compared in constant time
        else { return false }
        return true
    }

    /// Makes `change`, which the user allowed, as the client that asked for it. Returns the
    /// prompt's result — the replaced item, or no object for a deletion — or nil when the change
    /// failed (the item went away meanwhile, the keybag locked): the prompt is dismissed then.
    func carryOut(_ change: PendingChange) -> DBusValue? {
        var client = change.client
        client.approvedItems.insert(change.id)
        do {
            let collection = try collection(change.collection)
            let group = client.caller.defaultAccessGroup
            switch change.kind {
            case .replace(let label, let secret):
                try collection.replace(change.id, label: label, secret: secret, client: client)
                itemSignal("ItemChanged", collection: collection, id: change.id, group: group).forEach(connection.send)
                return .objectPath(itemPath(collection, change.id))
            case .delete:
                try collection.delete(change.id, client: client)
                itemSignal("ItemDeleted", collection: collection, id: change.id, group: group).forEach(connection.send)
                return .objectPaths([])
            }
        } catch {
            logger.notice(
                "a change the user allowed could not be made",
                metadata: ["executable": "\(client.executable)", "reason": "\(Self.wireError(error).message)"])
            return nil
        }
    }

    /// An item as the user reads it in `tresor approve` and the desktop's prompter.
    static func described(_ item: SecretItem) -> String {
        let attributes = item.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        return "Secret Service item \"\(item.label.prefix(120))\" (\(attributes.prefix(300)))"
    }
}
