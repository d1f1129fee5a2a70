import Foundation
import Logging
import TresorDesktopPrompt
import TresorKeybag
import TresorModel
import TresorProtocol
import TresorSecretService
import TresorSystem

/// Asks the user for the passcode in the desktop's own prompter (``SystemPrompter``;
/// docs/SECRET-SERVICE.md, "Asking on the desktop") for a Secret Service client: to unlock the
/// keybag it waits on, or to allow one read of an item that needs the user present, or one
/// change a generic client asks to make.
///
/// The passcode goes to the keybag exactly as `tresor unlock`'s (or `tresor approve`'s) does: a
/// wrong one is counted and throttled the same way. The user has three tries per prompt; the
/// prompter's own wait bounds each.
struct DesktopUnlock: Sendable {
    let prompter: SystemPrompter
    let keybag: @Sendable () throws -> Keybag
    let logger: Logger

    /// How many wrong passcodes one prompt takes before it gives up.
    static let tries = 3
    /// How many hours the prompter's "for this session" box remembers a generic client
    /// (`"secretServiceRememberHours"` in config.json).
    var rememberHours = 8
    /// Told how the keybag was unlocked, for `tresor status`.
    var unlocked: @Sendable (_ means: String) -> Void = { _ in }

    /// Asks and unlocks; the Secret Service's ``UnlockAsker``. Given `read` (a generic client's),
    /// the question says the passcode allows that read too, and offers "for this session".
    func ask(for executable: String, requester: PresenceRequester, read: String?, withdrawal: PromptWithdrawal) async -> UnlockAnswer {
        let who = Self.whoAsks(executable: executable, requester: requester)
        var remember = false
        let answer = await askForPasscode(
            { Self.unlockText(executable: executable, who: who, read: read, remembering: rememberHours, afterAWrongOne: $0) }, for: executable,
            withdrawal: withdrawal, chosen: &remember
        ) {
            try $0.unlock(passcode: $1)
        }
        if answer == .unlocked { unlocked("the passcode in the desktop's prompter, for \(executable)") }
        guard answer == .unlocked, read != nil else { return answer }
        return .unlockedAndAllowed(allowance(remembering: remember))
    }

    /// Asks the user whether `executable` may read, replace or delete (`access`) `item` once, with
    /// the passcode, showing who asks (`requester`, its parents, and any doubt about it); falls back to `fallback`
    /// (`tresor approve` in a terminal) when no desktop prompter can be asked — nor one whose
    /// bus name another program owns (``SystemPrompter``). The Secret Service's ``PresenceAsker``.
    /// A generic client (`mayRemember`) is offered "for this session" too (``rememberHours``).
    func approve(
        executable: String, application: String, item: String, access: SecretAccess, requester: PresenceRequester, mayRemember: Bool,
        withdrawal: PromptWithdrawal, fallback: PresenceAsker
    ) async -> PresenceAnswer {
        let who = Self.whoAsks(executable: executable, requester: requester)
        let text = { (wrong: Bool) in
            Self.approvalText(
                executable: executable, item: item, access: access, who: who, remembering: mayRemember ? rememberHours : nil,
                afterAWrongOne: wrong)
        }
        var remember = false
        switch await askForPasscode(text, for: executable, withdrawal: withdrawal, chosen: &remember, { try $0.verify(passcode: $1) }) {
        case .unlocked, .unlockedAndAllowed: return allowance(remembering: remember && mayRemember)
        case .refused, .wrongPasscodes: return .refused
        case .unanswered: return .unanswered
        case .nobodyToAsk: return await fallback(executable, application, item, access, requester, mayRemember, withdrawal)
        }
    }

    /// What the user allowed: once, or — the box ticked — for this session, ``rememberHours``.
    private func allowance(remembering: Bool) -> PresenceAnswer {
        remembering ? .forSession(TimeInterval(rememberHours * 3600)) : .once
    }

    // MARK: What the prompt says

    /// The prompt's warning after a wrong passcode, shown apart from the description.
    static let wrongPasscode = "That passcode was wrong."

    /// The process that asks and its parents, a line each, and any doubt about who it is — the
    /// lines `tresor approve` shows.
    static func whoAsks(executable: String, requester: PresenceRequester) -> String {
        ApprovalRequest(
            id: "", application: "", executable: executable, item: "", created: 0,
            processes: requester.pid.map { ProcessChain.of(pid: $0) }, unverifiedIdentity: requester.unverified
        ).requesterLines.prefix(6).joined(separator: "\n")
    }

