import Foundation

/// `POST /v1/sync/challenges`: a device asks for something to sign.
public struct SyncChallengeRequest: Codable, Equatable, Sendable {
    public var account: String
    public var deviceID: String

    public init(account: String, deviceID: String) {
        self.account = account
        self.deviceID = deviceID
    }
}

/// A single-use sign-in challenge, answered within ``SyncLimits/challengeSeconds``.
public struct SyncChallenge: Codable, Equatable, Sendable {
    public var challengeID: String
    public var nonce: Data
    public var expires: Date

    public init(challengeID: String, nonce: Data, expires: Date) {
        self.challengeID = challengeID
        self.nonce = nonce
        self.expires = expires
    }

    /// The bytes a device signs with its Ed25519 credential to answer this challenge: a
    /// label, then the account name, device id, challenge id (each followed by a zero byte)
    /// and the nonce — so a signature answers this challenge for this device only.
    /// - Parameters:
    ///   - account: the account's login name, as sent in the challenge request.
    ///   - deviceID: the device's id.
    /// - Returns: the message to sign.
    public func signedMessage(account: String, deviceID: String) -> Data {
        var message = Data("tresor-sync-sign-in-v1".utf8)
        for part in [account.lowercased(), deviceID, challengeID] {
            message.append(0)
            message.append(Data(part.utf8))
        }
        message.append(0)
        message.append(nonce)
        return message
    }
}

/// `POST /v1/sync/sessions`: the signed challenge.
public struct SyncSignIn: Codable, Equatable, Sendable {
    public var challengeID: String
    public var signature: Data

    public init(challengeID: String, signature: Data) {
        self.challengeID = challengeID
        self.signature = signature
    }
}

/// A device session: sent as `Authorization: Bearer TOKEN` on every other sync request.
public struct SyncSession: Codable, Equatable, Sendable {
    public var token: String
    public var deviceID: String
    public var state: SyncDeviceState
    public var expires: Date

    public init(token: String, deviceID: String, state: SyncDeviceState, expires: Date) {
        self.token = token
        self.deviceID = deviceID
        self.state = state
        self.expires = expires
    }
}

/// What a sync route answers when it refuses: `{"code": "…", "message": "…"}`.
public struct SyncErrorBody: Codable, Equatable, Sendable {
    public enum Code: String, Codable, Sendable {
        /// Malformed request (`400`).
        case invalid
        /// Over a limit of ``SyncLimits`` (`413`).
        case tooLarge
        /// No session, an unknown or expired token, a wrong signature, an expired or used
        /// challenge, a wrong password (`401`).
        case unauthorized
        /// This device was removed from the circle (or its join denied): it must leave (`403`).
        case deviceRemoved
        /// This device waits for approval: only its join request answers it (`403`).
        case devicePending
        /// The request is not this device's to make (`403`).
        case forbidden
        /// No such request, device or account circle (`404`).
        case notFound
        /// The join request expired (`410`).
        case expired
        /// The device list changed meanwhile: read it again (`409`).
        case staleDeviceList
        /// The request contradicts what is stored: a device sequence reused with other content
        /// or skipped, an id taken, a request already answered (`409`).
        case conflict
        /// Too many attempts: wait (`429`, `Retry-After`).
        case throttled
        /// The database cannot be reached: try again (`503`).
        case unavailable
        /// Anything else (`500`).
        case `internal`
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }
}

/// A Server-Sent Event on `GET /v1/sync/events`: `event: notes`, data `{"counter": N,
/// "settings": S}` — a note of the account, its folders or its notes passphrase changed (another
/// device's push or a browser's edit).
public struct SyncNotesEvent: Codable, Equatable, Sendable {
    /// The account's notes counter now: pull notes if it is past your notes cursor.
    public var counter: UInt64
    /// The account's notes settings counter now (``SyncAccountState/notesSettings``): read the
    /// folders and the passphrase if it moved. Nil from a server that does not say it.
    public var settings: UInt64?

    public init(counter: UInt64, settings: UInt64? = nil) {
        self.counter = counter
        self.settings = settings
    }
}

/// A Server-Sent Event on `GET /v1/sync/events`: `event: records`, data `{"counter": N}`.
public struct SyncRecordsEvent: Codable, Equatable, Sendable {
    /// The account's latest counter: pull if it is past your cursor.
    public var counter: UInt64

    public init(counter: UInt64) {
        self.counter = counter
    }
}
