import FoundationEssentials
import TresorModel

extension Route {
    /// `POST`: copy items read from another Secret Service provider into the login keychain
    /// (``SecretServiceImportRequest``). The `tresor` CLI only.
    public static let secretServiceImport = "/v1/secret-service/import"
}

/// `POST /v1/secret-service/import`: items another provider handed over, to be kept as Secret
/// Service items of one group — the executable at `ownerPath`'s own, or
/// ``ExecutableGroup/imported`` when it is nil. Needs the keybag unlocked and, when one is set,
/// the passcode: the items land where an executable reads them, and "already in Tresor" says
/// whether a secret is there.
public struct SecretServiceImportRequest: Codable, Sendable {
    public var ownerPath: String?
    public var passcode: String?
    public var items: [SecretServiceExport.Item]

    /// At most this many items per request (and at most ``APIVersion/maximumRequestBytes`` in all).
    public static let maximumItems = 500

    public init(ownerPath: String?, passcode: String?, items: [SecretServiceExport.Item]) {
        self.ownerPath = ownerPath
        self.passcode = passcode
        self.items = items
    }
}

/// What an import did with each item, in the request's order within each list.
public struct SecretServiceImportResponse: Codable, Sendable {
    /// The access group the items went to.
    public var group: String
    public var copied: [Copied]
    /// Items not copied: already in that group with this label, attributes and secret, or
    /// refused (a label or attribute map over the Secret Service's limits, a secret too large).
    public var skipped: [SecretServiceSkip]

    public init(group: String, copied: [Copied], skipped: [SecretServiceSkip]) {
        self.group = group
        self.copied = copied
        self.skipped = skipped
    }

    /// One copied item: how it was named, and its id in the login keychain.
    public struct Copied: Codable, Equatable, Sendable {
        public var what: String
        public var id: String

        public init(what: String, id: String) {
            self.what = what
            self.id = id
        }
    }
}
