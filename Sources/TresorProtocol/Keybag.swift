/// `POST /v1/init`: create the home's keybag. No passcode means none is set.
public struct InitRequest: Codable, Sendable {
    public var passcode: String?
    public init(passcode: String?) { self.passcode = passcode }
}

/// `POST /v1/unlock`. `keychain` names a created keychain; by default the login keybag.
public struct UnlockRequest: Codable, Sendable {
    public var passcode: String?
    public var keychain: String?
    /// Also open a terminal session for this long (`tresor unlock --for`): the `tresor` tool
    /// run from the same terminal then needs no passcode to reveal secrets (docs/API.md,
    /// "Terminal sessions"). At most ``TerminalSessionInfo/longestSeconds``.
    public var terminalSessionSeconds: Int?
    public init(passcode: String?, keychain: String? = nil, terminalSessionSeconds: Int? = nil) {
        self.passcode = passcode
        self.keychain = keychain
        self.terminalSessionSeconds = terminalSessionSeconds
    }
}

/// `POST /v1/passcode/change`: set a first passcode (`current` nil) or change it.
public struct ChangePasscodeRequest: Codable, Sendable {
    public var current: String?
    public var new: String
    public var keychain: String?
    public init(current: String?, new: String, keychain: String? = nil) {
        self.current = current
        self.new = new
        self.keychain = keychain
    }
}

/// `POST /v1/passcode/remove`.
public struct RemovePasscodeRequest: Codable, Sendable {
    public var current: String
    public init(current: String) { self.current = current }
}
