import FoundationEssentials
import TresorDBus
import TresorModel

/// Prompts waiting for the user (Secret Service `Prompt` objects). A prompt to unlock completes
/// when the keybag is unlocked — the passcode typed in the desktop's prompter, or `tresor unlock`
/// in a terminal; a prompt for `userPresence` items, or for a generic client's change to one of
/// its items (``PendingChange``), completes when the user answers it there or in `tresor approve`
/// (``Presence``). Either is dismissed by the client (`Dismiss`), when its
/// client leaves the bus, or after ``lifetime`` — an unlock prompt ``unlockWait`` after the
/// client started it unless the user is being asked on the desktop, so no program waits long in
/// silence (one nobody could be asked about is refused with the reason instead:
/// ``HeldPromptCalls``).
///
/// Used on the D-Bus thread only.
final class Prompts {
    private struct Prompt {
        var owner: String
        /// The objects that will be unlocked (the prompt's result).
        var objects: [String]
        var created: Date
        /// When the client called `Prompt` (a prompt completes only after that).
        var started: Date?
        /// For `userPresence` items: what the user is asked, and their answer once given.
        var presence: Presence?
        /// An unlock prompt whose user is being asked on the desktop: ``unlockWait`` does not apply.
        var askingToUnlock = false
        /// The desktop's question to unlock allows the client's read too: the prompt waits for
        /// its answer even once the keybag is unlocked another way.
        var askingToAllowTheRead = false
        /// The user refused to unlock (or nobody could): dismissed at the next ``due``.
        var refused = false
        /// Nobody could be asked: reported when the prompt is dismissed.
        var unasked: UnaskedPrompt?

        /// An unlock prompt the keybag's unlock completes: started, with no question of its own
        /// and none to wait for on the desktop.
        var completesWithTheUnlock: Bool { started != nil && presence == nil && !askingToAllowTheRead }
    }

    /// A question for the user about `userPresence` items, or about a change to an item, asked
    /// once the client calls `Prompt`.
    struct Presence {
        /// The items' keychain ids, approved together.
        var ids: [String]
        /// The items as the user reads them in `tresor approve`.
        var description: String
        /// The change the user is asked to allow; nil, a read of the items.
        var change: PendingChange?
        var asked = false
        var answer: Bool?

        /// What the user is asked to allow.
        var access: SecretAccess { change?.access ?? .read }
    }

    /// How long a prompt waits for the user before it is dismissed.
    static let lifetime: TimeInterval = 300
    /// How long a started unlock prompt waits for `tresor unlock` before it is dismissed.
    static let unlockWait: TimeInterval = 10
    /// The most prompts one connection may have waiting.
    static let perConnection = 16

    private var prompts: [String: Prompt] = [:]
    private var counter = 0

    /// A prompt for `owner` that unlocks `objects`. Returns its path.
    func unlock(_ objects: [String], for owner: String) throws -> String {
        guard prompts.values.count(where: { $0.owner == owner }) < Self.perConnection else {
            throw DBusError.limitsExceeded("at most \(Self.perConnection) waiting prompts per connection")
        }
        counter += 1
        let path = SecretObjectPath.prompt(String(counter)).path
        prompts[path] = Prompt(owner: owner, objects: objects, created: Date())
        return path
    }

    /// A prompt for `owner` that asks the user about the `userPresence` items `objects` (ids
    /// `ids`), described as `description` — or, given `change`, whether to make it. Returns its path.
    func presence(_ objects: [String], ids: [String], description: String, change: PendingChange? = nil, for owner: String) throws -> String {
        let path = try unlock(objects, for: owner)
        prompts[path]!.presence = Presence(ids: ids, description: description, change: change)
        return path
    }

    /// `Prompt.Prompt`: the client is ready for the result. Returns the question to put to the
    /// user now, for a presence prompt not asked yet.
    func start(_ path: String, caller: String) throws -> Presence? {
        guard prompts[path]?.owner == caller else { throw DBusError.unknownObject(path) }
        prompts[path]!.started = prompts[path]!.started ?? Date()
        guard let presence = prompts[path]!.presence, !presence.asked else { return nil }
        prompts[path]!.presence!.asked = true
        return presence
    }

    /// The unlock prompts an unlocked keybag completes at the next ``due``: started, with no
    /// question of their own.
    func unlockedNow() -> [(path: String, objects: [String])] {
        prompts.filter { $0.value.completesWithTheUnlock && !$0.value.refused }.map { ($0.key, $0.value.objects) }
    }

    /// The objects the prompt at `path` unlocks; nil when there is no such prompt.
    func objects(at path: String) -> [String]? { prompts[path]?.objects }

    /// Turns the unlock prompt at `path` into a question about the items `ids` among its objects,
    /// put to the user now: it completes, with all its objects, when the user allows them.
    /// - Returns: the question.
    func ask(_ path: String, ids: [String], description: String) -> Presence {
        let presence = Presence(ids: ids, description: description, asked: true)
        prompts[path]?.presence = presence
        // Whoever was not there to unlock, the question now is another.
        prompts[path]?.unasked = nil
        return presence
    }

