import TresorModel

/// What the daemon answers instead of a result: a closed set of codes, each mapped to
/// Apple's `OSStatus` where one exists, so code ported from Apple platforms keeps its checks.
public struct APIError: Codable, Error, Equatable, Sendable {
    /// What went wrong, from the closed list of ``Code``: what programs match on.
    public var code: Code
    /// Human-readable and free of secrets.
    public var message: String
    /// Set when a passcode or passphrase attempt must wait.
    public var retryAfterSeconds: Int?
    /// `passphraseRequired`: how the note is locked, so the client can say which passphrase
    /// opens it. Absent otherwise (added in v1; older clients ignore it).
    public var lock: LockInfo?
    /// `wrongPassphrase`, `throttled`: the account's passphrase hint, from the third
    /// consecutive wrong entry on.
    public var hint: String?
    /// `wrongPassphrase`: consecutive wrong passphrase entries.
    public var failedAttempts: Int?
    /// `conflict` for a save made from an older revision of a locked note: the stored one.
    public var revision: Int64?

    /// Makes an error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: the words for people: no secret, no quoted input.
    ///   - retryAfterSeconds: the seconds until another passcode or passphrase attempt is taken.
    ///   - lock: for `passphraseRequired`, how the note is locked.
    ///   - hint: for `wrongPassphrase` and a notes `throttled`, the account's passphrase hint.
    ///   - failedAttempts: for `wrongPassphrase`, the consecutive wrong entries.
    ///   - revision: for `conflict` on a locked note saved from an older revision, the stored one.
    public init(
        _ code: Code, _ message: String, retryAfterSeconds: Int? = nil, lock: LockInfo? = nil, hint: String? = nil,
        failedAttempts: Int? = nil, revision: Int64? = nil
    ) {
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
        self.lock = lock
        self.hint = hint
        self.failedAttempts = failedAttempts
        self.revision = revision
    }

    /// The `OSStatus` Apple's Security framework returns for the same failure.
    public var osStatus: Int32? { code.osStatus }

    /// An error's code. Each has one HTTP status and, where Apple's Security framework has one,
    /// the same `OSStatus` (docs/API.md, "Errors"). New codes may appear within a version.
    public enum Code: String, Codable, Sendable, CaseIterable {
        /// Malformed request or invalid parameter (`errSecParam`).
        case param
        /// Wrong passcode (`errSecAuthFailed`).
        case authFailed
        /// Too many wrong passcodes: wait `retryAfterSeconds` (`errSecAuthFailed`).
        case throttled
        /// The keybag is locked or the class is unavailable now (`errSecInteractionNotAllowed`).
        case interactionNotAllowed
        /// The client is not allowed (`errSecMissingEntitlement`).
        case missingEntitlement
        /// The client runs as another user: refused.
        case peerRejected
        /// The home has no keybag yet.
        case notInitialized
        /// `init` on a home that already has one (`errSecDuplicateItem`).
        case alreadyInitialized
        /// A passcode is required and was not given: for an item, its secret needs the
        /// user's presence (`errSecAuthFailed`).
        case passcodeRequired
        /// No passcode is set.
        case noPasscodeSet
        /// The keybag, its attempts file or the device key is missing or damaged.
        case keybagDamaged
        /// The request body exceeds the limit.
        case requestTooLarge
        /// No such route or object (`errSecItemNotFound`).
        case notFound
        /// An item with the same primary key exists (`errSecDuplicateItem`).
        case duplicateItem
        /// No item matches (`errSecItemNotFound`).
        case itemNotFound
        /// An item's stored data, a note or an attachment does not decrypt — damaged or altered
        /// on disk —, or a backup file is not a whole, unchanged Tresor backup (`errSecDecode`).
        case decode
        /// The keychain cannot be changed (`errSecReadOnly`).
        case readOnly
        /// No keychain of that name (`errSecNoSuchKeychain`).
        case noSuchKeychain
        /// The daemon failed; the message says how (`errSecInternalComponent`).
        case `internal`
        /// A locked note needs its passphrase: no secure session holds it (`lock` says which).
        case passphraseRequired
        /// The notes passphrase is wrong (`errSecAuthFailed`); counted, `hint` after three.
        case wrongPassphrase
        /// The notes account has no passphrase for locked notes yet.
        case noPassphrase
        /// A passphrase is set already: change it, or reset it if it is forgotten.
        case passphraseAlreadySet
        /// The note is locked and the operation needs it unlocked, or the reverse.
        case wrongLockState
        /// An attachment's kind cannot be locked (only image, drawing, table, map location,
        /// website link).
        case attachmentNotLockable
        /// Web API: no session, or an expired or forged one — sign in.
        case unauthorized
        /// Web API: a state-changing request without the session's CSRF token, or from
        /// another origin.
        case csrf
        /// Web API: the account may see this but not do it (a participant deleting a shared note).
        case forbidden
        /// The request no longer matches what is stored (a name taken, a note locked
        /// meanwhile): fetch again and retry.
        case conflict
        /// Web API: the account's storage quota (`webAccountQuotaBytes`) has no room for this.
        case quotaExceeded
        /// Web API on a server: its database cannot be reached just now (503, `Retry-After`);
        /// nothing was half-written. Try again shortly. Socket API: the calling process holds
        /// its share of connections already (docs/API.md, "Connections").
        case unavailable
        /// The disk holding the home is full (or the user's quota used up): nothing was changed;
        /// free space and try again (`errSecDiskFull`).
        case diskFull
        /// The home's file system is mounted read-only: nothing was changed; reads still work
        /// (`errSecReadOnly`).
        case diskReadOnly

