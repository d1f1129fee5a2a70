import Foundation
import Logging
import PostgresNIO
import TresorCrypto
import TresorSyncProtocol
import TresorWebStore
import TresorWebStorePostgres

/// A device signed in: its account, id and state, read again on every request (a removal
/// takes effect at once).
struct SyncCaller: Sendable {
    var account: AccountID
    var deviceID: String
    var state: SyncDeviceState
}

/// A challenge taken (deleted) to be answered.
struct TakenChallenge: Sendable {
    var challenge: SyncChallenge
    var loginName: String
    var deviceID: String
}

extension SyncStore {
    /// Challenges waiting for an answer per account name: anyone may ask for one, so their
    /// number is bounded (they expire after ``SyncLimits/challengeSeconds``).
    static let openChallengesPerName: Int64 = 16

    // MARK: Circles and devices

    /// Adds a device to the circle of `account`, creating the circle for its first device
    /// (trusted); any other device is pending, with a join request.
    /// - Throws: ``SyncError/conflict`` when the device id is taken in the account.
    func enroll(_ enrollment: SyncEnrollment, account: AccountID) async throws -> SyncEnrollmentResponse {
        let logger = self.logger, now = clock()
        return try await db.transaction { connection in
            let created = try await connection.count(
                """
                INSERT INTO sync_circles (account_id, recovery_key, created)
                VALUES (\(account.rawValue), \(enrollment.recoveryPublicKey), \(now.timeIntervalSince1970))
                ON CONFLICT (account_id) DO NOTHING RETURNING 1
                """, logger) == 1
            let state: SyncDeviceState = created ? .trusted : .pending
            let added = try await connection.count(
                """
                INSERT INTO sync_devices (account_id, id, credential_key, name, state, created)
                VALUES (\(account.rawValue), \(enrollment.deviceID), \(enrollment.credentialPublicKey), \(enrollment.deviceName),
                        \(state.rawValue), \(now.timeIntervalSince1970))
                ON CONFLICT (account_id, id) DO NOTHING RETURNING 1
                """, logger)
            guard added == 1 else { throw SyncError(.conflict, "a device with this id is already in the account's circle") }
            guard !created else { return SyncEnrollmentResponse(state: .trusted, createdCircle: true, joinRequest: nil) }
            let request = SyncJoinRequest(
                requestID: UUID().uuidString.lowercased(), deviceID: enrollment.deviceID, deviceName: enrollment.deviceName,
                identity: enrollment.identity, nonce: SecureRandom.bytes(count: 16), created: now,
                expires: now.addingTimeInterval(SyncLimits.joinRequestSeconds), state: .pending)
            try await connection.run(
                """
                INSERT INTO sync_join_requests (id, account_id, device_id, identity, nonce, created, expires, state)
                VALUES (\(request.requestID), \(account.rawValue), \(request.deviceID), \(request.identity), \(request.nonce),
                        \(now.timeIntervalSince1970), \(request.expires.timeIntervalSince1970), 'pending')
                """, logger)
            return SyncEnrollmentResponse(state: .pending, createdCircle: false, joinRequest: request)
        }
    }

    /// The device's credential key and state, or nil.
    func device(_ id: String, account: AccountID) async throws -> (key: Data, state: SyncDeviceState)? {
        let logger = self.logger
        return try await db.read { connection in
            try await connection.row(
                "SELECT credential_key, state FROM sync_devices WHERE account_id = \(account.rawValue) AND id = \(id)", logger,
                as: (Data, String).self
            ).map { ($0.0, SyncDeviceState(rawValue: $0.1) ?? .removed) }
        }
    }

