import FoundationEssentials

// Which Secret Service clients' items sync (docs/SYNC.md, "What syncs"): none until the user
// includes an owner, as `tresor secret-service owners` names it.

extension Route {
    /// `GET` → ``SyncOwnersAnswer``; `POST` ``SyncOwnerRequestBody`` → ``SyncOwnersAnswer``.
    public static let syncSecretServiceOwners = "/v1/sync-account/secret-service-owners"
}

/// `POST /v1/sync-account/secret-service-owners`: include an owner's Secret Service items in
/// sync, or exclude them.
public struct SyncOwnerRequestBody: Codable, Sendable {
    /// The group, as `tresor secret-service owners` names it (`exe:/usr/bin/secret-tool`, …).
    public var owner: String
    /// `true` includes the owner's items in sync (each gets a pending change); `false` excludes
    /// them (each one sent goes out as a tombstone).
    public var include: Bool

    /// Makes the request; the parameters are the properties of the same names.
    public init(owner: String, include: Bool) {
        self.owner = owner
        self.include = include
    }
}

/// The owners whose Secret Service items sync.
public struct SyncOwnersAnswer: Codable, Sendable, Equatable {
    /// The groups whose Secret Service items sync, as `tresor secret-service owners` names them.
    public var owners: [String]

    /// Makes the answer; the parameter is the property of the same name.
    public init(owners: [String]) {
        self.owners = owners
    }
}
