import Foundation

// The account's notes passphrase travels with its notes (docs/SYNC.md, "Notes"): which
// generation is current and its hint — the generation's salt, rounds, verifier and proof hash,
// never the passphrase.

/// A notes passphrase generation as it travels.
public struct SyncPassphrase: Codable, Equatable, Sendable {
    public var salt: Data
    public var iterations: Int
    public var verifier: Data
    public var proofHash: Data?
    public var hint: String?

    public init(salt: Data, iterations: Int, verifier: Data, proofHash: Data?, hint: String?) {
        self.salt = salt
        self.iterations = iterations
        self.verifier = verifier
        self.proofHash = proofHash
        self.hint = hint
    }
}

/// `PUT /v1/sync/passphrase`: the device's current passphrase generation (a new one, or
/// a new hint), made from `base`, the salt of the account's current one as the device last had
/// it (nil for none): the server makes it current only when its own is still that one.
public struct SyncPassphraseChange: Codable, Equatable, Sendable {
    public var passphrase: SyncPassphrase
    public var base: Data?

    public init(passphrase: SyncPassphrase, base: Data?) {
        self.passphrase = passphrase
        self.base = base
    }
}

/// `GET /v1/sync/passphrase`, and the answer to a change: the account's current
/// passphrase generation on the server, nil for none.
public struct SyncPassphraseState: Codable, Equatable, Sendable {
    public var current: SyncPassphrase?

    public init(current: SyncPassphrase?) {
        self.current = current
    }
}