    /// The circle's devices, oldest first.
    func devices(account: AccountID) async throws -> [SyncDevice] {
        let logger = self.logger
        return try await db.read { connection in
            try await connection.rows(
                """
                SELECT id, name, state, credential_key, created, last_seen FROM sync_devices
                WHERE account_id = \(account.rawValue) ORDER BY created, id
                """, logger, as: (String, String, String, Data, Double, Double?).self
            ).map { id, name, state, key, created, seen in
                SyncDevice(
                    deviceID: id, name: name, state: SyncDeviceState(rawValue: state) ?? .removed, credentialPublicKey: key,
                    created: Date(timeIntervalSince1970: created), lastSeen: seen.map(Date.init(timeIntervalSince1970:)))
            }
        }
    }

    /// Removes a device: refused from its next request on; its pending join request is denied.
    /// - Throws: ``SyncError/notFound`` for a device not in the circle.
    func removeDevice(_ id: String, account: AccountID) async throws {
        let logger = self.logger
        try await db.transaction { connection in
            let changed = try await connection.count(
                "UPDATE sync_devices SET state = 'removed' WHERE account_id = \(account.rawValue) AND id = \(id) RETURNING 1", logger)
            guard changed == 1 else { throw SyncError(.notFound, "no such device in this circle") }
            try await connection.run(
                """
                UPDATE sync_join_requests SET state = 'denied'
                WHERE account_id = \(account.rawValue) AND device_id = \(id) AND state = 'pending'
                """, logger)
        }
    }

    // MARK: Sign-in

    /// A new challenge for `deviceID` of `loginName` (stored whether or not they exist: the
    /// answer is checked, not the question). Expired challenges are swept on the way; at most
    /// ``SyncStore/openChallengesPerName`` wait per account name at once.
    /// - Throws: ``SyncError`` `throttled` beyond that.
    func newChallenge(loginName: String, deviceID: String) async throws -> SyncChallenge {
        let logger = self.logger, now = clock()
        let challenge = SyncChallenge(
            challengeID: UUID().uuidString.lowercased(), nonce: SecureRandom.bytes(count: 32),
            expires: now.addingTimeInterval(SyncLimits.challengeSeconds))
        try await db.transaction { connection in
            try await connection.run("DELETE FROM sync_challenges WHERE expires < \(now.timeIntervalSince1970)", logger)
            let open = try await connection.value(
                "SELECT count(*)::bigint FROM sync_challenges WHERE login_name = \(loginName)", logger, as: Int64.self) ?? 0
            guard open < Self.openChallengesPerName else {
                throw SyncError(.throttled, "too many sign-ins under way for this account: try again in a minute",
                                retryAfterSeconds: Int(SyncLimits.challengeSeconds))
            }
            try await connection.run(
                """
                INSERT INTO sync_challenges (id, login_name, device_id, nonce, expires)
                VALUES (\(challenge.challengeID), \(loginName), \(deviceID), \(challenge.nonce), \(challenge.expires.timeIntervalSince1970))
                """, logger)
        }
        return challenge
    }

    /// Takes challenge `id` (it can be answered once): nil when unknown, used or expired.
    func takeChallenge(_ id: String) async throws -> TakenChallenge? {
        let logger = self.logger, now = clock()
        let row = try await db.transaction { connection in
            try await connection.row(
                "DELETE FROM sync_challenges WHERE id = \(id) RETURNING login_name, device_id, nonce, expires", logger,
                as: (String, String, Data, Double).self)
        }
        guard let (loginName, deviceID, nonce, expires) = row, expires >= now.timeIntervalSince1970 else { return nil }
        return TakenChallenge(
            challenge: SyncChallenge(challengeID: id, nonce: nonce, expires: Date(timeIntervalSince1970: expires)),
            loginName: loginName, deviceID: deviceID)
    }

