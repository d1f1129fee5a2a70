import FoundationEssentials

/// One keychain attribute, declared once: its JSON name, the value it holds, the item classes
/// that have it, its `kSec…` key and its `tresor` option. ``all`` lists every attribute; the
/// keychain's schema, the hand-written decoders, the lookup route's query string, the SecItem
/// dictionaries and the command line read it (docs/ARCHITECTURE.md, "Adding a keychain attribute").
/// A class, so that the readers on a lookup's path take one from the table by a reference count
/// rather than by copying its fields.
public final class ItemAttribute: Sendable {
    /// The attribute's name in JSON and in ``ItemAttributes`` (`kSecAttrService` is `service`).
    public let name: String
    /// What the attribute holds, and how to read and set it in ``ItemAttributes``.
    public let value: Value
    /// The item classes that have the attribute; any other class refuses it.
    public let classes: ItemClasses
    /// Apple's `kSecAttr…` key (the string ``kSecAttrService`` stands for), nil for Tresor's own.
    public let secItemKey: String?
    /// The `tresor item` option that sets or matches it, without its dashes; nil for none.
    public let option: String?
    public let rules: Rules

    /// What an attribute holds. Each case carries its ``ItemAttributes`` property as a getter
    /// and a setter: closures rather than key paths, which cost most of a query string's
    /// spelling and a tenth of a stored item's reading.
    public enum Value: Sendable {
        /// Text. A lookup's query string takes it (``ItemSecretQuery``).
        case text(@Sendable (ItemAttributes) -> String?, @Sendable (inout ItemAttributes, String?) -> Void)
        /// An integer. A lookup's query string takes it.
        case integer(@Sendable (ItemAttributes) -> Int?, @Sendable (inout ItemAttributes, Int?) -> Void)
        /// A `FourCharCode`: an unsigned 32-bit integer.
        case fourCharCode(@Sendable (ItemAttributes) -> UInt32?, @Sendable (inout ItemAttributes, UInt32?) -> Void)
        case boolean(@Sendable (ItemAttributes) -> Bool?, @Sendable (inout ItemAttributes, Bool?) -> Void)
        /// Bytes, Base64 in JSON.
        case bytes(@Sendable (ItemAttributes) -> Data?, @Sendable (inout ItemAttributes, Data?) -> Void)
        /// A time, seconds since 1970 in JSON.
        case date(@Sendable (ItemAttributes) -> Date?, @Sendable (inout ItemAttributes, Date?) -> Void)
        case protectionClass(@Sendable (ItemAttributes) -> ProtectionClass?, @Sendable (inout ItemAttributes, ProtectionClass?) -> Void)
        case accessControl(@Sendable (ItemAttributes) -> AccessControl?, @Sendable (inout ItemAttributes, AccessControl?) -> Void)
        case keyClass(
            @Sendable (ItemAttributes) -> ItemAttributes.KeyClass?, @Sendable (inout ItemAttributes, ItemAttributes.KeyClass?) -> Void)
        /// Free-form string pairs, each matched exactly.
        case stringMap(@Sendable (ItemAttributes) -> [String: String]?, @Sendable (inout ItemAttributes, [String: String]?) -> Void)
    }

