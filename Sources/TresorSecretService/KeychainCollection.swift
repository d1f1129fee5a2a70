import FoundationEssentials
import TresorKeychain

/// The login keychain as a Secret Service collection: each item a generic password kept as
/// ``SecretServiceItems`` says (the attribute map in `custom`, the content type in `generic`).
struct KeychainCollection: SecretCollection {
    let name = CollectionName.login
    let label = "Login"
    let keychain: @Sendable () throws -> Keychain

    var created: Date { Date(timeIntervalSince1970: 0) }

    var isLocked: Bool {
        guard let keychain = try? keychain() else { return true }
        return !keychain.keybag.status.availableClasses.contains(.whenUnlocked)
    }

    func search(_ attributes: [String: String], caller: Caller) throws -> (unlocked: [SecretItem], locked: [String]) {
        var query = ItemQuery(.genericPassword, limit: .all)
        if !attributes.isEmpty { query.attributes.custom = attributes }
        do {
            return (try keychain().copyMatching(query, caller: caller).map(Self.item), [])
        } catch KeychainError.itemNotFound {
            return ([], [])
        } catch KeychainError.interactionNotAllowed {
            return ([], try keychain().lockedMatches(custom: attributes, caller: caller))
        }
    }

    func item(_ id: String, caller: Caller) throws -> SecretItem {
        Self.item(try one(id, caller: caller, data: false))
    }

    func secret(_ id: String, caller: Caller) throws -> SecretValue {
        let found = try one(id, caller: caller, data: true)
        return SecretValue(bytes: Array(found.secret ?? Data()), contentType: SecretServiceItems.contentType(of: found.attributes))
    }

    func create(label: String, attributes: [String: String], secret: SecretValue, replace: Bool, caller: Caller) throws -> (id: String, isNew: Bool) {
        try SecretLimits.check(label: label, attributes: attributes)
        if replace, let existing = try search(attributes, caller: caller).unlocked.first(where: {
            $0.attributes == attributes && (try? group(of: $0.id, caller: caller)) == caller.defaultAccessGroup
        }) {
            try update(existing.id, label: label, attributes: nil, caller: caller)
            try setSecret(existing.id, secret, caller: caller)
            return (existing.id, false)
        }
        let item = try SecretServiceItems.add(
            label: label, attributes: attributes, secret: Data(secret.bytes), contentType: secret.contentType, to: keychain(), caller: caller)
        return (item.id, true)
    }

    func update(_ id: String, label: String?, attributes: [String: String]?, caller: Caller) throws {
        try SecretLimits.check(label: label, attributes: attributes)
        var changes = ItemAttributes()
        changes.label = label
        changes.custom = attributes
        try keychain().update(ItemQuery(.genericPassword, id: id), changes: changes, secret: nil, caller: caller)
    }

    func setSecret(_ id: String, _ secret: SecretValue, caller: Caller) throws {
        var changes = ItemAttributes()
        changes.generic = Data(secret.contentType.utf8)
        try keychain().update(ItemQuery(.genericPassword, id: id), changes: changes, secret: Data(secret.bytes), caller: caller)
    }

    func delete(_ id: String, caller: Caller) throws {
        guard try keychain().delete(ItemQuery(.genericPassword, id: id), caller: caller) > 0 else { throw KeychainError.itemNotFound }
    }

    private func one(_ id: String, caller: Caller, data: Bool) throws -> KeychainItem {
        guard Int64(id) != nil else { throw KeychainError.itemNotFound }
        let query = ItemQuery(.genericPassword, id: id, limit: .one, returnData: data, returnAttributes: true)
        guard let found = try keychain().copyMatching(query, caller: caller).first else { throw KeychainError.itemNotFound }
        return found
    }

    private func group(of id: String, caller: Caller) throws -> String? {
        try one(id, caller: caller, data: false).attributes?.accessGroup
    }

    private static func item(_ found: KeychainItem) -> SecretItem {
        let attributes = found.attributes ?? ItemAttributes()
        return SecretItem(
            id: found.id, label: attributes.label ?? "", attributes: attributes.custom ?? [:],
            created: attributes.creationDate ?? Date(timeIntervalSince1970: 0),
            modified: attributes.modificationDate ?? attributes.creationDate ?? Date(timeIntervalSince1970: 0))
    }
}
