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
    /// Every grant: which executable may use which other group or item.
    public var grants: [ExecutableGrant]

    /// Makes the answer; the parameters are the properties of the same names.
    public init(owners: [SecretServiceOwner], grants: [ExecutableGrant]) {
        self.owners = owners
        self.grants = grants
    }
}

/// The items of one executable's group.
public struct SecretServiceOwner: Codable, Sendable {
    /// The executable's access group (``ExecutableGroup``: `exe:/usr/bin/secret-tool`, `exe-sha256:…`).
    public var owner: String
    /// The generic passwords of the group, by id and label.
    public var items: [OwnedItem]

    /// Makes an owner; the parameters are the properties of the same names.
    public init(owner: String, items: [OwnedItem]) {
        self.owner = owner
        self.items = items
    }

    /// One item of an executable's group: what names it, never its secret.
    public struct OwnedItem: Codable, Sendable {
        /// The item's keychain id, as a grant's `itemID` takes it.
        public var id: String
        /// The item's label; empty when it has none.
        public var label: String
        /// Makes an owned item; the parameters are the properties of the same names.
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
    /// The executable let in (or no longer); its group is the daemon's reading of the file (a
    /// registered application's id, else `exe:PATH` or `exe-sha256:HASH`).
    public var executablePath: String
    /// The executable whose group it may use; exactly one of `ownerPath`, `group`, `itemID`.
    public var ownerPath: String?
    /// The group it may use, named directly; exactly one of `ownerPath`, `group`, `itemID`.
    public var group: String?
    /// The one generic password it may use (`404 itemNotFound` when there is none of that id);
    /// exactly one of `ownerPath`, `group`, `itemID`.
    public var itemID: String?
    /// `true` takes the grant back (`404 itemNotFound` when there is none); `false` makes it.
    public var revoke: Bool
    /// The keybag passcode again: required when one is set, counted when wrong.
    public var passcode: String?

    /// Makes a grant request; the parameters are the properties of the same names.
    public init(executablePath: String, ownerPath: String?, group: String?, itemID: String? = nil, revoke: Bool, passcode: String?) {
        self.executablePath = executablePath
        self.ownerPath = ownerPath
        self.group = group
        self.itemID = itemID
        self.revoke = revoke
        self.passcode = passcode
    }
}
