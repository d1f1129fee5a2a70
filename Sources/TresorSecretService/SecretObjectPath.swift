/// The object paths of the Secret Service, and which object each one names.
///
/// ```
/// /org/freedesktop/secrets                              the service
/// /org/freedesktop/secrets/collection/login             the login keychain (alias "default")
/// /org/freedesktop/secrets/collection/session           the in-memory collection
/// /org/freedesktop/secrets/aliases/default              the login keychain again
/// /org/freedesktop/secrets/collection/login/<item id>   one item (its keychain id)
/// /org/freedesktop/secrets/session/<n>                  one transfer session
/// /org/freedesktop/secrets/prompt/<n>                   one prompt
/// ```
enum SecretObjectPath: Equatable, Sendable {
    case service
    case collection(String)
    case item(collection: String, id: String)
    case session(String)
    case prompt(String)

    static let root = "/org/freedesktop/secrets"

    /// The aliases this service answers, and the collection each names.
    static let aliases = ["default": CollectionName.login, "login": CollectionName.login, "session": CollectionName.session]

    init?(_ path: String) {
        guard path == Self.root || path.hasPrefix(Self.root + "/") else { return nil }
        let parts = path.dropFirst(Self.root.count).split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch (parts.first, parts.count) {
        case (nil, _): self = .service
        case ("collection", 2): self = .collection(parts[1])
        case ("collection", 3): self = .item(collection: parts[1], id: parts[2])
        case ("aliases", 2), ("aliases", 3):
            guard let collection = Self.aliases[parts[1]] else { return nil }
            self = parts.count == 2 ? .collection(collection) : .item(collection: collection, id: parts[2])
        case ("session", 2): self = .session(parts[1])
        case ("prompt", 2): self = .prompt(parts[1])
        default: return nil
        }
    }

    var path: String {
        switch self {
        case .service: return Self.root
        case .collection(let name): return "\(Self.root)/collection/\(name)"
        case .item(let collection, let id): return "\(Self.root)/collection/\(collection)/\(id)"
        case .session(let id): return "\(Self.root)/session/\(id)"
        case .prompt(let id): return "\(Self.root)/prompt/\(id)"
        }
    }

    /// "/": the Secret Service's "no object" (no prompt needed, no collection).
    static let none = "/"
}

/// The collections this service has.
enum CollectionName {
    /// The login keychain: what the `default` alias names.
    static let login = "login"
    /// Items kept in memory only, gone when the daemon stops.
    static let session = "session"
}
