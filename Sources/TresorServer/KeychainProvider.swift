import Foundation
import Synchronization
import TresorKeybag
import TresorKeychain
import TresorProtocol

/// The daemon's keychains: the login keychain, opened once the keybag exists, and the
/// read-only System Roots.
final class KeychainProvider: Sendable {
    private let slot: KeybagSlot
    private let login = Mutex<Keychain?>(nil)
    let systemRoots: SystemRoots

    init(slot: KeybagSlot, systemRoots: SystemRoots = SystemRoots()) {
        self.slot = slot
        self.systemRoots = systemRoots
    }

    var file: URL { slot.paths.home.appendingPathComponent("login.keychain.db") }

    /// The login keychain (`notInitialized` before `tresor init`).
    func loginKeychain() throws -> Keychain {
        try login.withLock { login in
            if let login { return login }
            let keychain = try Keychain(file: file, keybag: try slot.keybag(), name: KeychainName.login)
            login = keychain
            return keychain
        }
    }

    /// After a lock: keys of unavailable classes leave the caches too.
    func keybagLocked() {
        login.withLock { $0?.dropUnavailableKeys() }
    }
}

