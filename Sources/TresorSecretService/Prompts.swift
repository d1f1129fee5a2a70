import FoundationEssentials
import TresorDBus

/// Prompts waiting for the user (Secret Service `Prompt` objects). Tresor never draws a
/// dialog: a prompt to unlock completes when the user unlocks the keybag with `tresor unlock`
/// in a terminal, and is dismissed by the client (`Dismiss`), when its client leaves the bus,
/// or after ``lifetime``.
///
/// Used on the D-Bus thread only.
final class Prompts {
    private struct Prompt {
        var owner: String
        /// The objects that will be unlocked (the prompt's result).
        var objects: [String]
        var created: Date
        /// Set once the client called `Prompt` (a prompt completes only after that).
        var started = false
    }

    /// How long a prompt waits for the user before it is dismissed.
    static let lifetime: TimeInterval = 300
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

    /// `Prompt.Prompt`: the client is ready for the result.
    func start(_ path: String, caller: String) throws {
        guard prompts[path]?.owner == caller else { throw DBusError.unknownObject(path) }
        prompts[path]!.started = true
    }

    /// `Prompt.Dismiss`: the `Completed` signal saying so.
    func dismiss(_ path: String, caller: String) throws -> DBusMessage {
        guard let prompt = prompts[path], prompt.owner == caller else { throw DBusError.unknownObject(path) }
        prompts[path] = nil
        return Self.completed(path, prompt, dismissed: true)
    }

    /// Whether `path` is a prompt of `caller`'s.
    func exists(_ path: String, for caller: String) -> Bool { prompts[path]?.owner == caller }

    /// The prompts that are done: completed because the keybag is unlocked now, or dismissed
    /// because they waited too long. Each signal goes to its prompt's client only.
    func due(unlocked: Bool, now: Date = Date()) -> [DBusMessage] {
        var signals: [DBusMessage] = []
        for (path, prompt) in prompts {
            if unlocked && prompt.started {
                signals.append(Self.completed(path, prompt, dismissed: false))
                prompts[path] = nil
            } else if now.timeIntervalSince(prompt.created) > Self.lifetime {
                signals.append(Self.completed(path, prompt, dismissed: true))
                prompts[path] = nil
            }
        }
        return signals
    }

    var isEmpty: Bool { prompts.isEmpty }

    func forget(owner: String) {
        prompts = prompts.filter { $0.value.owner != owner }
    }

    private static func completed(_ path: String, _ prompt: Prompt, dismissed: Bool) -> DBusMessage {
        .signal(
            path: path, interface: SecretInterface.prompt, member: "Completed",
            arguments: [.boolean(dismissed), .variant(.objectPaths(dismissed ? [] : prompt.objects))],
            destination: prompt.owner)
    }
}
