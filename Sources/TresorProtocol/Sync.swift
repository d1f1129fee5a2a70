import FoundationEssentials

// This device in a sync account on a Tresor server (docs/SYNC.md, "Devices"): the `tresor`
// CLI only. Passwords, passcodes and recovery keys travel in request bodies, never in a path.

extension Route {
    /// `POST` ``SyncJoinRequestBody`` → ``SyncJoinAnswer``: the first device creates the circle,
    /// a further one sends a join request.
    public static let syncJoin = "/v1/sync-account/join"
    /// `POST` (no body) → ``SyncJoinAnswer``: a waiting device checks its request once, and
    /// completes its join when it was approved.
    public static let syncJoinCheck = "/v1/sync-account/join/check"
    /// `POST` ``SyncRecoverRequestBody`` → ``SyncJoinAnswer``: a join with the recovery key.
    public static let syncRecover = "/v1/sync-account/recover"
    /// `GET` → ``SyncRequestsAnswer``: the pending join requests with their words.
    public static let syncRequests = "/v1/sync-account/requests"
    /// `POST {id}/approve` ``SyncApproveRequestBody``, `POST {id}/deny` (no body): each → `204`.
    public static let syncRequest = "/v1/sync-account/requests"
    /// `GET` → ``SyncDevicesAnswer``; `DELETE {id or name}` ``SyncRemoveRequestBody`` removes a
    /// device → the removed ``SyncDeviceInfo``.
    public static let syncDevices = "/v1/sync-account/devices"
    /// `POST`: this device leaves its sync account (its data stays).
    public static let syncLeave = "/v1/sync-account/leave"
    /// `GET` → ``SyncStatusAnswer``.
    public static let syncStatus = "/v1/sync-account/status"
}

/// `POST /v1/sync-account/join`.
public struct SyncJoinRequestBody: Codable, Sendable {
    /// The server's address (`https://…`, or `http://` to a loopback host).
    public var server: String
    /// The web account's name.
    public var account: String
    /// The web account's password: sent once, to the server's enrollment.
    public var password: String
    /// What the devices of the circle call this one; the host name when absent.
    public var deviceName: String?
    /// The owner's invite: the web account is registered with it (and `password`) first.
    public var invite: String?
    /// The certificate authorities (PEM) the server's certificate must chain to, instead of
    /// the system's (`--ca-file`); kept with the account for every later request.
    public var caCertificates: String?

    /// Makes a join request; the parameters are the properties of the same names.
    public init(server: String, account: String, password: String, deviceName: String?, invite: String? = nil, caCertificates: String? = nil) {
        self.server = server
        self.account = account
        self.password = password
        self.deviceName = deviceName
        self.invite = invite
        self.caCertificates = caCertificates
    }
}

/// `POST /v1/sync-account/recover`: a join with the recovery key, when no trusted device is left.
public struct SyncRecoverRequestBody: Codable, Sendable {
    /// The server's address, as for ``SyncJoinRequestBody/server``.
    public var server: String
    /// The web account's name.
    public var account: String
    /// The web account's password.
    public var password: String
    /// The recovery key as the user typed it (56 base32 characters; dashes and spaces ignored).
    public var recoveryKey: String
    /// What the devices of the circle call this one; the host name when absent.
    public var deviceName: String?
    /// As ``SyncJoinRequestBody/caCertificates``.
    public var caCertificates: String?

    /// Makes a recovery request; the parameters are the properties of the same names.
    public init(server: String, account: String, password: String, recoveryKey: String, deviceName: String?, caCertificates: String? = nil) {
        self.server = server
        self.account = account
        self.password = password
        self.recoveryKey = recoveryKey
        self.deviceName = deviceName
        self.caCertificates = caCertificates
    }
}

/// Where this device stands in its sync account.
public enum SyncMembership: String, Codable, Sendable {
    /// Waiting for a trusted device to approve its join request.
    case waiting
    /// A device of the circle.
    case trusted
    /// Removed, or its join denied: it should leave (`tresor sync leave`).
    case removed
}

/// The answer to a join, a recovery or a check.
public struct SyncJoinAnswer: Codable, Sendable {
    /// Where this device stands: `trusted` for the account's first device (and after a recovery
    /// or an approved check), `waiting` for a further one, `removed` when its join was denied.
    public var state: SyncMembership
    /// This device's id.
    public var deviceID: String
    /// The recovery key of a circle this join created: shown once, stored nowhere.
    public var recoveryKey: String?
    /// The join request a trusted device approves (waiting devices).
    public var requestID: String?
    /// The fingerprint words the approving device must show too (waiting devices).
    public var words: [String]?