    /// Records the user's answer to the presence prompt at `path` (it completes at the next ``due``).
    func answer(_ path: String, allowed: Bool) {
        prompts[path]?.presence?.answer = allowed
    }

    /// The user is asked on the desktop to unlock for the prompt at `path` — and, `allowingTheRead`,
    /// to allow its client's read with the same passcode.
    func askingToUnlock(_ path: String, allowingTheRead: Bool = false) {
        prompts[path]?.askingToUnlock = true
        prompts[path]?.askingToAllowTheRead = allowingTheRead
    }

    /// The outcome of asking the user to unlock for the prompt at `path`: unlocked (it completes
    /// at the next ``due``), refused (dismissed then), or nobody could be asked (``unlockWait``
    /// applies from now).
    func unlockAnswer(_ path: String, refused: Bool) {
        guard prompts[path] != nil else { return }
        prompts[path]!.askingToUnlock = false
        prompts[path]!.askingToAllowTheRead = false
        if refused { prompts[path]!.refused = true } else { prompts[path]!.started = Date() }
    }

    /// Nobody could be asked for the prompt at `path`; reported (``due``'s `unasked`) if it is
    /// dismissed, not if it completes after all (a `tresor unlock` in time).
    func nobodyAsked(_ path: String, _ unasked: UnaskedPrompt) { prompts[path]?.unasked = unasked }

    /// Forgets the prompt at `path` with no signal: its client was told with an error instead
    /// (``HeldPromptCalls``).
    func remove(_ path: String) { prompts[path] = nil }

    /// `Prompt.Dismiss`: the `Completed` signal saying so.
    func dismiss(_ path: String, caller: String) throws -> DBusMessage {
        guard let prompt = prompts[path], prompt.owner == caller else { throw DBusError.unknownObject(path) }
        prompts[path] = nil
        return Self.completed(path, prompt, result: nil)
    }

    /// The change the prompt at `path` asks the user to allow; nil for a read or an unlock.
    func change(at path: String) -> PendingChange? { prompts[path]?.presence?.change }

    /// Whether `path` is a prompt of `caller`'s.
    func exists(_ path: String, for caller: String) -> Bool { prompts[path]?.owner == caller }

    /// Whether the prompt at `path` still waits (not completed, dismissed or forgotten).
    func contains(_ path: String) -> Bool { prompts[path] != nil }

    /// The prompts that are done: completed because the keybag is unlocked now or the user
    /// answered, or dismissed because the user said no or they waited too long. Each signal goes
    /// to its prompt's client only; `approved` gets each presence prompt of a read the user
    /// allowed, `carryOut` each change the user allowed — it makes it and returns the prompt's
    /// result, or nil when it could not (the prompt is dismissed then) — and `unasked` each
    /// prompt ended because nobody could be asked, and returns whether its client was told so
    /// already (its `Prompt` call failed), in which case no `Completed` is sent.
    func due(
        unlocked: Bool, now: Date = Date(), approved: (_ owner: String, _ ids: [String]) -> Void = { _, _ in },
        carryOut: (_ owner: String, _ change: PendingChange) -> DBusValue? = { _, _ in nil },
        unasked: (_ path: String, UnaskedPrompt) -> Bool = { _, _ in false }
    ) -> [DBusMessage] {
        var signals: [DBusMessage] = []
        for (path, prompt) in prompts {
            if let presence = prompt.presence, let answer = presence.answer {
                var result: DBusValue?
                if !answer {
                    if let nobody = prompt.unasked, unasked(path, nobody) {
                        prompts[path] = nil
                        continue
                    }
                } else if let change = presence.change {
                    result = carryOut(prompt.owner, change)
                } else {
                    approved(prompt.owner, presence.ids)
                    result = .objectPaths(prompt.objects)
                }
                signals.append(Self.completed(path, prompt, result: result))
                prompts[path] = nil
            } else if unlocked && prompt.completesWithTheUnlock {
                signals.append(Self.completed(path, prompt, result: .objectPaths(prompt.objects)))
                prompts[path] = nil
            } else if prompt.refused || now.timeIntervalSince(prompt.created) > Self.lifetime
                || (prompt.presence == nil && !prompt.askingToUnlock && prompt.started.map { now.timeIntervalSince($0) > Self.unlockWait } ?? false)
            {
                prompts[path] = nil
                if let nobody = prompt.unasked, unasked(path, nobody) { continue }
                signals.append(Self.completed(path, prompt, result: nil))
            }
        }
        return signals
    }

    var isEmpty: Bool { prompts.isEmpty }

    func forget(owner: String) {
        prompts = prompts.filter { $0.value.owner != owner }
    }

    /// `Completed` with `result` — the unlocked objects, or what a change returns — or dismissed
    /// when there is none.
    private static func completed(_ path: String, _ prompt: Prompt, result: DBusValue?) -> DBusMessage {
        let notMade = prompt.presence?.change?.resultWhenNotMade ?? .objectPaths([])
        return .signal(
            path: path, interface: SecretInterface.prompt, member: "Completed",
            arguments: [.boolean(result == nil), .variant(result ?? notMade)], destination: prompt.owner)
    }
}
