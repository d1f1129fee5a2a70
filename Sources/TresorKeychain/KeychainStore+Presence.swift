import TresorKeybag

/// When the keychain needs the user present, and what proves it (docs/SECURITY.md,
/// "User presence"). Two rules:
///
/// - A `userPresence` item asks **every time**: the passcode in the request, or an approval
///   answered through Tresor.
/// - The keychain-access application (the `tresor` CLI, which any process of the user can run)
///   reveals a secret, replaces one, or touches another application's item only with the
///   user **at the keyboard**: the passcode, an approval, or a terminal session the user opened
///   with the passcode in the terminal the request comes from. An item the user marked
///   `readableByScripts` is readable without; so is the CLI's own group while no passcode is set
///   (there is nothing to prove presence with).
extension KeychainStore {
    enum Presence: Comparable {
        case notNeeded, atKeyboard, everyTime
    }

    /// What reading (or replacing) the secret of an item with `attributes` needs from `caller`.
    func presenceToRead(_ attributes: ItemAttributes, caller: Caller) -> Presence {
        if attributes.accessControl == .userPresence { return .everyTime }
        guard caller.seesEveryGroup, attributes.readableByScripts != true else { return .notNeeded }
        if caller.owns(group: attributes.accessGroup ?? "") && !keybag.status.isPasscodeSet { return .notNeeded }
        return .atKeyboard
    }

    /// What changing or deleting an item of `group` (or adding one to it) needs from `caller`;
    /// nil, no group (an update that moves nothing), needs nothing.
    func presenceToChange(group: String?, caller: Caller) -> Presence {
        guard let group else { return .notNeeded }
        return caller.seesEveryGroup && !caller.owns(group: group) ? .atKeyboard : .notNeeded
    }

    /// Throws unless `caller` proved `presence`. `verified` remembers a passcode checked earlier
    /// in the same request, so a request over many items runs the KDF once.
    func requirePresence(_ presence: Presence, caller: Caller, verified: inout Bool) throws {
        switch presence {
        case .notNeeded: return
        case .atKeyboard where caller.atOpenTerminalSession: return
        case .atKeyboard, .everyTime: if verified { return }
        }
        do {
            try caller.confirmPresence(with: keybag)
        } catch KeychainError.presenceRequired where presence == .atKeyboard {
            throw KeychainError.presenceRequired(
                "the tresor tool needs you present for this: the passcode, or a terminal session (tresor unlock --for)")
        }
        verified = true
    }

    /// `readableByScripts` is for the CLI's reads; an item that asks for the user every time
    /// cannot also be readable without them.
    static func checkReadableByScripts(_ attributes: ItemAttributes) throws {
        if attributes.readableByScripts == true && attributes.accessControl == .userPresence {
            throw KeychainError.param("a userPresence item cannot be readableByScripts")
        }
    }
}