    /// Makes a join answer; the parameters are the properties of the same names.
    public init(state: SyncMembership, deviceID: String, recoveryKey: String? = nil, requestID: String? = nil, words: [String]? = nil) {
        self.state = state
        self.deviceID = deviceID
        self.recoveryKey = recoveryKey
        self.requestID = requestID
        self.words = words
    }
}

/// A device asking to join, as a trusted device sees it.
public struct SyncPendingRequest: Codable, Sendable {
    /// The join request's id, for `POST /v1/sync-account/requests/{id}/approve` or `…/deny`.
    public var requestID: String
    /// The asking device's id.
    public var deviceID: String
    /// The name the asking device gave itself.
    public var deviceName: String
    /// Compare them with the words the asking device shows.
    public var words: [String]
    /// When the request expires (seconds since 1970 on the wire).
    public var expires: Date

    /// Makes a pending request; the parameters are the properties of the same names.
    public init(requestID: String, deviceID: String, deviceName: String, words: [String], expires: Date) {
        self.requestID = requestID
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.words = words
        self.expires = expires
    }
}

/// `GET /v1/sync-account/requests`.
public struct SyncRequestsAnswer: Codable, Sendable {
    /// The join requests waiting, with their fingerprint words.
    public var requests: [SyncPendingRequest]

    /// Makes the answer; the parameter is the property of the same name.
    public init(requests: [SyncPendingRequest]) { self.requests = requests }
}

/// `POST /v1/sync-account/requests/{id}/approve`: the passcode, when one is set.
public struct SyncApproveRequestBody: Codable, Sendable {
    /// The keybag passcode: required when one is set (`passcodeRequired` without it, `authFailed`
    /// when wrong, counted as at unlock).
    public var passcode: String?

    /// Makes an approval; the parameter is the property of the same name.
    public init(passcode: String?) { self.passcode = passcode }
}

/// `DELETE /v1/sync-account/devices/{id or name}`: removing a device from the circle needs the
/// passcode again, as approving one does — it rolls the circle key and shuts a device out. The
/// answer is the removed ``SyncDeviceInfo``.
public struct SyncRemoveRequestBody: Codable, Sendable {
    /// The keybag passcode, required when one is set (counted when wrong).
    public var passcode: String?

    /// Makes a removal request; the parameter is the property of the same name.
    public init(passcode: String?) { self.passcode = passcode }
}

/// A device of the circle, as this device's verified list names it.
public struct SyncDeviceInfo: Codable, Sendable {
    /// The device's id.
    public var deviceID: String
    /// The device's name in the circle.
    public var name: String
    /// Whether it is this device.
    public var isThisDevice: Bool

    /// Makes a device description; the parameters are the properties of the same names.
    public init(deviceID: String, name: String, isThisDevice: Bool) {
        self.deviceID = deviceID
        self.name = name
        self.isThisDevice = isThisDevice
    }
}

/// `GET /v1/sync-account/devices`: the trusted devices of the list this device verified.
public struct SyncDevicesAnswer: Codable, Sendable {
    /// The trusted devices, this one among them.
    public var devices: [SyncDeviceInfo]
    /// Why the server could not be asked for a newer list: the devices are those of the list
    /// this device holds. Nil when the server answered.
    public var serverUnreachable: String?

    /// Makes the answer; the parameters are the properties of the same names.
    public init(devices: [SyncDeviceInfo], serverUnreachable: String? = nil) {
        self.devices = devices
        self.serverUnreachable = serverUnreachable
    }
}

/// `POST /v1/sync-account/leave`: whether the server heard of it. When it did not (it could not
/// be reached), the other devices still list this one until one of them removes it.
public struct SyncLeaveAnswer: Codable, Sendable, Equatable {
    /// Whether the server heard that this device left.
    public var serverTold: Bool

    /// Makes the answer; the parameter is the property of the same name.
    public init(serverTold: Bool) { self.serverTold = serverTold }
}