    /// What the keychain does with an attribute beyond storing and matching it.
    public struct Rules: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Set by the keychain, never by a caller (only a query may name it).
        public static let setByKeychain = Rules(rawValue: 1 << 0)
        /// Filled from a certificate's DER when it is added; a caller may not contradict it.
        public static let fromCertificate = Rules(rawValue: 1 << 1)
        /// Text refused beyond ``ItemAttribute/maximumTextBytes``.
        public static let limitedLength = Rules(rawValue: 1 << 2)
        /// Found through a blind index of its own (docs/SECURITY.md §4.22): a search
        /// by it opens its matches, not every row. Not for the attributes indexed otherwise
        /// (the group, the primary key, the free-form map), stored in the clear (the protection
        /// class), or of a few values a tag would only partition (booleans, access control), nor
        /// for the dates the keychain sets.
        public static let searchable = Rules(rawValue: 1 << 3)
    }

    /// The longest value, in UTF-8 bytes, of a ``Rules/limitedLength`` attribute.
    public static let maximumTextBytes = 4096

    init(_ name: String, _ value: Value, _ classes: ItemClasses, secItemKey: String? = nil, option: String? = nil, rules: Rules = []) {
        self.name = name
        self.value = value
        self.classes = classes
        self.secItemKey = secItemKey
        self.option = option
        self.rules = rules
    }

    private static let every: ItemClasses = [.genericPassword, .internetPassword, .certificate, .key]
    private static let passwords: ItemClasses = [.genericPassword, .internetPassword]

    /// Every attribute, in ``ItemAttributes``' order. Adding one: its property in
    /// ``ItemAttributes`` and its line here.
    public static let all: [ItemAttribute] = [
        // Every class
        ItemAttribute(
            "accessGroup", .text({ $0.accessGroup }, { $0.accessGroup = $1 }), every, secItemKey: "agrp", option: "group", rules: .limitedLength),
        ItemAttribute("accessible", .protectionClass({ $0.accessible }, { $0.accessible = $1 }), every, secItemKey: "pdmn", option: "accessible"),
        ItemAttribute("accessControl", .accessControl({ $0.accessControl }, { $0.accessControl = $1 }), every, secItemKey: "accc"),
        ItemAttribute(
            "synchronizable", .boolean({ $0.synchronizable }, { $0.synchronizable = $1 }), every, secItemKey: "sync", option: "synchronizable"),
        ItemAttribute(
            "label", .text({ $0.label }, { $0.label = $1 }), every, secItemKey: "labl", option: "label", rules: [.limitedLength, .searchable]),
        ItemAttribute(
            "description", .text({ $0.description }, { $0.description = $1 }), every,
            secItemKey: "desc", option: "description", rules: [.limitedLength, .searchable]),
        ItemAttribute(
            "comment", .text({ $0.comment }, { $0.comment = $1 }), every, secItemKey: "icmt", option: "comment", rules: [.limitedLength, .searchable]),
        ItemAttribute("creator", .fourCharCode({ $0.creator }, { $0.creator = $1 }), every, secItemKey: "crtr", rules: .searchable),
        ItemAttribute("type", .fourCharCode({ $0.type }, { $0.type = $1 }), every, secItemKey: "type", rules: .searchable),
        ItemAttribute("creationDate", .date({ $0.creationDate }, { $0.creationDate = $1 }), every, secItemKey: "cdat", rules: .setByKeychain),
        ItemAttribute(
            "modificationDate", .date({ $0.modificationDate }, { $0.modificationDate = $1 }), every, secItemKey: "mdat", rules: .setByKeychain),
        ItemAttribute("custom", .stringMap({ $0.custom }, { $0.custom = $1 }), every, option: "attribute"),
        ItemAttribute("readableByScripts", .boolean({ $0.readableByScripts }, { $0.readableByScripts = $1 }), every),
        // Passwords
        ItemAttribute(
            "account", .text({ $0.account }, { $0.account = $1 }), passwords, secItemKey: "acct", option: "account",
            rules: [.limitedLength, .searchable]),
        ItemAttribute(
            "service", .text({ $0.service }, { $0.service = $1 }), [.genericPassword], secItemKey: "svce", option: "service",
            rules: [.limitedLength, .searchable]),
        ItemAttribute("generic", .bytes({ $0.generic }, { $0.generic = $1 }), [.genericPassword], secItemKey: "gena", rules: .searchable),
        ItemAttribute(
            "server", .text({ $0.server }, { $0.server = $1 }), [.internetPassword], secItemKey: "srvr", option: "server",
            rules: [.limitedLength, .searchable]),
        ItemAttribute(
            "protocol", .text({ $0.protocol }, { $0.protocol = $1 }), [.internetPassword], secItemKey: "ptcl", option: "protocol", rules: .searchable),
        ItemAttribute("port", .integer({ $0.port }, { $0.port = $1 }), [.internetPassword], secItemKey: "port", option: "port", rules: .searchable),
        ItemAttribute(
            "path", .text({ $0.path }, { $0.path = $1 }), [.internetPassword], secItemKey: "path", option: "path",
            rules: [.limitedLength, .searchable]),
        ItemAttribute(
            "authenticationType", .text({ $0.authenticationType }, { $0.authenticationType = $1 }), [.internetPassword], secItemKey: "atyp",
            option: "authentication-type", rules: .searchable),
        ItemAttribute(
            "securityDomain", .text({ $0.securityDomain }, { $0.securityDomain = $1 }), [.internetPassword], secItemKey: "sdmn",
            option: "security-domain", rules: .searchable),
        // Certificates
        ItemAttribute(
            "certificateType", .integer({ $0.certificateType }, { $0.certificateType = $1 }), [.certificate], secItemKey: "ctyp", rules: .searchable),
        ItemAttribute(
            "certificateEncoding", .integer({ $0.certificateEncoding }, { $0.certificateEncoding = $1 }), [.certificate], secItemKey: "cenc",
            rules: .searchable),
        ItemAttribute(
            "subject", .bytes({ $0.subject }, { $0.subject = $1 }), [.certificate], secItemKey: "subj", rules: [.fromCertificate, .searchable]),
        ItemAttribute(
            "issuer", .bytes({ $0.issuer }, { $0.issuer = $1 }), [.certificate], secItemKey: "issr", rules: [.fromCertificate, .searchable]),
        ItemAttribute(
            "serialNumber", .bytes({ $0.serialNumber }, { $0.serialNumber = $1 }), [.certificate], secItemKey: "slnr",
            rules: [.fromCertificate, .searchable]),
        ItemAttribute(
            "subjectKeyID", .bytes({ $0.subjectKeyID }, { $0.subjectKeyID = $1 }), [.certificate], secItemKey: "skid",
            rules: [.fromCertificate, .searchable]),
        ItemAttribute(
            "publicKeyHash", .bytes({ $0.publicKeyHash }, { $0.publicKeyHash = $1 }), [.certificate], secItemKey: "pkhh",
            rules: [.fromCertificate, .searchable]),
        ItemAttribute(
            "subjectSummary", .text({ $0.subjectSummary }, { $0.subjectSummary = $1 }), [.certificate], rules: [.fromCertificate, .searchable]),
        // Keys
        ItemAttribute(
            "keyClass", .keyClass({ $0.keyClass }, { $0.keyClass = $1 }), [.key], secItemKey: "kcls", option: "key-class", rules: .searchable),
        ItemAttribute(
            "applicationLabel", .bytes({ $0.applicationLabel }, { $0.applicationLabel = $1 }), [.key], secItemKey: "klbl", rules: .searchable),
        ItemAttribute(
            "applicationTag", .bytes({ $0.applicationTag }, { $0.applicationTag = $1 }), [.key], secItemKey: "atag", option: "application-tag",
            rules: .searchable),
        // `kSecAttrKeyType` is `kSecAttrType`'s string: for keys, `type` names the algorithm.
        ItemAttribute("keyType", .text({ $0.keyType }, { $0.keyType = $1 }), [.key], secItemKey: "type", option: "key-type", rules: .searchable),
        ItemAttribute(
            "keySizeInBits", .integer({ $0.keySizeInBits }, { $0.keySizeInBits = $1 }), [.key], secItemKey: "bsiz", option: "key-size",
            rules: .searchable),
        ItemAttribute(
            "effectiveKeySize", .integer({ $0.effectiveKeySize }, { $0.effectiveKeySize = $1 }), [.key], secItemKey: "esiz", rules: .searchable),
    ]

    /// The attributes with ``Rules/searchable``, in ``all``'s order.
    public static let searchable: [ItemAttribute] = all.filter { $0.rules.contains(.searchable) }

    /// ``all`` by name.
    public static let named: [String: ItemAttribute] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// Apple's primary key of each class, in the order its tuple is serialised (the keychain's
    /// blind indexes are computed over it: the order is part of the stored format). Two items
    /// of a class may not agree on all of these.
    public static let primaryKey: [ItemClass: [String]] = [
        .genericPassword: ["accessGroup", "service", "account", "synchronizable"],
        .internetPassword: [
            "accessGroup", "server", "protocol", "port", "path", "account", "authenticationType",
            "securityDomain", "synchronizable",
        ],
        .certificate: ["accessGroup", "certificateType", "issuer", "serialNumber", "synchronizable"],
        .key: [
            "accessGroup", "keyClass", "applicationLabel", "applicationTag", "keyType", "keySizeInBits",
            "effectiveKeySize", "synchronizable",
        ],
    ]
}

/// Some of the four item classes, as bits: building the attribute table in a `tresor item get`
/// process makes no `Set`, whose first use in a process builds its type's metadata
/// (BENCHMARKS.md, "One `tresor item get` process").
public struct ItemClasses: OptionSet, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public init(_ itemClass: ItemClass) {
        switch itemClass {
        case .genericPassword: rawValue = 1 << 0
        case .internetPassword: rawValue = 1 << 1
        case .certificate: rawValue = 1 << 2
        case .key: rawValue = 1 << 3
        }
    }

    public static let genericPassword = ItemClasses(.genericPassword)
    public static let internetPassword = ItemClasses(.internetPassword)
    public static let certificate = ItemClasses(.certificate)
    public static let key = ItemClasses(.key)

    /// Whether `itemClass` is one of these.
    public func contains(_ itemClass: ItemClass) -> Bool {
        contains(ItemClasses(itemClass))
    }

    /// How many classes these are.
    public var count: Int { rawValue.nonzeroBitCount }
}
