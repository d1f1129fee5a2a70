import Foundation

/// Where a device stands in its account's circle.
public enum SyncDeviceState: String, Codable, Sendable {
    /// Asked to join; may only poll its join request.
    case pending
    /// Approved (or the circle's first device).
    case trusted
    /// Removed or denied: refused from then on, told to leave.
    case removed
}

/// `POST /v1/sync/devices`: a device joins its account's circle, signing in with the web
/// account's name and password. The first device creates the circle; any other sends a join request.
public struct SyncEnrollment: Codable, Sendable {
    public var account: String
    public var password: String
    /// The device's id (a random UUID it chose), unique in the account.
    public var deviceID: String
    /// What the user calls the device (visible to the server).
    public var deviceName: String
    /// The Ed25519 public key (32 bytes) the device signs in with from now on.
    public var credentialPublicKey: Data
    /// The device's public identity as devices read it (opaque to the server): what trusted
    /// devices see in its join request.
    public var identity: Data
    /// The Ed25519 public key (32 bytes) of the circle's recovery identity: kept when this
    /// enrollment creates the circle, ignored otherwise. Without it the circle has no recovery join.
    public var recoveryPublicKey: Data?

    public init(
        account: String, password: String, deviceID: String, deviceName: String, credentialPublicKey: Data, identity: Data,
        recoveryPublicKey: Data? = nil
    ) {
        self.account = account
        self.password = password
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.credentialPublicKey = credentialPublicKey
        self.identity = identity
        self.recoveryPublicKey = recoveryPublicKey
    }
}

/// The answer to an enrollment.
public struct SyncEnrollmentResponse: Codable, Equatable, Sendable {
    /// `trusted` for the circle's first device, `pending` for any other.
    public var state: SyncDeviceState
    /// Whether this enrollment created the circle.
    public var createdCircle: Bool
    /// The join request to wait on (pending devices).
    public var joinRequest: SyncJoinRequest?

    public init(state: SyncDeviceState, createdCircle: Bool, joinRequest: SyncJoinRequest?) {
        self.state = state
        self.createdCircle = createdCircle
        self.joinRequest = joinRequest
    }
}

/// A request to join, as trusted devices list it and the asking device polls it.
public struct SyncJoinRequest: Codable, Equatable, Sendable {
    public enum State: String, Codable, Sendable {
        case pending, approved, denied, expired
    }

    public var requestID: String
    public var deviceID: String
    public var deviceName: String
    /// The asking device's public identity (opaque to the server).
    public var identity: Data
    /// Random bytes of the server's, for the devices' fingerprint words.
    public var nonce: Data
    public var created: Date
    public var expires: Date
    public var state: State

    public init(
        requestID: String, deviceID: String, deviceName: String, identity: Data, nonce: Data, created: Date, expires: Date, state: State
    ) {
        self.requestID = requestID
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.identity = identity
        self.nonce = nonce
        self.created = created
        self.expires = expires
        self.state = state
    }
}

extension SyncJoinRequest {
    /// The bytes the circle's recovery identity signs to let this request's device in when no
    /// trusted device is left (`POST /v1/sync/join-requests/{id}/recover`): a label, then the
    /// request id and the device id, each after a zero byte, then a zero byte and the request's
    /// nonce (the request id is random and the server's, so the signature serves this request only).
    /// - Returns: the message to sign.
    public func recoveryMessage() -> Data {
        var message = Data("tresor-sync-recovery-v1".utf8)
        for part in [requestID, deviceID] {
            message.append(0)
            message.append(Data(part.utf8))
        }
        message.append(0)
        message.append(nonce)
        return message
    }
}

/// `POST /v1/sync/join-requests/{id}/recover`, by the asking device itself: the recovery
/// identity's signature of ``SyncJoinRequest/recoveryMessage()`` and the new device list.
public struct SyncRecovery: Codable, Equatable, Sendable {
    public var signature: Data
    public var deviceList: SyncDeviceListUpdate

    public init(signature: Data, deviceList: SyncDeviceListUpdate) {
        self.signature = signature
        self.deviceList = deviceList
    }
}