/// `GET /v1/sync-account/status`.
public struct SyncStatusAnswer: Codable, Sendable {
    /// Whether this device is in a sync account at all.
    public var joined: Bool
    /// The server's address; nil when not joined.
    public var server: String?
    /// The web account's name; nil when not joined.
    public var account: String?
    /// This device's id; nil when not joined.
    public var deviceID: String?
    /// This device's name in the circle; nil when not joined.
    public var deviceName: String?
    /// Where this device stands in the account; nil when not joined.
    public var state: SyncMembership?
    /// The version of the trusted-device list this device verified; nil while it holds none.
    public var listVersion: UInt64?
    /// The circle key's epoch (it rolls when a device is removed); nil while no list is held.
    public var epoch: UInt64?
    /// The trusted devices of the list this device verified; empty when not joined or none is held.
    public var trustedDevices: [SyncDeviceInfo]
    /// The join request still waiting (waiting devices).
    public var requestID: String?
    /// What the sync engine holds here (joined devices whose login keychain opens).
    public var counters: SyncCounters?
    /// Changes of this device's notes waiting to go out (docs/SYNC.md, "Notes"), when its
    /// notes open.
    public var notesWaiting: Int?
    /// Notes deleted for good on another device that wait here as a mass deletion
    /// (`tresor sync now --allow-deletions`), when the notes open.
    public var noteDeletionsHeld: Int?
    /// Notes among ``notesWaiting`` whose edit here waits until the note is locked here too:
    /// another device locked it since (`tresor sync now` names them), when the notes open.
    public var notesHeldUntilLocked: Int?
    /// What waits of the synced notes' attachments (docs/SYNC.md, "Attachments"), when the
    /// notes open.
    public var attachments: SyncAttachmentsStatus?
    /// Records pulled while the keybag was locked, held sealed for the unlock (docs/SYNC.md,
    /// "Background sync").
    public var heldWhileLocked: Int?
    /// What the daemon's background sync last failed with, if its last attempt failed.
    public var lastError: String?
    /// When the background sync last failed.
    public var lastErrorAt: Date?
    /// Whether the daemon holds the server's live-events stream open now.
    public var live: Bool?
    /// False when the daemon does not sync by itself (`"syncInBackground": false` in
    /// config.json): only `tresor sync now` syncs.
    public var inBackground: Bool?

    /// Makes a status; the parameters are the properties of the same names, and the fields the
    /// daemon fills in afterwards (counters, notes, attachments, background sync) start nil.
    public init(
        joined: Bool, server: String? = nil, account: String? = nil, deviceID: String? = nil, deviceName: String? = nil,
        state: SyncMembership? = nil, listVersion: UInt64? = nil, epoch: UInt64? = nil, trustedDevices: [SyncDeviceInfo] = [],
        requestID: String? = nil
    ) {
        self.joined = joined
        self.server = server
        self.account = account
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.state = state
        self.listVersion = listVersion
        self.epoch = epoch
        self.trustedDevices = trustedDevices
        self.requestID = requestID
    }
}

/// What waits of the synced notes' attachments (`tresor sync status`; docs/SYNC.md, "Attachments").
public struct SyncAttachmentsStatus: Codable, Sendable, Equatable {
    /// Attachments of this device and removals made here, waiting to go to the server.
    public var toSend: Int
    /// Attachments the server has that this device has yet to fetch.
    public var toFetch: Int
    /// The server has no attachment routes (an older Tresor server): every attachment waits,
    /// notes and items sync.
    public var serverTakesNone: Bool
    /// What the server refused at the last sync, each with its reason; they wait.
    public var refused: [SyncAttachmentRefusal]

    /// Makes an attachments status; the parameters are the properties of the same names.
    public init(toSend: Int, toFetch: Int, serverTakesNone: Bool, refused: [SyncAttachmentRefusal]) {
        self.toSend = toSend
        self.toFetch = toFetch
        self.serverTakesNone = serverTakesNone
        self.refused = refused
    }
}

/// An attachment the server refused, and why (its refusal's code and message: over the size
/// limit or the quota, its note locked or gone).
public struct SyncAttachmentRefusal: Codable, Sendable, Equatable {
    /// The attachment's id.
    public var attachmentID: String
    /// The server's refusal code (`tooLarge`, `conflict`, `notFound`, `invalid`).
    public var code: String
    /// The server's message, in words.
    public var reason: String

    /// Makes a refusal; the parameters are the properties of the same names.
    public init(attachmentID: String, code: String, reason: String) {
        self.attachmentID = attachmentID
        self.code = code
        self.reason = reason
    }
}
