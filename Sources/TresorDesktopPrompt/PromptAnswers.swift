import TresorCrypto

/// What the user answered to a ``SystemPrompter/confirm(_:timeout:)``.
public enum ConfirmAnswer: Sendable, Equatable {
    /// Continue, with the choice box not ticked (or no choice offered): allowed this once.
    case allowedOnce
    /// Continue with the choice box ticked.
    case allowedWithChoice
    /// Cancel (or the dialog closed by the user).
    case cancelled
    /// Nobody answered: the timeout passed, the caller cancelled, or the prompter went away.
    /// The prompt is closed.
    case dismissed
}

/// What the user answered to a ``SystemPrompter/password(_:timeout:)``.
public enum PasswordAnswer: Sendable, Equatable {
    /// The password typed, and whether the choice box was ticked.
    case password(TypedPassword, choiceChosen: Bool)
    /// Cancel (or the dialog closed by the user, Escape): no password.
    case cancelled
    /// Nobody answered: the timeout passed, the caller cancelled, or the prompter went away.
    case dismissed
}

/// A password the user typed into the desktop's prompter. It never prints: its description,
/// debug description and mirror say only what it is, so it cannot reach a log by accident.
public struct TypedPassword: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The password's UTF-8, as the prompter sent it, zeroed when released.
    public let text: SecretText

    /// - Parameter text: the password's UTF-8.
    public init(_ text: SecretText) { self.text = text }

    /// Says what it is, never what it holds.
    public var description: String { "TypedPassword(hidden)" }
    /// Says what it is, never what it holds.
    public var debugDescription: String { description }
    /// No children: `dump` and the debugger's summary show nothing of it.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// What to show in the prompt. gcr shows `title` as the window's title, `message` in bold,
/// `description` below it; `choice` is the label of the one check box (none when nil).
public struct PromptText: Sendable, Equatable {
    /// The window's title.
    public var title: String
    /// The question, shown in bold.
    public var message: String
    /// The details under it.
    public var description: String
    /// The check box's label; none when nil. An underscore marks its access key (`_Remember`).
    public var choice: String?
    /// The Continue button's label (an underscore marks its access key).
    public var continueLabel: String
    /// The Cancel button's label (an underscore marks its access key).
    public var cancelLabel: String
    /// A warning gcr shows apart, above the password field ("That passcode was wrong."); none when empty.
    public var warning: String

    /// - Parameters:
    ///   - title: the window's title.
    ///   - message: the question, in a sentence (it names the program and what it asks for).
    ///   - description: the details under it (process, parent chain, item).
    ///   - choice: the check box's label, or nil for none.
    ///   - continueLabel: the Continue button's label.
    ///   - cancelLabel: the Cancel button's label.
    ///   - warning: what went wrong with the last answer, shown apart; empty for none.
    public init(
        title: String, message: String, description: String = "", choice: String? = nil,
        continueLabel: String = "Continue", cancelLabel: String = "Cancel", warning: String = ""
    ) {
        (self.title, self.message, self.description, self.choice) = (title, message, description, choice)
        (self.continueLabel, self.cancelLabel, self.warning) = (continueLabel, cancelLabel, warning)
    }
}

/// Why no answer could be had from the desktop's prompter. No case carries a typed secret.
public enum PrompterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No process owns the prompter's bus name and none can be started on this bus.
    case noPrompter
    /// A process owns the prompter's bus name but is not the desktop's own prompter.
    case untrustedPrompter(String)
    /// The session bus cannot be reached.
    case busUnavailable(String)
    /// The prompter answered outside gcr's prompter protocol.
    case protocolFailure(String)

    /// The error in words, for the user (no secret is in any case).
    public var description: String {
        switch self {
        case .noPrompter:
            return "no desktop prompter on this session bus (\(SystemPrompter.busName) has no owner and cannot be started)"
        case .untrustedPrompter(let why):
            return "the owner of \(SystemPrompter.busName) is not the desktop's prompter: \(why)"
        case .busUnavailable(let why): return "the session bus cannot be reached: \(why)"
        case .protocolFailure(let why): return "the desktop prompter failed: \(why)"
        }
    }
}
