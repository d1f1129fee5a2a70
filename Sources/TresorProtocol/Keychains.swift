/// `POST /v1/keychains`: create a keychain with its own passcode and lock state.
public struct CreateKeychainRequest: Codable, Sendable {
    /// 1 to 64 letters, digits, '.', '_' or '-'; not `login`.
    public var name: String
    public var passcode: String

    public init(name: String, passcode: String) {
        self.name = name
        self.passcode = passcode
    }
}

/// `POST /v1/keychains/delete`: delete a created keychain and every item in it.
public struct DeleteKeychainRequest: Codable, Sendable {
    public var name: String
    public var passcode: String

    public init(name: String, passcode: String) {
        self.name = name
        self.passcode = passcode
    }
}

/// One keychain in `GET /v1/keychains` and in the status.
public struct KeychainSummary: Codable, Sendable, Equatable {
    public var name: String
    /// `lockedSinceStart`, `unlocked` or `locked`; `readOnly` for System Roots.
    public var state: String
    public var passcodeSet: Bool

    public init(name: String, state: String, passcodeSet: Bool) {
        self.name = name
        self.state = state
        self.passcodeSet = passcodeSet
    }
}

/// `GET /v1/keychains`.
public struct KeychainsResponse: Codable, Sendable {
    public var keychains: [KeychainSummary]
    public init(keychains: [KeychainSummary]) { self.keychains = keychains }
}

/// The body of `POST /v1/lock`, optional: without a keychain, every keychain locks.
public struct LockRequest: Codable, Sendable {
    public var keychain: String?
    public init(keychain: String?) { self.keychain = keychain }
}
