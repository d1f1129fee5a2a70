import Foundation
import Logging
import PostgresNIO
import TresorSyncProtocol
import TresorWebStore
import TresorWebStorePostgres

/// Join requests, the signed device list and the wrapped circle keys (docs/SYNC.md, "Transport").
extension SyncStore {
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
    /// - Throws: ``SyncRefusal`` `notFound`, `expired`, `conflict`, `staleDeviceList`.
    func answerJoinRequest(_ id: String, account: AccountID, _ answer: JoinAnswer) async throws {
        let logger = self.logger, now = clock().timeIntervalSince1970
        try await db.transaction { connection in
            guard
                let (device, expires, state) = try await connection.row(
                    "SELECT device_id, expires, state FROM sync_join_requests WHERE id = \(id) AND account_id = \(account.rawValue) FOR UPDATE",
                    logger, as: (String, Double, String).self)
            else { throw SyncRefusal(.notFound, "no such join request in this circle") }
            guard state == "pending" else { throw SyncRefusal(.conflict, "this join request was already \(state)") }
            guard expires > now else { throw SyncRefusal(.expired, "this join request expired: the device asks again") }
            switch answer {
            case .deny: break
            case .recover(let list): try await Self.swapDeviceList(list, account: account, connection, logger)
            case .approve(let approval):
                guard approval.envelope.deviceID == device else {
                    throw SyncRefusal(.invalid, "the key envelope is not for the joining device")
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
    /// - Throws: ``SyncRefusal/staleDeviceList`` (nothing stored).
    func putDeviceList(_ update: SyncDeviceListUpdate, account: AccountID) async throws {
        let logger = self.logger
        try await db.transaction { connection in try await Self.swapDeviceList(update, account: account, connection, logger) }
    }

    private static func swapDeviceList(
        _ update: SyncDeviceListUpdate, account: AccountID, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        guard update.version > update.expectedVersion else {
            throw SyncRefusal(.invalid, "the new device list's version must be greater than the expected one")
        }
        // The first list may name the recovery key anew (a first join retried); later ones never.
        let recoveryKey = update.expectedVersion == 0 ? update.recoveryPublicKey : nil
        let swapped = try await connection.count(
            """
            UPDATE sync_circles SET device_list_version = \(Int64(update.version)), device_list = \(update.blob),
                recovery_key = COALESCE(\(recoveryKey), recovery_key)
            WHERE account_id = \(account.rawValue) AND device_list_version = \(Int64(update.expectedVersion)) RETURNING 1
            """, logger)
        guard swapped == 1 else {
            let current =
                try await connection.value(
                    "SELECT device_list_version FROM sync_circles WHERE account_id = \(account.rawValue)", logger, as: Int64.self) ?? 0
            throw SyncRefusal(.staleDeviceList, "the device list is at version \(current), not \(update.expectedVersion): read it again")
        }
    }

    /// Stores key envelopes for devices of the circle (one per device and epoch; a second
    /// for the same pair replaces the first).
    /// - Throws: ``SyncRefusal/invalid`` for a device not in the circle, or a removed one.
    func putEnvelopes(_ envelopes: [SyncKeyEnvelope], account: AccountID) async throws {
        let logger = self.logger, now = clock().timeIntervalSince1970
        try await db.transaction { connection in
            for (index, envelope) in envelopes.enumerated() {
                let state = try await connection.value(
                    "SELECT state FROM sync_devices WHERE account_id = \(account.rawValue) AND id = \(envelope.deviceID)", logger, as: String.self)
                guard let state, state != SyncDeviceState.removed.rawValue else {
                    throw SyncRefusal(.invalid, "envelope \(index): no such device in this circle, or it was removed")
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
