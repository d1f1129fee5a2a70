import Foundation
import Synchronization
import TresorDBus
import TresorSystem

/// The desktop's own system prompter — gcr's `gcr-prompter`, or GNOME Shell's built-in one —
/// asked over the session bus the way gnome-keyring asks it (`org.gnome.keyring.SystemPrompter`,
/// gcr's `org.gnome.keyring.internal.Prompter` protocol; docs/SECRET-SERVICE.md, "Asking on
/// the desktop").
///
/// Only a prompter Tresor can vouch for is asked: the owner of the bus name must run one of
/// ``trustedExecutables`` as the root-owned file at that path, in our user and mount namespaces
/// (any process of the user can own the name). Every question is addressed to the connection
/// that was checked, never to the well-known name, so a new owner cannot take over a prompt.
///
/// Threading: ``confirm(_:timeout:cancellation:asked:)`` and ``password(_:timeout:cancellation:asked:)``
/// block the calling thread until the user answers or `timeout` passes (then the prompt is
/// closed), on a private bus connection of their own — never the caller's. The variants with a
/// `completion` return at once and call it later on a thread of their own; a caller on a D-Bus
/// thread (the Secret Service provider) uses those, and hands the answer back to its own loop.
/// A ``PromptCancellation`` closes a prompt early from any thread.
public final class SystemPrompter: Sendable {
    /// The bus name every gcr prompter owns.
    public static let busName = "org.gnome.keyring.SystemPrompter"
    static let objectPath = "/org/gnome/keyring/Prompter"
    static let interface = "org.gnome.keyring.internal.Prompter"
    static let callbackInterface = "org.gnome.keyring.internal.Prompter.Callback"

    /// gcr's prompter, and GNOME Shell (which replaces it on a GNOME desktop). GNOME Shell runs
    /// the user's extensions; so does it every keystroke of the session, so a prompt it draws
    /// is no weaker than the desktop itself.
    public static let defaultExecutables = ["/usr/libexec/gcr-prompter", "/usr/bin/gnome-shell"]

    /// The session bus's address.
    public let busAddress: String
    /// The executables a prompter may run (paths in our mount namespace).
    public let trustedExecutables: [String]
    /// How long a prompt waits for the user when the caller gives no timeout.
    public let defaultTimeout: Duration
    /// The prompter's connection whose hold on its socket was checked last.
    private let holding = CheckedPrompterConnection()

    /// - Parameters:
    ///   - busAddress: the session bus (``DBusConnection/sessionBusAddress(_:)``).
    ///   - trustedExecutables: the prompter executables to accept.
    ///   - timeout: how long a prompt waits for the user unless told otherwise.
    public init(busAddress: String, trustedExecutables: [String] = SystemPrompter.defaultExecutables, timeout: Duration = .seconds(60)) {
        self.busAddress = busAddress
        self.trustedExecutables = trustedExecutables
        defaultTimeout = timeout
    }

    /// Whether a prompter can be asked on this bus.
    public enum Availability: Sendable, Equatable {
        /// A trusted prompter runs: its process and the executable it runs.
        case running(pid: Int32, executable: String)
        /// None runs, but the bus starts one on demand (a prompt starts it).
        case startable
        /// Nobody owns the name and the bus cannot start a prompter.
        case absent
        /// The name's owner is not a trusted prompter (why).
        case untrusted(String)
    }

    /// Looks at the bus without starting anything.
    /// - Returns: whether a prompter runs, can be started, is absent or is not to be trusted.
    /// - Throws: ``PrompterError/busUnavailable(_:)`` when the bus cannot be reached.
    public func availability() throws -> Availability {
        let connection = try connect()
        do {
            let prompter = try PrompterOwner(
                on: connection, trusted: trustedExecutables, start: false, deadline: .now + .seconds(5), holding: holding)
            return .running(pid: prompter.process.pid, executable: prompter.process.executable)
        } catch PrompterError.noPrompter {
            return (try? PrompterOwner.activatable(on: connection)) == true ? .startable : .absent
        } catch PrompterError.untrustedPrompter(let why) {
            return .untrusted(why)
        }
    }

    /// Asks the user to confirm, with Continue, Cancel and (when `text.choice` is set) a check box.
    /// Blocks until answered, dismissed or `timeout`.
    /// - Parameters:
    ///   - text: what the prompt says.
    ///   - timeout: how long the user has (``defaultTimeout`` when nil); the prompt is closed after.
    ///   - cancellation: closes the prompt early when cancelled.
    ///   - asked: called once the prompter has been asked (its window opening), on this thread.
    /// - Returns: the user's answer.
    /// - Throws: ``PrompterError`` when there is no prompter to trust or it fails.
    public func confirm(
        _ text: PromptText, timeout: Duration? = nil, cancellation: PromptCancellation? = nil, asked: (() -> Void)? = nil
    ) throws -> ConfirmAnswer {
        switch try converse(.confirm, text, timeout, cancellation, asked) {
        case .dismissed: return .dismissed
        case .answered(let reply, let chosen, _):
            guard reply == "yes" else { return .cancelled }
            return chosen && text.choice != nil ? .allowedWithChoice : .allowedOnce
        }
    }