    /// The unlock prompt for a client waiting on the locked keybag; given `read`, a generic
    /// client's read the same passcode allows, with `remembering`, the box offering "for this
    /// session", that many hours. What the client chose (its executable's path, its command line, the
    /// attributes it searched by) is shown printable only: no line break of its own can add a line
    /// to the prompt.
    static func unlockText(executable: String, who: String, read: String? = nil, remembering hours: Int? = nil, afterAWrongOne wrong: Bool)
        -> PromptText
    {
        let program = TerminalText.printable(executable, limit: 200)
        let asker = who.isEmpty ? "" : who + "\n"
        guard let read else {
            return PromptText(
                title: "Unlock Tresor", message: "\(program) wants to use your keychain",
                description: asker + "Type your Tresor passcode to unlock the keybag.", continueLabel: "_Unlock",
                warning: wrong ? Self.wrongPasscode : "")
        }
        return PromptText(
            title: "Unlock Tresor and allow a read", message: "\(program) wants a secret of yours",
            description: "It asks for \(TerminalText.printable(read, limit: 400)).\n" + asker
                + "Type your Tresor passcode to unlock the keybag and allow this one read.",
            choice: hours.map(Self.rememberChoice), continueLabel: "_Unlock", warning: wrong ? Self.wrongPasscode : "")
    }

    /// The prompt allowing one read, replacement or deletion (`access`) of `item` (the item's
    /// label and attributes, in words); with `remembering`, the box offering "for this session",
    /// that many hours.
    static func approvalText(
        executable: String, item: String, access: SecretAccess = .read, who: String, remembering hours: Int?, afterAWrongOne wrong: Bool
    ) -> PromptText {
        let (title, wants, allow) =
            switch access {
            case .read: ("Allow access to a secret", "wants a secret that needs you", "allow this one read")
            case .replace: ("Allow a change to a secret", "wants to replace a secret", "allow this one change")
            case .delete: ("Allow deleting a secret", "wants to delete a secret", "allow deleting it")
            }
        return PromptText(
            title: title, message: "\(TerminalText.printable(executable, limit: 200)) \(wants)",
            description: "\(TerminalText.printable(item, limit: 400))\n\(who)\nType your Tresor passcode to \(allow).",
            choice: hours.map(Self.rememberChoice),
            continueLabel: "_Allow", warning: wrong ? Self.wrongPasscode : "")
    }

    /// The box offering "for this session": the program remembered under the same parents that many hours.
    static func rememberChoice(hours: Int) -> String {
        "_Remember this program under the same parent processes for \(hours) hour\(hours == 1 ? "" : "s")"
    }

    // MARK: Asking

    /// Asks for the passcode until `use` takes it, the user cancels, ``tries`` are spent, or the
    /// question is withdrawn (nobody waits for it: the window closes). `chosen` says whether the
    /// prompt's box was ticked when the passcode was taken.
    private func askForPasscode(
        _ text: (_ afterAWrongOne: Bool) -> PromptText, for executable: String, withdrawal: PromptWithdrawal, chosen: inout Bool,
        _ use: (Keybag, Passcode) throws -> Void
    ) async -> UnlockAnswer {
        let received = ContinuousClock.now
        // No look at the prompter first: asking finds and checks it, and says `noPrompter` or
        // `untrustedPrompter` at once (then nobody is asked here).
        var wrong = false
        for _ in 0..<Self.tries {
            guard !withdrawal.isWithdrawn else { return .refused }
            let question = text(wrong)
            // Tresor's own part of a prompt, for BENCHMARKS.md ("The desktop prompter"): from the
            // question to the prompter having been asked.
            let asked: (@Sendable () -> Void)? =
                wrong
                ? nil
                : { @Sendable [logger, received] in
                    let elapsed = (ContinuousClock.now - received).components
                    let milliseconds = Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15
                    logger.debug("the desktop's prompter was asked", metadata: ["afterMilliseconds": "\(milliseconds)"])
                }
            let answer: Result<PasswordAnswer, PrompterError> = await withCheckedContinuation { continuation in
                let cancellation = prompter.password(question, asked: asked) { continuation.resume(returning: $0) }
                withdrawal.onWithdraw { cancellation.cancel() }
            }
            switch answer {
            case .success(.password(let typed, let ticked)):
                do {
                    try use(try keybag(), try Passcode(typed.text))
                    chosen = ticked
                    logger.notice("the passcode was given in the desktop's prompter", metadata: ["for": "\(executable)"])
                    return .unlocked
                } catch KeybagError.wrongPasscode {
                    logger.notice("a wrong passcode in the desktop's prompter", metadata: ["for": "\(executable)"])
                    wrong = true
                } catch {
                    logger.notice("the passcode in the desktop's prompter was refused", metadata: ["reason": "\(error)"])
                    return .refused
                }
            case .success(.cancelled):
                return .refused
            case .success(.dismissed):
                // Closed by Tresor because nobody waits any more, or by the prompter's own
                // clock: then nobody answered, which the client and `tresor status` are told.
                guard !withdrawal.isWithdrawn else { return .refused }
                logger.notice(
                    "nobody answered the desktop's prompter within \(prompter.defaultTimeout.components.seconds) s",
                    metadata: ["for": "\(executable)"])
                return .unanswered
            case .failure(.noPrompter), .failure(.untrustedPrompter), .failure(.busUnavailable):
                return .nobodyToAsk
            case .failure(let error):
                logger.notice("the desktop's prompter failed", metadata: ["error": "\(error)"])
                return .nobodyToAsk
            }
        }
        return .wrongPasscodes
    }
}
