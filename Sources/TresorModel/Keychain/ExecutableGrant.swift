import FoundationEssentials

/// The user's permission for one executable to use another executable's items through the
/// Secret Service (`tresor secret-service allow`). Executables are named by their access group
/// (``ExecutableGroup``).
public struct ExecutableGrant: Codable, Equatable, Hashable, Sendable {
    /// The executable that is allowed in.
    public var grantee: String
    /// The access group it may now use (the items of another executable), or nil for one item.
    public var group: String?
    /// The one item (its keychain id) it may now use, or nil for a whole group.
    public var item: String?

    /// - Parameters:
    ///   - grantee: the group of the executable let in.
    ///   - group: the group it may use; or
    ///   - item: the one item it may use.
    public init(grantee: String, group: String? = nil, item: String? = nil) {
        self.grantee = grantee
        self.group = group
        self.item = item
    }
}

/// The access group of an executable that is not a registered application: the Secret
/// Service puts each such executable's items in a group of its own.
///
/// An executable the user cannot write — owned by root, in root-owned folders nobody else may
/// write, as a distribution installs `/usr/bin/secret-tool` — is named by its path, so a
/// package upgrade keeps its items. Any other executable is named by the SHA-256 of its file,
/// so a changed file is another executable.
public enum ExecutableGroup {
    public static let pathPrefix = "exe:"
    public static let hashPrefix = "exe-sha256:"

    /// The group of the executable at `path` (identified by path).
    public static func byPath(_ path: String) -> String { pathPrefix + path }

    /// The group of an executable identified by its hash.
    public static func byHash(_ sha256: [UInt8]) -> String {
        hashPrefix + sha256.hexString
    }

    /// Where `tresor import secret-service` puts another provider's items when no executable
    /// is named to own them: no executable's own group, so no program sees them until the user
    /// allows one (`tresor secret-service allow --exe PATH --group secret-service:imported`).
    public static let imported = "secret-service:imported"

    /// Whether `group` is an executable's own group (not a registered application's).
    public static func isExecutableGroup(_ group: String) -> Bool {
        group.hasPrefix(pathPrefix) || group.hasPrefix(hashPrefix)
    }

    /// Whether `group` holds Secret Service items of executables: an executable's own group,
    /// or the group imported items wait in.
    public static func isSecretServiceGroup(_ group: String) -> Bool {
        isExecutableGroup(group) || group == imported
    }
}