    /// A session for a device that answered its challenge.
    func startSession(account: AccountID, deviceID: String, state: SyncDeviceState) async throws -> SyncSession {
        let logger = self.logger, now = clock()
        let token = SessionTokens.random()
        let expires = now.addingTimeInterval(SyncLimits.sessionSeconds)
        try await db.transaction { connection in
            try await connection.run("DELETE FROM sync_sessions WHERE expires < \(now.timeIntervalSince1970)", logger)
            try await connection.run(
                """
                INSERT INTO sync_sessions (token_digest, account_id, device_id, created, expires)
                VALUES (\(SessionTokens.digest(token)), \(account.rawValue), \(deviceID), \(now.timeIntervalSince1970),
                        \(expires.timeIntervalSince1970))
                """, logger)
            try await connection.run(
                "UPDATE sync_devices SET last_seen = \(now.timeIntervalSince1970) WHERE account_id = \(account.rawValue) AND id = \(deviceID)",
                logger)
        }
        return SyncSession(token: token, deviceID: deviceID, state: state, expires: expires)
    }

    /// The device a session token belongs to, with its state now; nil for an unknown or
    /// expired token.
    func caller(token: String) async throws -> SyncCaller? {
        guard SessionTokens.isWellFormed(token) else { return nil }
        let logger = self.logger, now = clock().timeIntervalSince1970
        return try await db.read { connection in
            try await connection.row(
                """
                SELECT s.account_id, s.device_id, d.state FROM sync_sessions s
                JOIN sync_devices d ON d.account_id = s.account_id AND d.id = s.device_id
                WHERE s.token_digest = \(SessionTokens.digest(token)) AND s.expires > \(now)
                """, logger, as: (String, String, String).self
            ).map { SyncCaller(account: AccountID(rawValue: $0.0), deviceID: $0.1, state: SyncDeviceState(rawValue: $0.2) ?? .removed) }
        }
    }

    // MARK: Join requests

    /// The circle's join requests still waiting (pending and not expired), oldest first.
    func pendingJoinRequests(account: AccountID) async throws -> [SyncJoinRequest] {
        try await joinRequests(account: account, id: nil, pendingOnly: true)
    }

    /// Join request `id` of the circle, or nil.
    func joinRequest(_ id: String, account: AccountID) async throws -> SyncJoinRequest? {
        try await joinRequests(account: account, id: id, pendingOnly: false).first
    }

    private func joinRequests(account: AccountID, id: String?, pendingOnly: Bool) async throws -> [SyncJoinRequest] {
        let logger = self.logger, now = clock()
        return try await db.read { connection in
            try await connection.rows(
                """
                SELECT r.id, r.device_id, d.name, r.identity, r.nonce, r.created, r.expires, r.state FROM sync_join_requests r
                JOIN sync_devices d ON d.account_id = r.account_id AND d.id = r.device_id
                WHERE r.account_id = \(account.rawValue) AND (\(id)::text IS NULL OR r.id = \(id))
                  AND (NOT \(pendingOnly) OR (r.state = 'pending' AND r.expires > \(now.timeIntervalSince1970)))
                ORDER BY r.created, r.id
                """, logger, as: (String, String, String, Data, Data, Double, Double, String).self
            ).map { id, device, name, identity, nonce, created, expires, state in
                var request = SyncJoinRequest(
                    requestID: id, deviceID: device, deviceName: name, identity: identity, nonce: nonce,
                    created: Date(timeIntervalSince1970: created), expires: Date(timeIntervalSince1970: expires),
                    state: SyncJoinRequest.State(rawValue: state) ?? .denied)
                // Expiry is read, never written: an expired request stays as it was.
                if request.state == .pending && request.expires <= now { request.state = .expired }
                return request
            }
        }
    }

    /// How a join request is answered.
    enum JoinAnswer: Sendable {
        /// By a trusted device: the new list and the new device's key envelope.
        case approve(SyncApproval)
        /// By the asking device with the recovery identity's signature (checked by the caller):
        /// the new list; the device then reads the recovery envelopes.
        case recover(SyncDeviceListUpdate)
        case deny
    }

