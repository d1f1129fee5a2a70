/// `POST /v1/init`: create the home's keybag. No passcode means none is set.
public struct InitRequest: Codable, Sendable {
    /// The new keybag's passcode, 1 to 1,024 bytes of UTF-8; nil creates a keybag without one.
    public var passcode: String?
    /// Makes an init request; the parameter is the property of the same name.
    public init(passcode: String?) { self.passcode = passcode }
}

/// `POST /v1/unlock`. `keychain` names a created keychain; by default the login keybag.
public struct UnlockRequest: Codable, Sendable {
    /// The keybag's passcode (the created keychain's, with `keychain`); nil when no passcode is set.
    public var passcode: String?
    /// A created keychain to unlock instead of the login keybag; nil or `login`: the login keybag.
    /// `System Roots` or an unknown name is `404 noSuchKeychain`.
    public var keychain: String?
    /// Also open a terminal session for this many seconds (`tresor unlock --for`): the `tresor`
    /// tool run from the same terminal then needs no passcode to reveal secrets (docs/API.md,
    /// "The `tresor` tool needs you present"). 1 to ``TerminalSessionInfo/longestSeconds``;
    /// the `tresor` CLI only, run from a terminal, with a passcode set. Nil: no session.
    public var terminalSessionSeconds: Int?
    /// Makes an unlock request; the parameters are the properties of the same names.
    public init(passcode: String?, keychain: String? = nil, terminalSessionSeconds: Int? = nil) {
        self.passcode = passcode
        self.keychain = keychain
        self.terminalSessionSeconds = terminalSessionSeconds
    }
}

/// `POST /v1/passcode/change`: set a first passcode (`current` nil) or change it.
public struct ChangePasscodeRequest: Codable, Sendable {
    /// The passcode set now: required when one is set (always for a created keychain), ignored
    /// when none is; nil sets a first passcode.
    public var current: String?
    /// The new passcode, 1 to 1,024 bytes of UTF-8.
    public var new: String
    /// A created keychain whose passcode to change; nil or `login`: the login keybag.
    public var keychain: String?
    /// Makes a passcode change request; the parameters are the properties of the same names.
    public init(current: String?, new: String, keychain: String? = nil) {
        self.current = current
        self.new = new
        self.keychain = keychain
    }
}

/// `POST /v1/passcode/remove`: the login keybag only (there is no `keychain` field; one sent is
/// ignored). Removing the passcode also removes the login link and deletes every
/// `whenPasscodeSetThisDeviceOnly` item.
public struct RemovePasscodeRequest: Codable, Sendable {
    /// The passcode set now (a wrong one is counted).
    public var current: String
    /// Makes a passcode removal request; the parameter is the property of the same name.
    public init(current: String) { self.current = current }
}
