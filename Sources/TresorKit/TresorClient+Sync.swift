import FoundationEssentials
import TresorModel
import TresorProtocol

extension TresorClient {
    /// Joins a sync account on a Tresor server (docs/SYNC.md, "Devices"); the `tresor` CLI only.
    /// - Parameter request: the server, account, password and this device's name.
    /// - Returns: `trusted` with the recovery key for the account's first device (shown once),
    ///   `waiting` with the request id and fingerprint words for any other.
    /// - Throws: `APIError` from the daemon (the server's refusal, an unreachable server…).
    public func syncJoin(_ request: SyncJoinRequestBody) throws -> SyncJoinAnswer {
        try call("POST", Route.syncJoin, request)
    }

    /// A waiting device checks its join request once, and completes the join when approved.
    /// - Returns: where this device stands now.
    /// - Throws: `APIError` from the daemon.
    public func syncJoinCheck() throws -> SyncJoinAnswer {
        try call("POST", Route.syncJoinCheck, [String: String]())
    }

    /// Joins with the recovery key, when no trusted device is left.
    /// - Parameter request: the server, account, password and recovery key.
    /// - Returns: `trusted`.
    /// - Throws: `APIError` from the daemon.
    public func syncRecover(_ request: SyncRecoverRequestBody) throws -> SyncJoinAnswer {
        try call("POST", Route.syncRecover, request)
    }

    /// The join requests waiting for this (trusted) device's answer.
    /// - Returns: the requests, with their fingerprint words.
    /// - Throws: `APIError` from the daemon.
    public func syncRequests() throws -> [SyncPendingRequest] {
        let answer: SyncRequestsAnswer = try call("GET", Route.syncRequests)
        return answer.requests
    }

    /// Approves a join request.
    /// - Parameters:
    ///   - requestID: the request's id.
    ///   - passcode: the keybag's passcode, when one is set.
    /// - Throws: `APIError`: `param` for an empty id (nothing sent), else from the daemon (`authFailed` for a wrong passcode).
    public func syncApprove(_ requestID: String, passcode: String?) throws {
        try callExpectingNoContent(
            "POST", Route.syncRequest + "/" + (try Self.segment(requestID, "the join request's id")) + "/approve",
            SyncApproveRequestBody(passcode: passcode))
    }

    /// Denies a join request.
    /// - Parameter requestID: the request's id.
    /// - Throws: `APIError`: `param` for an empty id (nothing sent), else from the daemon.
    public func syncDeny(_ requestID: String) throws {
        try callExpectingNoContent("POST", Route.syncRequest + "/" + (try Self.segment(requestID, "the join request's id")) + "/deny")
    }

    /// The trusted devices of this device's verified list: refreshed from the server, or, while
    /// it cannot be reached, as this device holds it (`SyncDevicesAnswer.serverUnreachable`).
    /// - Returns: the devices, in the order they joined.
    /// - Throws: `APIError` from the daemon.
    public func syncDevices() throws -> SyncDevicesAnswer {
        try call("GET", Route.syncDevices)
    }

    /// Removes a device from the circle and rolls the circle key.
    /// - Parameters:
    ///   - device: the device's id or name.
    ///   - passcode: the keybag's passcode, when one is set.
    /// - Returns: the removed device.
    /// - Throws: `APIError`: `param` for an empty id (nothing sent), else from the daemon (`authFailed` without the passcode, or a wrong one).
    public func syncRemove(_ device: String, passcode: String? = nil) throws -> SyncDeviceInfo {
        try call("DELETE", Route.syncDevices + "/" + (try Self.segment(device, "the device's name or id")), SyncRemoveRequestBody(passcode: passcode))
    }

    /// This device leaves its sync account; its data stays.
    /// - Returns: whether the server heard of it.
    /// - Throws: `APIError` from the daemon.
    @discardableResult
    public func syncLeave() throws -> SyncLeaveAnswer {
        try call("POST", Route.syncLeave)
    }

    /// This device's sync account, as it knows it.
    /// - Returns: the status.
    /// - Throws: `APIError` from the daemon.
    public func syncStatus() throws -> SyncStatusAnswer {
        try call("GET", Route.syncStatus)
    }

