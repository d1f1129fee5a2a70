/// `POST /v1/keychains`: create a keychain with its own passcode and lock state.
public struct CreateKeychainRequest: Codable, Sendable {
    /// 1 to 64 of A-Z, a-z, 0-9, '.', '_' or '-'; not `login`.
    public var name: String
    /// The new keychain's own passcode, 1 to 1,024 bytes of UTF-8 (a created keychain always has one).
    public var passcode: String

    /// Makes a create request; the parameters are the properties of the same names.
    public init(name: String, passcode: String) {
        self.name = name
        self.passcode = passcode
    }
}

/// `POST /v1/keychains/delete`: delete a created keychain and every item in it.
public struct DeleteKeychainRequest: Codable, Sendable {
    /// The created keychain to delete: `login` is `400 param`; an unknown name and `System Roots`
    /// are `404 noSuchKeychain`.
    public var name: String
    /// The keychain's own passcode, whatever its lock state (counted on its counter when wrong).
    public var passcode: String

    /// Makes a delete request; the parameters are the properties of the same names.
    public init(name: String, passcode: String) {
        self.name = name
        self.passcode = passcode
    }
}

/// One keychain in `GET /v1/keychains` and in the status.
public struct KeychainSummary: Codable, Sendable, Equatable {
    /// `login`, a created keychain's name, or `System Roots`.
    public var name: String
    /// `lockedSinceStart`, `unlocked` or `locked`, as ``KeybagState``; `readOnly` for System Roots;
    /// `damaged` when its keybag cannot be opened.
    public var state: String
    /// Whether its keybag has a passcode: always true for a created keychain, false for System Roots.
    public var passcodeSet: Bool

    /// Makes a summary; the parameters are the properties of the same names.
    public init(name: String, state: String, passcodeSet: Bool) {
        self.name = name
        self.state = state
        self.passcodeSet = passcodeSet
    }
}

/// `GET /v1/keychains`.
public struct KeychainsResponse: Codable, Sendable {
    /// `login` first (once the home has a keybag), then the created keychains by name (byte
    /// order), then `System Roots`.
    public var keychains: [KeychainSummary]
    /// Makes a keychain list; the parameter is the property of the same name.
    public init(keychains: [KeychainSummary]) { self.keychains = keychains }
}

/// The body of `POST /v1/lock`, optional: without a keychain, every keychain locks.
public struct LockRequest: Codable, Sendable {
    /// The one keychain to lock (`login` or a created one); nil: every keychain.
    public var keychain: String?
    /// Makes a lock request; the parameter is the property of the same name.
    public init(keychain: String?) { self.keychain = keychain }
}
