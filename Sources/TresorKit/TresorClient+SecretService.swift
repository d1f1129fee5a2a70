import FoundationEssentials
import TresorModel
import TresorProtocol

extension TresorClient {
    /// Which executables own which Secret Service items, and the grants between them.
    /// - Returns: the owners and grants; only the `tresor` CLI may ask.
    /// - Throws: `APIError` from the daemon.
    public func secretServiceOwners() throws -> SecretServiceOwnersResponse {
        try call("GET", Route.secretServiceOwners)
    }

    /// Lets one executable use another's Secret Service items, or takes that back.
    /// - Parameters:
    ///   - executablePath: the executable allowed in.
    ///   - ownerPath: the executable whose items it may use, or nil with `group`.
    ///   - group: an access group named directly (an `exe-sha256:…` group, or a registered
    ///     application's), or nil.
    ///   - itemID: one item (its keychain id), or nil. Name exactly one of the three.
    ///   - revoke: take the grant back instead.
    ///   - passcode: the passcode, when one is set.
    /// - Returns: every grant after the change.
    /// - Throws: `APIError` from the daemon.
    @discardableResult
    public func grantSecretService(
        executablePath: String, ownerPath: String?, group: String?, itemID: String? = nil, revoke: Bool, passcode: String?
    ) throws -> [ExecutableGrant] {
        let response: SecretServiceOwnersResponse = try call(
            "POST", Route.secretServiceGrants,
            ExecutableGrantRequest(executablePath: executablePath, ownerPath: ownerPath, group: group, itemID: itemID, revoke: revoke, passcode: passcode))
        return response.grants
    }

    /// Copies items read from another Secret Service provider into the login keychain.
    /// - Parameters:
    ///   - items: at most `SecretServiceImportRequest/maximumItems`, within the request size limit.
    ///   - ownerPath: the executable whose own group receives them; nil for
    ///     `ExecutableGroup/imported`, which no executable sees until the user allows one.
    ///   - passcode: the passcode, when one is set.
    /// - Returns: the group, and what was copied and skipped.
    /// - Throws: `APIError` from the daemon.
    public func importSecretServiceItems(_ items: [SecretServiceExport.Item], ownerPath: String?, passcode: String?) throws -> SecretServiceImportResponse {
        try call("POST", Route.secretServiceImport, SecretServiceImportRequest(ownerPath: ownerPath, passcode: passcode, items: items))
    }
}
