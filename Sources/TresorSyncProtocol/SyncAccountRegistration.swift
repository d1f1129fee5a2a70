import Foundation

/// `POST /v1/sync/accounts`: registers the web account a device is about to join, with the
/// owner's invite where the server registers by invite (docs/SYNC.md, "Devices and sign-in").
public struct SyncAccountRegistration: Codable, Sendable {
    public var account: String
    public var password: String
    /// The owner's invite for `account` (`tresor web invite NAME`); needed unless the server's
    /// registration is open.
    public var invite: String?

    public init(account: String, password: String, invite: String?) {
        self.account = account
        self.password = password
        self.invite = invite
    }
}

/// The answer to a registration: the account's login name as the server folded it.
public struct SyncAccountRegistered: Codable, Equatable, Sendable {
    public var account: String

    public init(account: String) {
        self.account = account
    }
}
