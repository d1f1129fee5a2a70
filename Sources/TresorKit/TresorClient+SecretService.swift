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
            ExecutableGrantRequest(
                executablePath: executablePath, ownerPath: ownerPath, group: group, itemID: itemID, revoke: revoke, passcode: passcode))
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
    public func importSecretServiceItems(_ items: [SecretServiceExport.Item], ownerPath: String?, passcode: String?) throws
        -> SecretServiceImportResponse
    {
        try call("POST", Route.secretServiceImport, SecretServiceImportRequest(ownerPath: ownerPath, passcode: passcode, items: items))
    }

    /// The generic Secret Service clients (interpreters, secret-tool, git's credential helpers)
    /// the user trusts now: granted ahead of time, or approved "for this session".
    /// - Returns: the trusted clients; only the `tresor` CLI may ask.
    /// - Throws: `APIError` from the daemon.
    public func secretServiceTrust() throws -> SecretServiceTrustList {
        try call("GET", Route.secretServiceTrust)
    }

    /// Trusts the generic clients at `executablePaths` ahead of time: any process running one reads
    /// its items without the user being asked.
    /// - Parameters:
    ///   - executablePaths: the generic clients (links are followed); all are trusted, or none.
    ///   - seconds: how long; nil, until the daemon stops.
    ///   - passcode: the passcode, when one is set.
    /// - Returns: the trusted clients after the change.
    /// - Throws: `APIError` from the daemon (`param` for a program that is not a generic client).
    @discardableResult
    public func trustSecretServiceClients(_ executablePaths: [String], seconds: Int?, passcode: String?) throws -> SecretServiceTrustList {
        try call("POST", Route.secretServiceTrust, SecretServiceTrustGrant(executablePaths: executablePaths, seconds: seconds, passcode: passcode))
    }

    /// Takes back the trust in the executable at `executablePath`, or in every one.
    /// - Parameter executablePath: the executable; nil, every one.
    /// - Returns: the trusted clients after the change.
    /// - Throws: `APIError` from the daemon (`notFound` when that executable was not trusted).
    @discardableResult
    public func removeSecretServiceTrust(executablePath: String?) throws -> SecretServiceTrustList {
        try call("POST", Route.secretServiceTrustRemove, SecretServiceTrustRemoval(executablePath: executablePath, all: executablePath == nil))
    }

    /// Has the daemon answer the Secret Service on the session bus at `address`: what a
    /// `tresord --secret-service` started in a desktop session does when a daemon already runs
    /// for its home.
    /// - Parameter address: the bus (`DBUS_SESSION_BUS_ADDRESS`).
    /// - Returns: what the daemon serves now, and whether this call started it.
    /// - Throws: `APIError` from the daemon (`conflict` when it answers on another bus;
    ///   `unavailable` when it cannot answer on this one, with the reason).
    public func answerSecretService(onBus address: String) throws -> SecretServiceBusAnswer {
        try call("POST", Route.secretServiceBus, SecretServiceBusRequest(address: address))
    }
}
