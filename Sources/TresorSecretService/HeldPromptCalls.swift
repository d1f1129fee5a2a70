import FoundationEssentials
import TresorDBus

/// `Prompt.Prompt` calls of prompts that ask the user (a read or a change that needs their
/// approval) whose reply waits a moment. When nobody can be asked — no desktop prompter, no
/// `tresor approve` — the asker says so at once, and the client then gets the reason as the
/// call's error, which libsecret's programs print (`secret-tool: …`). A dismissal would tell them
/// nothing: libsecret takes a dismissed read for "not found" and a dismissed replacement for
/// stored. Otherwise the call is answered once the user answers, or after ``hold``.
///
/// A change the user is asked about holds its call longer (``changeHold``): their refusal is
/// the call's error too.
///
/// An unlock prompt nobody can be asked about waits for a `tresor unlock` in a terminal
/// (``Prompts/unlockWait``): its call is held for ``unlockHold``, and answered with the error
/// when nobody unlocked in time — a dismissal would leave `secret-tool` finding nothing, saying
/// nothing.
///
/// Used on the D-Bus thread only.
struct HeldPromptCalls {
    /// How long a reply waits for the asker to say nobody can be asked; it says so at once, so this
    /// is only a bound for a machine under load. A user being asked meanwhile sees no difference.
    static let hold: TimeInterval = 5
    /// How long the reply of an unlock prompt nobody can be asked about waits: past
    /// ``Prompts/unlockWait`` and the provider's tick that dismisses it, and short of the 25 s a
    /// D-Bus client waits for a reply by default.
    static let unlockHold: TimeInterval = Prompts.unlockWait + 5
    /// How long the reply of a prompt asking the user to allow a change waits for their answer:
    /// a refusal given meanwhile is the call's error (``PendingChange/refusedByTheUser``), since
    /// libsecret takes a dismissed replacement for stored. Short of the 25 s a D-Bus client waits
    /// for a reply by default; a later answer is a dismissal, as any prompt's.
    static let changeHold: TimeInterval = 15
    /// How long the reply of an unlock prompt the desktop's prompter asks about waits: a passcode
    /// typed wrong each time meanwhile is the call's error, which secret-tool prints (a dismissal
    /// would look like "not found"). Short of the 25 s a D-Bus client waits for a reply by default;
    /// a later outcome is a dismissal, as any prompt's.
    static let desktopHold: TimeInterval = 20

    private var calls: [String: (call: DBusMessage, until: Date)] = [:]

    /// Holds the reply to `call`, the `Prompt` of the prompt at `path`, for `duration` at most.
    /// - Returns: the call held for the same prompt before (a client that called `Prompt`
    ///   twice), no longer held: the caller replies to it now, or it would wait for nothing.
    @discardableResult
    mutating func hold(_ call: DBusMessage, prompt path: String, for duration: TimeInterval = hold, now: Date = Date()) -> DBusMessage? {
        defer { calls[path] = (call, now.addingTimeInterval(duration)) }
        return calls[path]?.call
    }

    /// Holds the reply to the `Prompt` call of the prompt at `path`, if it is still held, until
    /// `duration` from now.
    mutating func holdLonger(_ path: String, for duration: TimeInterval, now: Date = Date()) {
        calls[path]?.until = now.addingTimeInterval(duration)
    }

    /// Whether the reply to `call` is held.
    func holds(_ call: DBusMessage) -> Bool { calls.values.contains { $0.call === call } }

    /// The held call of the prompt at `path`, no longer held: the caller replies to it now.
    mutating func release(_ path: String) -> DBusMessage? { calls.removeValue(forKey: path)?.call }

    /// The held calls that waited ``hold``, no longer held.
    mutating func expired(now: Date = Date()) -> [DBusMessage] {
        let due = calls.filter { $0.value.until <= now }
        for path in due.keys { calls[path] = nil }
        return due.values.map(\.call)
    }

    /// Forgets the calls of a client that left the bus: nobody reads their replies.
    mutating func forget(sender: String) {
        calls = calls.filter { $0.value.call.sender != sender }
    }
}
