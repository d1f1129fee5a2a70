import FoundationEssentials

/// What `tresor-read-secret-service` writes on its standard output for `tresor import
/// secret-service`: every item another Secret Service provider (gnome-keyring, KeePassXC)
/// handed over, and what it could not read, each with the reason.
///
/// Secrets travel here as Base64 (``APICoding``'s data encoding): a transport encoding between
/// two of the user's processes over a pipe, not protection.
public struct SecretServiceExport: Codable, Sendable {
    /// The provider's executable, by file name (`gnome-keyring-daemon`, `keepassxc`).
    public var provider: String
    public var items: [Item]
    /// Collections and items that were not read.
    public var skipped: [SecretServiceSkip]

    public init(provider: String, items: [Item], skipped: [SecretServiceSkip]) {
        self.provider = provider
        self.items = items
        self.skipped = skipped
    }

    /// One Secret Service item as its provider answered it.
    public struct Item: Codable, Equatable, Sendable {
        /// The label of the collection it was in (not kept: Tresor has one collection).
        public var collection: String
        public var label: String
        /// The Secret Service attribute map, exactly as the provider gave it.
        public var attributes: [String: String]
        public var secret: Data
        /// The secret's content type (`text/plain`).
        public var contentType: String
        public var created: Date?
        public var modified: Date?

        public init(
            collection: String, label: String, attributes: [String: String], secret: Data, contentType: String,
            created: Date?, modified: Date?
        ) {
            self.collection = collection
            self.label = label
            self.attributes = attributes
            self.secret = secret
            self.contentType = contentType
            self.created = created
            self.modified = modified
        }

        /// How a report names the item: its label and its collection, never its secret.
        public var displayName: String { "“\(label)” (collection “\(collection)”)" }
    }
}

/// Something an import did not copy, and why (`locked: unlock it in its own tool first`,
/// `already in Tresor`). `what` names an item or a collection by its label.
public struct SecretServiceSkip: Codable, Equatable, Sendable {
    public var what: String
    public var why: String

    public init(what: String, why: String) {
        self.what = what
        self.why = why
    }
}
