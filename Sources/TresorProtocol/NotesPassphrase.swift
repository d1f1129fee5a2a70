import FoundationEssentials
import TresorModel

/// `POST /v1/notes/passphrase/status` and the answer of every passphrase route: TresorNotes'
/// `PassphraseStatus` (flat, as its own fields) plus whether the key kept in the keychain
/// needs the passcode (user presence: docs/API.md, "Unlock through the keychain").
public struct NotesPassphraseStatus: Codable, Sendable, Equatable {
    /// The passphrase's state: set or not, generation, hint or not, failed entries, keychain unlock,
    /// secure session. Encoded flat, as fields of this object.
    public var status: PassphraseStatus
    /// Present when `keychainUnlock` is on: the keychain item needs the passcode to be read.
    public var keychainUserPresence: Bool?
    /// True when `keychainUnlock` is on but its item is gone from the keychain (deleted as an
    /// item): locked notes then need the passphrase until it is kept again.
    public var keychainKeyMissing: Bool?

    /// Makes a status; the parameters are the properties of the same names.
    public init(status: PassphraseStatus, keychainUserPresence: Bool? = nil, keychainKeyMissing: Bool? = nil) {
        self.status = status
        self.keychainUserPresence = keychainUserPresence
        self.keychainKeyMissing = keychainKeyMissing
    }

    private enum CodingKeys: String, CodingKey { case keychainUserPresence, keychainKeyMissing }

    /// Reads a status from its flat JSON form.
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` when a field is missing or of the wrong type.
    public init(from decoder: Decoder) throws {
        status = try PassphraseStatus(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        keychainUserPresence = try container.decodeIfPresent(Bool.self, forKey: .keychainUserPresence)
        keychainKeyMissing = try container.decodeIfPresent(Bool.self, forKey: .keychainKeyMissing)
    }

    /// Writes the status in its flat JSON form: `status`'s fields beside the two of its own.
    /// - Parameter encoder: the encoder to write to.
    /// - Throws: what the encoder throws.
    public func encode(to encoder: Encoder) throws {
        try status.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(keychainUserPresence, forKey: .keychainUserPresence)
        try container.encodeIfPresent(keychainKeyMissing, forKey: .keychainKeyMissing)
    }
}

/// `POST /v1/notes/passphrase/set`: the account's first passphrase (generation 1).
public struct SetPassphraseRequest: Codable, Sendable {
    /// The new passphrase, 1 to 1,024 bytes of UTF-8.
    public var passphrase: String
    /// Shown after three wrong entries; up to 256 bytes, and must not contain the passphrase.
    public var hint: String?

    /// Makes a set request; the parameters are the properties of the same names.
    public init(passphrase: String, hint: String? = nil) {
        self.passphrase = passphrase
        self.hint = hint
    }
}

/// `POST /v1/notes/passphrase/change`: `current` must be typed — a secure session or the key
/// kept in the keychain is not accepted (docs/API.md, "The passphrase").
public struct ChangePassphraseRequest: Codable, Sendable {
    /// The current passphrase, typed.
    public var current: String
    /// The new passphrase, 1 to 1,024 bytes of UTF-8.
    public var new: String
    /// A new hint; absent keeps the old one (unless `removeHint`).
    public var hint: String?
    /// `true` removes the hint; not with `hint`.
    public var removeHint: Bool?

    /// Makes a change request; the parameters are the properties of the same names.
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
    /// Notes whose key is re-wrapped so far; 0 when no change runs.
    public var done: Int
    /// Notes to re-wrap in all; 0 when no change runs.
    public var total: Int

    /// Makes a progress report; the parameters are the properties of the same names.
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
    /// The new passphrase, 1 to 1,024 bytes of UTF-8, for notes locked from now on.
    public var new: String
    /// The new passphrase's hint (up to 256 bytes; must not contain it); nil: none.
    public var hint: String?

    /// Makes a reset request; the parameters are the properties of the same names.
    public init(passcode: String?, new: String, hint: String? = nil) {
        self.passcode = passcode
        self.new = new
        self.hint = hint
    }
}

/// `POST /v1/notes/passphrase/hint`: the current passphrase's hint.
public struct HintResponse: Codable, Sendable {
    /// The hint; nil when the current passphrase has none.
    public var hint: String?
    /// Makes the answer; the parameter is the property of the same name.
    public init(hint: String?) { self.hint = hint }
}

/// `POST /v1/notes/passphrase/hint/set`: replaces (or, `hint` absent, removes) the hint.
/// Setting one needs the current passphrase typed; removing it, that passphrase or its open session.
public struct SetHintRequest: Codable, Sendable {
    /// The new hint (up to 256 bytes; must not contain the passphrase); nil removes it.
    public var hint: String?
    /// The current passphrase: required to set a hint; removing one needs only the open session.
    public var passphrase: String?

    /// Makes a hint request; the parameters are the properties of the same names.
    public init(hint: String?, passphrase: String? = nil) {
        self.hint = hint
        self.passphrase = passphrase
    }
}

/// `POST /v1/notes/passphrase/keychain`: keep (or stop keeping) the current passphrase's key
/// in the login keychain, so an unlocked keybag opens locked notes (docs/API.md, "Unlock through
/// the keychain").
public struct KeychainUnlockRequest: Codable, Sendable {
    /// `true` keeps the key in the keychain; `false` deletes it.
    public var enabled: Bool
    /// Required to enable: the current passphrase, typed.
    public var passphrase: String?
    /// With `enabled`: reading the key will need the passcode (access control `userPresence`);
    /// nil: it will not.
    public var userPresence: Bool?

    /// Makes the request; the parameters are the properties of the same names.
    public init(enabled: Bool, passphrase: String? = nil, userPresence: Bool? = nil) {
        self.enabled = enabled
        self.passphrase = passphrase
        self.userPresence = userPresence
    }
}

/// `POST /v1/notes/import`: notes read from another store (up to 64 MiB of JSON).
public struct ImportNotesRequest: Codable, Sendable {
    /// The notes to import, unlocked or locked in Apple Notes (`NoteImport`).
    public var notes: [NoteImport]
    /// Makes an import request; the parameter is the property of the same name.
    public init(notes: [NoteImport]) { self.notes = notes }
}
