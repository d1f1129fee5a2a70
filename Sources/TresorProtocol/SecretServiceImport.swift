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
    /// The executable whose Secret Service group receives the items (`400 param` when the file
    /// cannot be read); nil: ``ExecutableGroup/imported``.
    public var ownerPath: String?
    /// The keybag passcode again: required when one is set, counted when wrong.
    public var passcode: String?
    /// The items as the old provider answered them, at most ``maximumItems``.
    public var items: [SecretServiceExport.Item]

    /// At most this many items per request (and at most ``APIVersion/maximumRequestBytes`` in all).
    public static let maximumItems = 500

    /// Makes an import request; the parameters are the properties of the same names.
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
    /// The items copied.
    public var copied: [Copied]
    /// Items not copied: already in that group with this label, attributes and secret, or
    /// refused (a label or attribute map over the Secret Service's limits, a secret too large).
    public var skipped: [SecretServiceSkip]

    /// Makes an import answer; the parameters are the properties of the same names.
    public init(group: String, copied: [Copied], skipped: [SecretServiceSkip]) {
        self.group = group
        self.copied = copied
        self.skipped = skipped
    }

    /// One copied item: how it was named, and its id in the login keychain.
    public struct Copied: Codable, Equatable, Sendable {
        /// The item by its label and old collection; never a secret.
        public var what: String
        /// The new item's id in the login keychain.
        public var id: String

        /// Makes a copied item; the parameters are the properties of the same names.
        public init(what: String, id: String) {
            self.what = what
            self.id = id
        }
    }
}
