import Crypto
import Foundation
import TresorKeybag
import TresorKeychain
import TresorNotes

/// Unlock through the keychain (docs/API.md, "Unlock through the keychain"): the current notes
/// passphrase's derived key, kept as a generic password in the login keychain —
/// `whenUnlockedThisDeviceOnly`, group `tresor`, optionally `userPresence` — so that an unlocked
/// keybag opens locked notes without the passphrase. The daemon reads and writes it itself, as a
/// caller of its own.
struct NotesKeychainKey: Sendable {
    /// The item's service; its account is the notes account's id.
    static let service = "tresor.notes.passphrase-key"

    let keychains: KeychainProvider

    /// The daemon acting for the `tresor` CLI, in the CLI's group only.
    private func caller(passcode: Passcode? = nil) -> Caller {
        Caller(accessGroups: [CallerResolver.cliGroup], defaultAccessGroup: CallerResolver.cliGroup, passcode: passcode)
    }

    private func query(_ account: AccountID, returnData: Bool = false) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.service = Self.service
        attributes.account = account.rawValue
        attributes.accessGroup = CallerResolver.cliGroup
        return ItemQuery(.genericPassword, attributes: attributes, limit: .one, returnData: returnData, returnAttributes: !returnData)
    }

    /// Keeps `key` for `account`, replacing a key kept before.
    func store(_ key: SymmetricKey, account: AccountID, userPresence: Bool) throws {
        let keychain = try keychains.loginKeychain()
        remove(account: account)
        var attributes = query(account).attributes
        attributes.label = "Tresor notes passphrase key (\(account.rawValue))"
        attributes.accessible = .whenUnlockedThisDeviceOnly
        attributes.accessControl = userPresence ? .userPresence : nil
        let secret = key.withUnsafeBytes { Data($0) }
        _ = try keychain.add(.genericPassword, attributes: attributes, secret: secret, caller: caller())
    }

    /// What the keychain holds for `account`, as far as it can tell now.
    enum Kept: Equatable {
        /// A key, needing the passcode to be read or not.
        case key(userPresence: Bool)
        /// None: never kept, or deleted as an item (`tresor item delete`).
        case missing
        /// The keychain cannot tell now (the keybag is locked).
        case unknown
    }

    /// Whether a key is kept for `account`, and whether it needs the passcode — one lookup.
    func kept(account: AccountID) -> Kept {
        guard let keychain = try? keychains.loginKeychain() else { return .unknown }
        do {
            guard let item = try keychain.copyMatching(query(account), caller: caller()).first else { return .missing }
            return .key(userPresence: item.attributes?.accessControl == .userPresence)
        } catch KeychainError.itemNotFound {
            return .missing
        } catch {
            return .unknown
        }
    }

    /// Whether the key kept for `account` needs the passcode; nil when none is kept or the
    /// keychain cannot tell now.
    func userPresence(account: AccountID) -> Bool? {
        guard case .key(let userPresence) = kept(account: account) else { return nil }
        return userPresence
    }

    /// The kept key: nil when there is none. Throws what the keychain says otherwise — the
    /// class is locked, or user presence needs the (right) passcode.
    func read(account: AccountID, passcode: Passcode? = nil) throws -> SymmetricKey? {
        let keychain = try keychains.loginKeychain()
        do {
            guard let secret = try keychain.copyMatching(query(account, returnData: true), caller: caller(passcode: passcode)).first?.secret,
                secret.count == LockedNoteCrypto.keyByteCount
            else { return nil }
            return SymmetricKey(data: secret)
        } catch KeychainError.itemNotFound {
            return nil
        }
    }

    /// Forgets the kept key, if any.
    func remove(account: AccountID) {
        guard let keychain = try? keychains.loginKeychain() else { return }
        _ = try? keychain.delete(query(account), caller: caller())
    }
}