        /// A code this client does not know reads as `internal`: error codes may grow within
        /// an API version (docs/API.md, "Versioning").
        /// - Parameter decoder: the decoder to read from.
        /// - Throws: `DecodingError` when the value is not a string.
        public init(from decoder: Decoder) throws {
            let raw = try decoder.singleValueContainer().decode(String.self)
            self = Code(rawValue: raw) ?? .internal
        }

        /// The `OSStatus` of ``securityStatus``, as a number (`-25300`); nil when there is none.
        public var osStatus: Int32? { securityStatus?.rawValue }

        /// The Security framework status for this failure; nil for failures that have no
        /// keychain counterpart (notes, the keybag's own life, the web API's limits).
        public var securityStatus: SecurityStatus? {
            switch self {
            case .param, .requestTooLarge: return .param
            case .authFailed, .throttled, .wrongPassphrase: return .authFailed
            case .interactionNotAllowed: return .interactionNotAllowed
            case .missingEntitlement, .peerRejected: return .missingEntitlement
            case .alreadyInitialized, .duplicateItem: return .duplicateItem
            case .notFound, .itemNotFound: return .itemNotFound
            case .decode: return .decode
            case .readOnly: return .readOnly
            case .noSuchKeychain: return .noSuchKeychain
            case .internal: return .internalComponent
            case .passcodeRequired: return .authFailed
            case .notInitialized, .noPasscodeSet, .keybagDamaged: return nil
            case .passphraseRequired, .noPassphrase, .passphraseAlreadySet, .wrongLockState, .attachmentNotLockable: return nil
            case .unauthorized: return .authFailed
            case .csrf, .forbidden: return .missingEntitlement
            case .conflict, .quotaExceeded: return nil
            case .unavailable: return nil
            case .diskFull: return .diskFull
            case .diskReadOnly: return .readOnly
            }
        }
    }
}

extension APIError: CustomStringConvertible {
    /// The error's ``message``.
    public var description: String { message }
}

/// The body of every error response: `{"error": {...}}`.
public struct ErrorResponse: Codable, Sendable {
    /// The error.
    public var error: APIError
    /// Makes an error body; the parameter is the property of the same name.
    public init(error: APIError) { self.error = error }
}
