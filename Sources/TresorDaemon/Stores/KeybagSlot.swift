import Dispatch
import Foundation
import Synchronization
import TresorKeybag
import TresorKeychain
import TresorSystem

/// The daemon's keybag, which may not exist yet (before `tresor init`) or may be damaged.
/// A damaged keybag is reported, never repaired or overwritten.
final class KeybagSlot: Sendable {
    enum Content: Sendable {
        case notInitialized
        case damaged(KeybagError)
        case ready(Keybag)
    }

    let paths: TresorPaths
    private let settings: KeybagSettings
    private let content: Mutex<Content>

    init(paths: TresorPaths, settings: KeybagSettings) {
        self.paths = paths
        self.settings = settings
        do {
            content = Mutex(.ready(try Keybag.open(paths: paths, settings: settings)))
        } catch KeybagError.notInitialized {
            content = Mutex(.notInitialized)
        } catch let error as KeybagError {
            content = Mutex(.damaged(error))
        } catch {
            content = Mutex(.damaged(.storage(String(describing: error))))
        }
    }

    var current: Content { content.withLock { $0 } }

    /// The keybag, or the reason there is none.
    func keybag() throws -> Keybag {
        switch current {
        case .ready(let keybag): return keybag
        case .notInitialized: throw KeybagError.notInitialized
        case .damaged(let error): throw error
        }
    }

    /// Creates the keybag (`tresor init`). Runs the KDF off the cooperative thread pool.
    func initialize(passcode: Passcode?) async throws -> Keybag {
        try await offloaded { [self] in
            try content.withLock { content in
                guard case .notInitialized = content else { throw KeybagError.alreadyInitialized }
                let keybag = try Keybag.create(paths: paths, passcode: passcode, settings: settings)
                content = .ready(keybag)
                return keybag
            }
        }
    }
}

extension KeybagSlot {
    /// The user's consent to a change of who may read what — registering or removing an
    /// application, a grant, trust, an import: the keybag unlocked and, when a passcode is set,
    /// the passcode again (a wrong one counts as a failed attempt).
    /// - Parameters:
    ///   - passcode: the passcode the request carried.
    ///   - action: what needs it, for the error ("changing a grant").
    /// - Throws: `interactionNotAllowed` while locked, `authFailed` without the passcode or with a wrong one.
    func requireConsent(passcode: Passcode?, toDo action: String) async throws {
        let keybag = try keybag()
        guard keybag.lockState == .unlocked else {
            throw KeychainError.interactionNotAllowed("\(action) needs the keybag unlocked")
        }
        guard keybag.status.isPasscodeSet else { return }
        guard let passcode else { throw KeychainError.authFailed("\(action) needs the passcode again") }
        try await offloaded { try KeychainStore.mapKeybag { try keybag.verify(passcode: passcode) } }
    }
}