    /// Answers a pending join request in one transaction: approving or recovering stores the
    /// new device list (compare-and-swap) — and, approving, the new device's key envelope — and
    /// trusts the device; denying removes it. An expired or answered request changes nothing.
    /// - Throws: ``SyncError`` `notFound`, `expired`, `conflict`, `staleDeviceList`.
    func answerJoinRequest(_ id: String, account: AccountID, _ answer: JoinAnswer) async throws {
        let logger = self.logger, now = clock().timeIntervalSince1970
        try await db.transaction { connection in
            guard let (device, expires, state) = try await connection.row(
                "SELECT device_id, expires, state FROM sync_join_requests WHERE id = \(id) AND account_id = \(account.rawValue) FOR UPDATE",
                logger, as: (String, Double, String).self)
            else { throw SyncError(.notFound, "no such join request in this circle") }
            guard state == "pending" else { throw SyncError(.conflict, "this join request was already \(state)") }
            guard expires > now else { throw SyncError(.expired, "this join request expired: the device asks again") }
            switch answer {
            case .deny: break
            case .recover(let list): try await Self.swapDeviceList(list, account: account, connection, logger)
            case .approve(let approval):
                guard approval.envelope.deviceID == device else {
                    throw SyncError(.invalid, "the key envelope is not for the joining device")
                }
                try await Self.swapDeviceList(approval.deviceList, account: account, connection, logger)
                try await connection.run(
                    """
                    INSERT INTO sync_key_envelopes (account_id, device_id, epoch, envelope, created)
                    VALUES (\(account.rawValue), \(device), \(Int64(approval.envelope.epoch)), \(approval.envelope.blob), \(now))
                    ON CONFLICT (account_id, device_id, epoch) DO UPDATE SET envelope = EXCLUDED.envelope, created = EXCLUDED.created
                    """, logger)
            }
            let (requestState, deviceState) = if case .deny = answer { ("denied", "removed") } else { ("approved", "trusted") }
            try await connection.run("UPDATE sync_join_requests SET state = \(requestState) WHERE id = \(id)", logger)
            try await connection.run(
                "UPDATE sync_devices SET state = \(deviceState) WHERE account_id = \(account.rawValue) AND id = \(device) AND state = 'pending'",
                logger)
        }
    }

    // MARK: The device list and key envelopes

    /// The circle's signed device list and its version.
    func deviceList(account: AccountID) async throws -> SyncDeviceList {
        let logger = self.logger
        return try await db.read { connection in
            let row = try await connection.row(
                "SELECT device_list_version, device_list FROM sync_circles WHERE account_id = \(account.rawValue)", logger, as: (Int64, Data?).self)
            return SyncDeviceList(version: UInt64(row?.0 ?? 0), blob: row?.1)
        }
    }

    /// Stores a new device list if the stored version is still the expected one.
    /// - Throws: ``SyncError/staleDeviceList`` (nothing stored).
    func putDeviceList(_ update: SyncDeviceListUpdate, account: AccountID) async throws {
        let logger = self.logger
        try await db.transaction { connection in try await Self.swapDeviceList(update, account: account, connection, logger) }
    }

    private static func swapDeviceList(
        _ update: SyncDeviceListUpdate, account: AccountID, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        guard update.version > update.expectedVersion else {
            throw SyncError(.invalid, "the new device list's version must be greater than the expected one")
        }
        let swapped = try await connection.count(
            """
            UPDATE sync_circles SET device_list_version = \(Int64(update.version)), device_list = \(update.blob)
            WHERE account_id = \(account.rawValue) AND device_list_version = \(Int64(update.expectedVersion)) RETURNING 1
            """, logger)
        guard swapped == 1 else {
            let current = try await connection.value(
                "SELECT device_list_version FROM sync_circles WHERE account_id = \(account.rawValue)", logger, as: Int64.self) ?? 0
            throw SyncError(.staleDeviceList, "the device list is at version \(current), not \(update.expectedVersion): read it again")
        }
    }