    /// Syncs now: pushes this device's changes, pulls the others' until up to date.
    /// - Parameter allowDeletions: lets a held mass deletion through.
    /// - Returns: what the sync did.
    /// - Throws: `APIError` from the daemon (not joined, locked, the server unreachable…).
    public func syncNow(allowDeletions: Bool) throws -> SyncNowAnswer {
        try call("POST", Route.syncNow, SyncNowRequestBody(allowDeletions: allowDeletions))
    }

    /// The losing versions of concurrent edits kept on this device.
    /// - Returns: the conflicts, oldest first.
    /// - Throws: `APIError` from the daemon.
    public func syncConflicts() throws -> [SyncConflictInfo] {
        let answer: SyncConflictsAnswer = try call("GET", Route.syncConflicts)
        return answer.conflicts
    }

    /// The owners whose Secret Service items sync.
    /// - Returns: the groups, sorted.
    /// - Throws: `APIError` from the daemon.
    public func syncSecretServiceOwners() throws -> [String] {
        let answer: SyncOwnersAnswer = try call("GET", Route.syncSecretServiceOwners)
        return answer.owners
    }

    /// Includes an owner's Secret Service items in sync, or excludes them.
    /// - Parameters:
    ///   - owner: the group, as `tresor secret-service owners` names it.
    ///   - include: include (true) or exclude.
    /// - Returns: the owners included after the change.
    /// - Throws: `APIError` from the daemon (`interactionNotAllowed` while the keybag is locked).
    public func syncSecretServiceOwner(_ owner: String, include: Bool) throws -> [String] {
        let answer: SyncOwnersAnswer = try call("POST", Route.syncSecretServiceOwners, SyncOwnerRequestBody(owner: owner, include: include))
        return answer.owners
    }

    /// Makes a kept version the item again; the next sync sends it.
    /// - Parameters:
    ///   - id: the conflict's id.
    ///   - passcode: the passcode, where the kept version needs the user present.
    /// - Throws: `APIError`: `param` for an empty id (nothing sent), else from the daemon (`notFound` for an unknown id, `passcodeRequired`).
    public func syncRestoreConflict(_ id: String, passcode: String? = nil) throws {
        try callExpectingNoContent("POST", try Self.conflictPath(id, "restore"), SyncConflictRequestBody(passcode: passcode))
    }

    /// A kept version's secret.
    /// - Parameters:
    ///   - id: the conflict's id.
    ///   - passcode: the passcode, where the kept version needs the user present.
    /// - Returns: the secret.
    /// - Throws: `APIError`: `param` for an empty id (nothing sent), else from the daemon (`notFound` for an unknown id, `passcodeRequired`).
    public func syncConflictSecret(_ id: String, passcode: String? = nil) throws -> Data {
        let answer: SyncConflictSecretAnswer = try call("POST", try Self.conflictPath(id, "secret"), SyncConflictRequestBody(passcode: passcode))
        return answer.secret
    }

    /// Forgets a kept version; the item stays as it is.
    /// - Parameters:
    ///   - id: the conflict's id.
    ///   - passcode: the passcode, where discarding needs the user present.
    /// - Throws: `APIError`: `param` for an empty id (nothing sent), else from the daemon (`notFound` for an unknown id, `passcodeRequired`).
    public func syncDiscardConflict(_ id: String, passcode: String? = nil) throws {
        try callExpectingNoContent("POST", try Self.conflictPath(id, "discard"), SyncConflictRequestBody(passcode: passcode))
    }

    private static func conflictPath(_ id: String, _ action: String) throws -> String {
        Route.syncConflicts + "/" + (try segment(id, "the kept version's id")) + "/" + action
    }

    /// `value` as one segment of a route's path: percent-encoded, and never empty — an empty one
    /// would name another route, answered "no such route".
    /// - Throws: `APIError` `param` naming `what` for an empty value.
    private static func segment(_ value: String, _ what: String) throws -> String {
        guard !value.isEmpty else { throw APIError(.param, "\(what) is empty") }
        return PercentEncoding.encode(value)
    }
}
