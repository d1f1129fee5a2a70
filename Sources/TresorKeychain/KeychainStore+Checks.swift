import Crypto
import Foundation
import GRDB
import Synchronization
import TresorCrypto
import TresorKeybag
import TresorStorage
import TresorSystem

// The checks add, update and find share.
extension KeychainStore {
    static func checkSize(of secret: Data) throws {
        guard secret.count <= maximumSecretBytes else {
            throw KeychainError.param("the secret is \(secret.count) bytes; the limit is \(maximumSecretBytes)")
        }
    }

    static func requireGroup(_ group: String, caller: Caller) throws {
        guard caller.mayUse(group: group) else {
            throw KeychainError.missingEntitlement("access group \(group) is not this application's")
        }
    }

    /// A *ThisDeviceOnly* item never leaves this device, so it cannot also be synchronizable —
    /// Apple's rule for `kSecAttrSynchronizable`, whose `SecItemAdd` answers `errSecParam`.
    static func checkSynchronizable(_ attributes: ItemAttributes) throws {
        if attributes.synchronizable == true && (attributes.accessible ?? .default).isThisDeviceOnly {
            throw KeychainError.param("a synchronizable item cannot have a ThisDeviceOnly protection class: such an item never leaves this device")
        }
    }

    /// Only the login keychain syncs (``canSync``): an item of a keychain the user created
    /// made synchronizable would never leave this device while saying it does. A restored item
    /// keeps what it had (and does not sync).
    /// - Parameter synchronizable: the `synchronizable` an add or an update asks for.
    /// - Throws: `KeychainError.param` when it is true here.
    func checkSynchronizableHere(_ synchronizable: Bool?) throws {
        guard synchronizable == true, !canSync else { return }
        throw KeychainError.param(
            "only the login keychain syncs: an item of the keychain \(name) cannot be synchronizable (leave it out, or keep the item in login)")
    }

    /// `whenPasscodeSetThisDeviceOnly` and `userPresence` items exist only while a passcode is
    /// set: it is what their protection rests on.
    func checkPasscodeNeeds(of attributes: ItemAttributes) throws {
        let needsPasscode = attributes.accessible?.requiresPasscode == true || attributes.accessControl == .userPresence
        guard needsPasscode, !keybag.status.isPasscodeSet else { return }
        if attributes.accessible?.requiresPasscode == true {
            throw KeychainError.param("whenPasscodeSetThisDeviceOnly items need a passcode to be set")
        }
        throw KeychainError.param("userPresence items need a passcode to be set: it is what proves presence")
    }
}