    /// Asks the user for a password (the keybag's passcode). Blocks until answered, dismissed or
    /// `timeout`.
    /// - Parameters:
    ///   - text: what the prompt says.
    ///   - timeout: how long the user has (``defaultTimeout`` when nil); the prompt is closed after.
    ///   - cancellation: closes the prompt early when cancelled.
    ///   - asked: called once the prompter has been asked (its window opening), on this thread.
    /// - Returns: the password typed (sealed to this process on the bus), or why there is none.
    /// - Throws: ``PrompterError`` when there is no prompter to trust or it fails.
    public func password(
        _ text: PromptText, timeout: Duration? = nil, cancellation: PromptCancellation? = nil, asked: (() -> Void)? = nil
    ) throws -> PasswordAnswer {
        switch try converse(.password, text, timeout, cancellation, asked) {
        case .dismissed: return .dismissed
        case .answered(let reply, let chosen, let secret):
            guard reply == "yes" else { return .cancelled }
            guard let secret else { throw PrompterError.protocolFailure("the prompter said yes but sent no password") }
            return .password(TypedPassword(secret), choiceChosen: chosen)
        }
    }

    /// ``confirm(_:timeout:cancellation:asked:)`` on a thread of its own.
    /// - Parameters:
    ///   - text: what the prompt says.
    ///   - timeout: how long the user has (``defaultTimeout`` when nil).
    ///   - completion: called once, on the prompt's thread, with the answer or the error.
    /// - Returns: a cancellation that closes the prompt early.
    @discardableResult
    public func confirm(
        _ text: PromptText, timeout: Duration? = nil, completion: @escaping @Sendable (Result<ConfirmAnswer, PrompterError>) -> Void
    ) -> PromptCancellation {
        let cancellation = PromptCancellation()
        DetachedThread.start {
            completion(Result { try self.confirm(text, timeout: timeout, cancellation: cancellation) }.mapError(Self.prompterError))
        }
        return cancellation
    }

    /// ``password(_:timeout:cancellation:asked:)`` on a thread of its own.
    /// - Parameters:
    ///   - text: what the prompt says.
    ///   - timeout: how long the user has (``defaultTimeout`` when nil).
    ///   - asked: called on the prompt's thread once the prompter has been asked (its window opening).
    ///   - completion: called once, on the prompt's thread, with the answer or the error.
    /// - Returns: a cancellation that closes the prompt early.
    @discardableResult
    public func password(
        _ text: PromptText, timeout: Duration? = nil, asked: (@Sendable () -> Void)? = nil,
        completion: @escaping @Sendable (Result<PasswordAnswer, PrompterError>) -> Void
    ) -> PromptCancellation {
        let cancellation = PromptCancellation()
        DetachedThread.start {
            completion(
                Result { try self.password(text, timeout: timeout, cancellation: cancellation, asked: asked) }.mapError(Self.prompterError))
        }
        return cancellation
    }

    // MARK: Internals

    private static func prompterError(_ error: any Error) -> PrompterError {
        error as? PrompterError ?? .protocolFailure("\(error)")
    }

    private func connect() throws -> DBusConnection {
        do {
            return try DBusConnection(address: busAddress)
        } catch {
            throw PrompterError.busUnavailable("\(error)")
        }
    }

    private func converse(
        _ kind: PromptConversation.Kind, _ text: PromptText, _ timeout: Duration?, _ cancellation: PromptCancellation?, _ asked: (() -> Void)?
    ) throws -> PromptConversation.Outcome {
        let deadline = ContinuousClock.now + (timeout ?? defaultTimeout)
        let connection = try connect()
        let prompter = try PrompterOwner(on: connection, trusted: trustedExecutables, start: true, deadline: deadline, holding: holding)
        return try PromptConversation(connection: connection, prompter: prompter.uniqueName, kind: kind, text: text)
            .run(until: deadline, cancellation: cancellation, asked: asked)
    }
}

/// Closes a prompt before its user answers (the client that asked went away), from any thread.
public final class PromptCancellation: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let connection = Mutex<DBusConnection?>(nil)

    /// A cancellation not yet attached to a prompt; pass it to one.
    public init() {}

    /// Closes the prompt; it answers ``ConfirmAnswer/dismissed`` (or ``PasswordAnswer/dismissed``).
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
        connection.withLock { $0 }?.wake()
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func attach(_ connection: DBusConnection) {
        self.connection.withLock { $0 = connection }
    }
}
