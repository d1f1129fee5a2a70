import Foundation
import Synchronization
import TresorCrypto
import TresorDBus

/// One prompt, from `BeginPrompting` to its answer, on a connection of its own, driven by the
/// calling thread. gcr's protocol: we register a callback object and call `BeginPrompting`; the
/// prompter calls our `PromptReady` with its side of the secret exchange; we call
/// `PerformPrompt` with the prompt's properties and our side; it calls `PromptReady` again with
/// the answer (`yes`, `no`) and, for a password, the password sealed to us; `StopPrompting`
/// closes the window, and a `PromptDone` from the prompter says it closed on its own.
final class PromptConversation {
    enum Kind: String { case confirm, password }

    enum Outcome {
        case answered(reply: String, choiceChosen: Bool, secret: SecretText?)
        case dismissed
    }

    private static let counter = Atomic<Int>(0)

    private let connection: DBusConnection
    private let prompter: String
    private let kind: Kind
    private let text: PromptText
    private let path: String

    init(connection: DBusConnection, prompter: String, kind: Kind, text: PromptText) {
        self.connection = connection
        self.prompter = prompter
        self.kind = kind
        self.text = text
        path = "/org/gnome/keyring/Prompt/tresor\(Self.counter.add(1, ordering: .relaxed).newValue)"
    }

    func run(until deadline: ContinuousClock.Instant, cancellation: PromptCancellation?, asked: (() -> Void)?) throws -> Outcome {
        cancellation?.attach(connection)
        try? connection.addMatch(
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(SystemPrompter.busName)'")
        try call("BeginPrompting", [.objectPath(path)], deadline: deadline)

        var exchange: SecretExchange?
        var outcome: Outcome?
        var failure: (any Error)?
        var prompterClosed = false
        connection.run(
            tickMilliseconds: 100,
            tick: {
                if ContinuousClock.now >= deadline || cancellation?.isCancelled == true { connection.stop() }
            }
        ) { message in
            guard outcome == nil, failure == nil else { return }
            if message.kind == .signal {
                // The prompter left the bus: nobody will answer.
                if message.member == "NameOwnerChanged", message.arguments.count == 3, message.arguments[1].stringValue == prompter {
                    (outcome, prompterClosed) = (.dismissed, true)
                    connection.stop()
                }
                return
            }
            guard message.kind == .methodCall else { return }
            guard message.sender == prompter, message.path == path, message.interface == SystemPrompter.callbackInterface else {
                if message.expectsReply { connection.send(.error(to: message, .accessDenied("not a prompt of this connection"))) }
                return
            }
            connection.send(.reply(to: message))
            do {
                switch message.member {
                case "PromptReady":
                    let arguments = message.arguments
                    guard arguments.count == 3, let reply = arguments[0].stringValue, let properties = arguments[1].propertyDictionary,
                        let sent = arguments[2].stringValue
                    else { throw PrompterError.protocolFailure("PromptReady has not the signature (sa{sv}s)") }
                    if let agreed = exchange {
                        let chosen = properties["choice-chosen"]?.boolValue ?? false
                        outcome = .answered(reply: reply, choiceChosen: chosen, secret: reply == "yes" ? try agreed.secret(in: sent) : nil)
                        connection.stop()
                    } else {
                        let agreed = try SecretExchange(begun: sent)
                        exchange = agreed
                        let arguments: [DBusValue] = [.objectPath(path), .string(kind.rawValue), promptProperties(), .string(agreed.answer)]
                        try call("PerformPrompt", arguments, deadline: deadline)
                        asked?()
                    }
                case "PromptDone":
                    (outcome, prompterClosed) = (.dismissed, true)
                    connection.stop()
                default:
                    throw PrompterError.protocolFailure("the prompter called an unknown method")
                }
            } catch {
                failure = error
                connection.stop()
            }
        }
        if !prompterClosed {
            // Closes the window: on an answer, a timeout, a cancellation or a failure alike.
            _ = try? call("StopPrompting", [.objectPath(path)], deadline: ContinuousClock.now + .seconds(2))
        }
        if let failure { throw failure }
        return outcome ?? .dismissed
    }

    private func promptProperties() -> DBusValue {
        .properties([
            "title": .string(text.title),
            "message": .string(text.message),
            "description": .string(text.description),
            "warning": .string(text.warning),
            "password-new": .boolean(false),
            "choice-label": .string(text.choice ?? ""),
            "choice-chosen": .boolean(false),
            "caller-window": .string(""),
            "continue-label": .string(text.continueLabel),
            "cancel-label": .string(text.cancelLabel),
        ])
    }

    @discardableResult
    private func call(_ member: String, _ arguments: [DBusValue], deadline: ContinuousClock.Instant) throws -> DBusMessage {
        let milliseconds = Int32(clamping: max(500, min(25_000, (deadline - .now).milliseconds)))
        do {
            return try connection.call(
                .methodCall(
                    destination: prompter, path: SystemPrompter.objectPath, interface: SystemPrompter.interface, member: member, arguments: arguments),
                timeoutMilliseconds: milliseconds)
        } catch let error as DBusError {
            throw PrompterError.protocolFailure("\(member): \(error.name)")
        }
    }
}
