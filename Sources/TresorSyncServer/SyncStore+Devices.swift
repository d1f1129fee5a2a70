import Foundation
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
    /// The name the device enrolled with: a conflict copy it causes says it came from there.
    var deviceName: String
    var state: SyncDeviceState
}

/// A challenge taken (deleted) to be answered.
struct TakenChallenge: Sendable {
    var challenge: SyncChallenge
    var loginName: String
    var deviceID: String
}

/// Circles, devices and their sign-in (docs/SYNC.md, "Transport").
extension SyncStore {
    /// Challenges waiting for an answer per account name: anyone may ask for one, so their
    /// number is bounded (they expire after ``SyncLimits/challengeSeconds``).
    static let openChallengesPerName: Int64 = 16

    // MARK: Circles and devices

    /// Adds a device to the circle of `account`, creating the circle for its first device
    /// (trusted); any other device is pending, with a join request.
    /// - Throws: ``SyncRefusal/conflict`` when the device id is taken in the account.
    func enroll(_ enrollment: SyncEnrollment, account: AccountID) async throws -> SyncEnrollmentResponse {
        let logger = self.logger, now = clock()
        return try await db.transaction { connection in
            let created =
                try await connection.count(
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
            guard added == 1 else { throw SyncRefusal(.conflict, "a device with this id is already in the account's circle") }
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

    /// The circle's devices, oldest first, each with the last device sequence among its records.
    func devices(account: AccountID) async throws -> [SyncDevice] {
        let logger = self.logger
        return try await db.read { connection in
            try await connection.rows(
                """
                SELECT d.id, d.name, d.state, d.credential_key, d.created, d.last_seen,
                    (SELECT COALESCE(MAX(r.device_sequence), 0)::bigint FROM sync_records r WHERE r.account_id = d.account_id AND r.device_id = d.id)
                FROM sync_devices d
                WHERE d.account_id = \(account.rawValue) ORDER BY d.created, d.id
                """, logger, as: (String, String, String, Data, Double, Double?, Int64).self
            ).map { id, name, state, key, created, seen, lastSequence in
                SyncDevice(
                    deviceID: id, name: name, state: SyncDeviceState(rawValue: state) ?? .removed, credentialPublicKey: key,
                    created: Date(timeIntervalSince1970: created), lastSeen: seen.map(Date.init(timeIntervalSince1970:)),
                    lastSequence: UInt64(lastSequence))
            }
        }
    }

    /// Removes a device: refused from its next request on; its pending join request is denied.
    /// - Throws: ``SyncRefusal/notFound`` for a device not in the circle.
    func removeDevice(_ id: String, account: AccountID) async throws {
        let logger = self.logger
        try await db.transaction { connection in
            let changed = try await connection.count(
                "UPDATE sync_devices SET state = 'removed' WHERE account_id = \(account.rawValue) AND id = \(id) RETURNING 1", logger)
            guard changed == 1 else { throw SyncRefusal(.notFound, "no such device in this circle") }
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
    /// - Throws: ``SyncRefusal`` `throttled` beyond that.
    func newChallenge(loginName: String, deviceID: String) async throws -> SyncChallenge {
        let logger = self.logger, now = clock()
        let challenge = SyncChallenge(
            challengeID: UUID().uuidString.lowercased(), nonce: SecureRandom.bytes(count: 32),
            expires: now.addingTimeInterval(SyncLimits.challengeSeconds))
        try await db.transaction { connection in
            try await connection.run("DELETE FROM sync_challenges WHERE expires < \(now.timeIntervalSince1970)", logger)
            let open =
                try await connection.value(
                    "SELECT count(*)::bigint FROM sync_challenges WHERE login_name = \(loginName)", logger, as: Int64.self) ?? 0
            guard open < Self.openChallengesPerName else {
                throw SyncRefusal(
                    .throttled, "too many sign-ins under way for this account: try again in a minute",
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
                SELECT s.account_id, s.device_id, d.name, d.state FROM sync_sessions s
                JOIN sync_devices d ON d.account_id = s.account_id AND d.id = s.device_id
                WHERE s.token_digest = \(SessionTokens.digest(token)) AND s.expires > \(now)
                """, logger, as: (String, String, String, String).self
            ).map {
                SyncCaller(account: AccountID(rawValue: $0.0), deviceID: $0.1, deviceName: $0.2, state: SyncDeviceState(rawValue: $0.3) ?? .removed)
            }
        }
    }
}
