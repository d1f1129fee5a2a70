import FoundationEssentials
import TresorModel

/// `POST /v1/notes/passphrase/status` and the answer of every passphrase route: TresorNotes'
/// `PassphraseStatus` (flat, as its own fields) plus whether the key kept in the keychain
/// needs the passcode (user presence: docs/API.md, "Unlock through the keychain").
public struct NotesPassphraseStatus: Codable, Sendable, Equatable {
    public var status: PassphraseStatus
    /// Present when `keychainUnlock` is on: the keychain item needs the passcode to be read.
    public var keychainUserPresence: Bool?
    /// True when `keychainUnlock` is on but its item is gone from the keychain (deleted as an
    /// item): locked notes then need the passphrase until it is kept again.
    public var keychainKeyMissing: Bool?

    public init(status: PassphraseStatus, keychainUserPresence: Bool? = nil, keychainKeyMissing: Bool? = nil) {
        self.status = status
        self.keychainUserPresence = keychainUserPresence
        self.keychainKeyMissing = keychainKeyMissing
    }

    private enum CodingKeys: String, CodingKey { case keychainUserPresence, keychainKeyMissing }

    public init(from decoder: Decoder) throws {
        status = try PassphraseStatus(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        keychainUserPresence = try container.decodeIfPresent(Bool.self, forKey: .keychainUserPresence)
        keychainKeyMissing = try container.decodeIfPresent(Bool.self, forKey: .keychainKeyMissing)
    }

    public func encode(to encoder: Encoder) throws {
        try status.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(keychainUserPresence, forKey: .keychainUserPresence)
        try container.encodeIfPresent(keychainKeyMissing, forKey: .keychainKeyMissing)
    }
}

/// `POST /v1/notes/passphrase/set`: the account's first passphrase (generation 1).
public struct SetPassphraseRequest: Codable, Sendable {
    public var passphrase: String
    /// Shown after three wrong entries; must not contain the passphrase.
    public var hint: String?

    public init(passphrase: String, hint: String? = nil) {
        self.passphrase = passphrase
        self.hint = hint
    }
}

/// `POST /v1/notes/passphrase/change`: `current` must be typed — a secure session or the key
/// kept in the keychain is not accepted (docs/API.md, "The passphrase").
public struct ChangePassphraseRequest: Codable, Sendable {
    public var current: String
    public var new: String
    /// A new hint; absent keeps the old one (unless `removeHint`).
    public var hint: String?
    public var removeHint: Bool?

    public init(current: String, new: String, hint: String? = nil, removeHint: Bool? = nil) {
        self.current = current
        self.new = new
        self.hint = hint
        self.removeHint = removeHint
    }
}

/// `POST /v1/notes/passphrase/progress`: where a passphrase change in flight stands.
public struct PassphraseChangeProgress: Codable, Sendable, Equatable {
    /// Whether a change is re-wrapping note keys now.
    public var running: Bool
    public var done: Int
    public var total: Int

    public init(running: Bool, done: Int, total: Int) {
        self.running = running
        self.done = done
        self.total = total
    }
}

/// `POST /v1/notes/passphrase/reset` (forgotten passphrase): the account password — for the
/// local account, the keybag passcode — and the new passphrase for notes locked from now on.
public struct ResetPassphraseRequest: Codable, Sendable {
    /// Required when the keybag has a passcode (a home without one has no account password).
    public var passcode: String?
    public var new: String
    public var hint: String?

    public init(passcode: String?, new: String, hint: String? = nil) {
        self.passcode = passcode
        self.new = new
        self.hint = hint
    }
}

/// `POST /v1/notes/passphrase/hint`: the current passphrase's hint.
public struct HintResponse: Codable, Sendable {
    public var hint: String?
    public init(hint: String?) { self.hint = hint }
}

/// `POST /v1/notes/passphrase/hint/set`: replaces (or, `hint` absent, removes) the hint.
/// Needs the current passphrase or its open session.
public struct SetHintRequest: Codable, Sendable {
    public var hint: String?
    public var passphrase: String?

    public init(hint: String?, passphrase: String? = nil) {
        self.hint = hint
        self.passphrase = passphrase
    }
}

/// `POST /v1/notes/passphrase/keychain`: keep (or stop keeping) the current passphrase's key
/// in the login keychain, so an unlocked keybag opens locked notes (docs/API.md, "Unlock through
/// the keychain").
public struct KeychainUnlockRequest: Codable, Sendable {
    public var enabled: Bool
    /// Required to enable: the current passphrase, typed.
    public var passphrase: String?
    /// Reading the key will need the passcode (access control `userPresence`).
    public var userPresence: Bool?

    public init(enabled: Bool, passphrase: String? = nil, userPresence: Bool? = nil) {
        self.enabled = enabled
        self.passphrase = passphrase
        self.userPresence = userPresence
    }
}

/// `POST /v1/notes/import`: notes read from another store (up to 64 MiB of JSON).
public struct ImportNotesRequest: Codable, Sendable {
    public var notes: [NoteImport]
    public init(notes: [NoteImport]) { self.notes = notes }
}
