import TresorCrypto
import TresorKeybag
import TresorProtocol
import TresorSystem
import TresorWebServer

/// The home's keybag as the web server sees it (``LocalKeybag``): the daemon's keybag and its
/// auto-lock, which the local account's use of the web holds off. The keybag's refusals leave
/// here in the API's words (``ErrorMiddleware``), as the socket answers them.
struct HomeKeybag: LocalKeybag {
    let slot: KeybagSlot
    let autoLock: AutoLock
    /// Told how the keybag was unlocked, for `tresor status`.
    let keychains: KeychainProvider

    var state: LocalKeybagState {
        switch slot.current {
        case .notInitialized: return .notInitialized
        case .damaged: return .damaged
        case .ready(let keybag):
            switch keybag.lockState {
            case .lockedSinceStart: return .lockedSinceStart
            case .locked: return .locked
            case .unlocked: return .unlocked
            }
        }
    }

    func passcodeIsSet() throws -> Bool {
        try keybag().status.isPasscodeSet
    }

    func unlock(passcode text: SecretText) async throws -> PasscodeCheck {
        let keybag = try keybag()
        guard let passcode = try? Passcode(text) else { return .notAPasscode }
        do {
            guard try await offloaded({ try keybag.unlockCountingElsewhere(passcode: passcode) }) else { return .wrong }
            keychains.recordUnlock(by: "the passcode, at the web client's sign-in")
            return .right
        } catch let error as KeybagError {
            throw ErrorMiddleware.apiError(for: error)
        }
    }

    func check(passcode text: SecretText) async throws -> PasscodeCheck {
        let keybag = try keybag()
        guard let passcode = try? Passcode(text) else { return .notAPasscode }
        do {
            try await offloaded { try keybag.verify(passcode: passcode) }
            return .right
        } catch KeybagError.wrongPasscode {
            return .wrong
        } catch let error as KeybagError {
            throw ErrorMiddleware.apiError(for: error)
        }
    }

    func recordActivity(by activity: String) {
        autoLock.touch(by: activity)
    }

    /// The keybag, or why there is none in the API's words.
    private func keybag() throws -> Keybag {
        do {
            return try slot.keybag()
        } catch let error as KeybagError {
            throw ErrorMiddleware.apiError(for: error)
        }
    }
}