    /// Stores key envelopes for devices of the circle (one per device and epoch; a second
    /// for the same pair replaces the first).
    /// - Throws: ``SyncError/invalid`` for a device not in the circle, or a removed one.
    func putEnvelopes(_ envelopes: [SyncKeyEnvelope], account: AccountID) async throws {
        let logger = self.logger, now = clock().timeIntervalSince1970
        try await db.transaction { connection in
            for (index, envelope) in envelopes.enumerated() {
                let state = try await connection.value(
                    "SELECT state FROM sync_devices WHERE account_id = \(account.rawValue) AND id = \(envelope.deviceID)", logger, as: String.self)
                guard let state, state != SyncDeviceState.removed.rawValue else {
                    throw SyncError(.invalid, "envelope \(index): no such device in this circle, or it was removed")
                }
                try await connection.run(
                    """
                    INSERT INTO sync_key_envelopes (account_id, device_id, epoch, envelope, created)
                    VALUES (\(account.rawValue), \(envelope.deviceID), \(Int64(envelope.epoch)), \(envelope.blob), \(now))
                    ON CONFLICT (account_id, device_id, epoch) DO UPDATE SET envelope = EXCLUDED.envelope, created = EXCLUDED.created
                    """, logger)
            }
        }
    }

    /// The public key of the circle's recovery identity, or nil (none was given).
    func recoveryKey(account: AccountID) async throws -> Data? {
        let logger = self.logger
        return try await db.read { connection in
            // No circle and a circle without a key both read as nil.
            let stored: Data?? = try await connection.value(
                "SELECT recovery_key FROM sync_circles WHERE account_id = \(account.rawValue)", logger, as: Data?.self)
            return stored ?? nil
        }
    }

    /// Stores circle keys wrapped for the recovery identity (one per epoch; a second replaces the first).
    func putRecoveryEnvelopes(_ envelopes: [SyncRecoveryEnvelope], account: AccountID) async throws {
        let logger = self.logger, now = clock().timeIntervalSince1970
        try await db.transaction { connection in
            for envelope in envelopes {
                try await connection.run(
                    """
                    INSERT INTO sync_recovery_envelopes (account_id, epoch, envelope, created)
                    VALUES (\(account.rawValue), \(Int64(envelope.epoch)), \(envelope.blob), \(now))
                    ON CONFLICT (account_id, epoch) DO UPDATE SET envelope = EXCLUDED.envelope, created = EXCLUDED.created
                    """, logger)
            }
        }
    }

    /// The circle keys wrapped for the recovery identity from epoch `from` on, oldest first.
    func recoveryEnvelopes(account: AccountID, from epoch: UInt64) async throws -> [SyncRecoveryEnvelope] {
        let logger = self.logger
        return try await db.read { connection in
            try await connection.rows(
                """
                SELECT epoch, envelope FROM sync_recovery_envelopes
                WHERE account_id = \(account.rawValue) AND epoch >= \(Int64(epoch)) ORDER BY epoch
                """, logger, as: (Int64, Data).self
            ).map { SyncRecoveryEnvelope(epoch: UInt64($0.0), blob: $0.1) }
        }
    }

    /// The key envelopes of `deviceID` from epoch `from` on, oldest first.
    func envelopes(account: AccountID, deviceID: String, from epoch: UInt64) async throws -> [SyncKeyEnvelope] {
        let logger = self.logger
        return try await db.read { connection in
            try await connection.rows(
                """
                SELECT epoch, envelope FROM sync_key_envelopes
                WHERE account_id = \(account.rawValue) AND device_id = \(deviceID) AND epoch >= \(Int64(epoch)) ORDER BY epoch
                """, logger, as: (Int64, Data).self
            ).map { SyncKeyEnvelope(deviceID: deviceID, epoch: UInt64($0.0), blob: $0.1) }
        }
    }
}
