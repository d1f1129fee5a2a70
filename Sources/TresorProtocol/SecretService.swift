import FoundationEssentials
import TresorModel

extension Route {
    /// `GET`: which executables own which Secret Service items, and the grants.
    public static let secretServiceOwners = "/v1/secret-service/owners"
    /// `POST`: allow or revoke a grant (``ExecutableGrantRequest``).
    public static let secretServiceGrants = "/v1/secret-service/grants"
}

/// `GET /v1/secret-service/owners`.
public struct SecretServiceOwnersResponse: Codable, Sendable {
    /// One entry per executable that owns items, sorted by its group.
    public var owners: [SecretServiceOwner]
    public var grants: [ExecutableGrant]

    public init(owners: [SecretServiceOwner], grants: [ExecutableGrant]) {
        self.owners = owners
        self.grants = grants
    }
}

/// The items of one executable's group.
public struct SecretServiceOwner: Codable, Sendable {
    /// The executable's access group (``ExecutableGroup``: `exe:/usr/bin/secret-tool`, `exe-sha256:…`).
    public var owner: String
    public var items: [OwnedItem]

    public init(owner: String, items: [OwnedItem]) {
        self.owner = owner
        self.items = items
    }

    public struct OwnedItem: Codable, Sendable {
        public var id: String
        public var label: String
        public init(id: String, label: String) {
            self.id = id
            self.label = label
        }
    }
}

/// `POST /v1/secret-service/grants`: let the executable at `executablePath` use another
/// executable's items (the group of the executable at `ownerPath`, or `group` as named) or one
/// item (`itemID`), or take that back. Needs the keybag unlocked and, when one is set, the passcode.
public struct ExecutableGrantRequest: Codable, Sendable {
    public var executablePath: String
    public var ownerPath: String?
    public var group: String?
    public var itemID: String?
    public var revoke: Bool
    public var passcode: String?

    public init(executablePath: String, ownerPath: String?, group: String?, itemID: String? = nil, revoke: Bool, passcode: String?) {
        self.executablePath = executablePath
        self.ownerPath = ownerPath
        self.group = group
        self.itemID = itemID
        self.revoke = revoke
        self.passcode = passcode
    }
}