/// A circle key wrapped for the recovery identity, for one epoch: opaque to the server.
public struct SyncRecoveryEnvelope: Codable, Equatable, Sendable {
    public var epoch: UInt64
    public var blob: Data

    public init(epoch: UInt64, blob: Data) {
        self.epoch = epoch
        self.blob = blob
    }
}

/// `PUT /v1/sync/recovery-envelopes` and the answer to `GET /v1/sync/recovery-envelopes`.
public struct SyncRecoveryEnvelopes: Codable, Equatable, Sendable {
    public var envelopes: [SyncRecoveryEnvelope]

    public init(envelopes: [SyncRecoveryEnvelope]) {
        self.envelopes = envelopes
    }
}

/// A device of the circle, as `GET /v1/sync/devices` lists it.
public struct SyncDevice: Codable, Equatable, Sendable {
    public var deviceID: String
    public var name: String
    public var state: SyncDeviceState
    public var credentialPublicKey: Data
    public var created: Date
    public var lastSeen: Date?
    /// The highest device sequence among the records the server holds from it (0 when none);
    /// absent from a server older than this field.
    public var lastSequence: UInt64?

    public init(
        deviceID: String, name: String, state: SyncDeviceState, credentialPublicKey: Data, created: Date, lastSeen: Date?, lastSequence: UInt64? = nil
    ) {
        self.deviceID = deviceID
        self.name = name
        self.state = state
        self.credentialPublicKey = credentialPublicKey
        self.created = created
        self.lastSeen = lastSeen
        self.lastSequence = lastSequence
    }
}

/// The trusted-device list as the server keeps it: a blob devices sign (the server cannot
/// check it) and its version.
public struct SyncDeviceList: Codable, Equatable, Sendable {
    /// 0 while no list was stored.
    public var version: UInt64
    public var blob: Data?

    public init(version: UInt64, blob: Data?) {
        self.version = version
        self.blob = blob
    }
}

/// `PUT /v1/sync/device-list`: stored only if the server's version is still `expectedVersion`
/// (else `409 staleDeviceList`), and `version` is greater.
public struct SyncDeviceListUpdate: Codable, Equatable, Sendable {
    public var expectedVersion: UInt64
    public var version: UInt64
    public var blob: Data
    /// With the circle's first list only (`expectedVersion` 0): the Ed25519 public key (32
    /// bytes) of the recovery identity that list names, replacing the one of the enrollment — a
    /// first join retried after it stopped half-way makes a new recovery key.
    public var recoveryPublicKey: Data?

    public init(expectedVersion: UInt64, version: UInt64, blob: Data, recoveryPublicKey: Data? = nil) {
        self.expectedVersion = expectedVersion
        self.version = version
        self.blob = blob
        self.recoveryPublicKey = recoveryPublicKey
    }
}

/// A circle key wrapped (HPKE) for one device, for one key epoch: opaque to the server.
public struct SyncKeyEnvelope: Codable, Equatable, Sendable {
    public var deviceID: String
    public var epoch: UInt64
    public var blob: Data

    public init(deviceID: String, epoch: UInt64, blob: Data) {
        self.deviceID = deviceID
        self.epoch = epoch
        self.blob = blob
    }
}

/// `PUT /v1/sync/key-envelopes` and the answer to `GET /v1/sync/key-envelopes`.
public struct SyncKeyEnvelopes: Codable, Equatable, Sendable {
    public var envelopes: [SyncKeyEnvelope]

    public init(envelopes: [SyncKeyEnvelope]) {
        self.envelopes = envelopes
    }
}

/// `POST /v1/sync/join-requests/{id}/approve`: in one step, the new signed device list (with
/// the same compare-and-swap as `PUT /v1/sync/device-list`) and the circle key wrapped for the
/// new device.
public struct SyncApproval: Codable, Equatable, Sendable {
    public var deviceList: SyncDeviceListUpdate
    /// For the joining device (its `deviceID` is the request's).
    public var envelope: SyncKeyEnvelope

    public init(deviceList: SyncDeviceListUpdate, envelope: SyncKeyEnvelope) {
        self.deviceList = deviceList
        self.envelope = envelope
    }
}
