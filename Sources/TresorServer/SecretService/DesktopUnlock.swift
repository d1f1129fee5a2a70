import Foundation
import Logging
import TresorDesktopPrompt
import TresorKeybag
import TresorSecretService

/// Unlocks the keybag for a Secret Service client that waits on an unlock prompt, by asking the
/// user for the passcode in the desktop's own prompter (``SystemPrompter``; docs/SECRET-SERVICE.md,
/// "Asking on the desktop").
///
/// The passcode goes to the keybag exactly as `tresor unlock`'s does: a wrong one is counted
/// and throttled the same way. The user has three tries per prompt; the prompter's own wait
/// bounds each.
struct DesktopUnlock: Sendable {
    let prompter: SystemPrompter
    let keybag: @Sendable () throws -> Keybag
    let logger: Logger

    /// How many wrong passcodes one prompt takes before it gives up.
    static let tries = 3

    /// Asks and unlocks; the Secret Service's ``UnlockAsker``.
    func ask(for executable: String) async -> UnlockAnswer {
        switch (try? prompter.availability()) ?? .absent {
        case .running, .startable: break
        case .absent, .untrusted: return .nobodyToAsk
        }
        var wrong = false
        for _ in 0..<Self.tries {
            let text = PromptText(
                title: "Unlock Tresor", message: "\(executable) wants to use your keychain",
                description: (wrong ? "That passcode was wrong. " : "") + "Type your Tresor passcode to unlock the keybag.",
                continueLabel: "_Unlock")
            let answer: Result<PasswordAnswer, PrompterError> = await withCheckedContinuation { continuation in
                prompter.password(text) { continuation.resume(returning: $0) }
            }
            switch answer {
            case .success(.password(let typed, _)):
                do {
                    let passcode = try Passcode(String(decoding: typed.bytes, as: UTF8.self))
                    try keybag().unlock(passcode: passcode)
                    logger.notice("keybag unlocked from the desktop's prompter", metadata: ["for": "\(executable)"])
                    return .unlocked
                } catch KeybagError.wrongPasscode {
                    logger.notice("a wrong passcode in the desktop's prompter", metadata: ["for": "\(executable)"])
                    wrong = true
                } catch {
                    logger.notice("the keybag was not unlocked from the desktop's prompter", metadata: ["reason": "\(error)"])
                    return .refused
                }
            case .success(.cancelled), .success(.dismissed):
                return .refused
            case .failure(.noPrompter), .failure(.untrustedPrompter), .failure(.busUnavailable):
                return .nobodyToAsk
            case .failure(let error):
                logger.notice("the desktop's prompter failed", metadata: ["error": "\(error)"])
                return .nobodyToAsk
            }
        }
        return .refused
    }
}
