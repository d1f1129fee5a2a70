import FoundationEssentials
import TresorKeychain

/// The login keychain as a Secret Service collection: each item a generic password kept as
/// ``SecretServiceItems`` says (the attribute map in `custom`, the content type in `generic`).
struct KeychainCollection: SecretCollection {
    let name = CollectionName.login
    let keychain: @Sendable () throws -> KeychainStore

    /// When the login keychain was made (0, "unknown", where its file system keeps no birth time).
    var created: Date { (try? keychain())?.created ?? Date(timeIntervalSince1970: 0) }

    var isLocked: Bool {
        guard let keychain = try? keychain() else { return true }
        return !keychain.keybag.status.availableClasses.contains(.whenUnlocked)
    }

    func search(_ attributes: [String: String], client: SecretServiceClient) throws -> (unlocked: [SecretItem], locked: [String]) {
        var query = ItemQuery(.genericPassword, limit: .all)
        if !attributes.isEmpty { query.attributes.custom = attributes }
        let keychain = try keychain()
        var unlocked: [SecretItem] = [], locked: [String] = []
        do {
            unlocked = try Self.oldestFirst(keychain.copyMatching(query, caller: client.caller)).map { Self.item($0, client) }
        } catch KeychainError.itemNotFound {
        } catch KeychainError.interactionNotAllowed {
            locked = try keychain.lockedMatches(custom: attributes, caller: client.caller)
        }
        // Items granted one by one are few: each is read by its id and matched here.
        for id in client.grantedItems where !unlocked.contains(where: { $0.id == id }) {
            do {
                let item = Self.item(try one(id, client: client, data: false), client)
                if attributes.allSatisfy({ item.attributes[$0.key] == $0.value }) { unlocked.append(item) }
            } catch KeychainError.interactionNotAllowed {
                locked.append(id)
            } catch KeychainError.itemNotFound {}
        }
        // A secret that needs the user present is locked for this client until they approve.
        let (waiting, open) = unlocked.partitioned(by: \.needsPresence)
        return (open, locked + waiting.map(\.id))
    }

    func item(_ id: String, client: SecretServiceClient) throws -> SecretItem {
        Self.item(try one(id, client: client, data: false), client)
    }

    func secret(_ id: String, client: SecretServiceClient) throws -> SecretValue {
        guard !client.mustAsk(for: id) else { throw client.lockedForAGenericClient }
        let found = try one(id, client: client, data: true)
        return SecretValue(bytes: Array(found.secret ?? Data()), contentType: SecretServiceItems.contentType(of: found.attributes))
    }

    func create(label: String, attributes: [String: String], secret: SecretValue, client: SecretServiceClient) throws -> String {
        try SecretServiceItems.add(
            label: label, attributes: attributes, secret: Data(secret.bytes), contentType: secret.contentType, to: keychain(), caller: client.caller
        ).id
    }

    func existing(matching attributes: [String: String], client: SecretServiceClient) throws -> String? {
        let own = Caller(accessGroups: [client.caller.defaultAccessGroup], defaultAccessGroup: client.caller.defaultAccessGroup)
        var query = ItemQuery(.genericPassword, limit: .all)
        query.attributes.custom = attributes.isEmpty ? nil : attributes
        do {
            return try Self.oldestFirst(keychain().copyMatching(query, caller: own)).first { $0.attributes?.custom ?? [:] == attributes }?.id
        } catch KeychainError.itemNotFound {
            return nil
        }
    }

    func update(_ id: String, label: String?, attributes: [String: String]?, client: SecretServiceClient) throws {
        try SecretLimits.check(label: label, attributes: attributes)
        var changes = ItemAttributes()
        changes.label = label
        changes.custom = attributes
        try keychain().update(ItemQuery(.genericPassword, id: id), changes: changes, secret: nil, caller: try caller(for: id, client))
    }

    func setSecret(_ id: String, _ secret: SecretValue, client: SecretServiceClient) throws {
        var changes = ItemAttributes()
        changes.generic = Data(secret.contentType.utf8)
        try keychain().update(ItemQuery(.genericPassword, id: id), changes: changes, secret: Data(secret.bytes), caller: try caller(for: id, client))
    }

    func delete(_ id: String, client: SecretServiceClient) throws {
        guard try keychain().delete(ItemQuery(.genericPassword, id: id), caller: try caller(for: id, client)) > 0 else {
            throw KeychainError.itemNotFound
        }
    }

    private func one(_ id: String, client: SecretServiceClient, data: Bool) throws -> KeychainItem {
        guard Int64(id) != nil else { throw KeychainError.itemNotFound }
        let query = ItemQuery(.genericPassword, id: id, limit: .one, returnData: data, returnAttributes: true)
        guard let found = try keychain().copyMatching(query, caller: try caller(for: id, client)).first else { throw KeychainError.itemNotFound }
        return found
    }

    /// Who reads item `id` for `client`: the client itself, or — for an item the user granted it
    /// alone — a caller of that item's group and nothing else (its group is read from the item
    /// by id, attributes only, which reveals nothing the grant does not).
    private func caller(for id: String, _ client: SecretServiceClient) throws -> Caller {
        var caller = try group(for: id, client)
        // The user said yes to this item in an `Unlock` prompt (a `userPresence` item).
        caller.presenceConfirmed = client.approvedItems.contains(id)
        return caller
    }

    private func group(for id: String, _ client: SecretServiceClient) throws -> Caller {
        guard client.grantedItems.contains(id) else { return client.caller }
        let lookup = Caller(accessGroups: [], defaultAccessGroup: "", seesEveryGroup: true)
        let query = ItemQuery(.genericPassword, id: id, limit: .one, returnData: false, returnAttributes: true)
        guard let group = try keychain().copyMatching(query, caller: lookup).first?.attributes?.accessGroup else {
            throw KeychainError.itemNotFound
        }
        return Caller(accessGroups: [group], defaultAccessGroup: client.caller.defaultAccessGroup)
    }

    /// `found` in the order the items were made (their ids are random): a client's lookup reads
    /// the first item its search lists, so an item added later beside one with the same attributes
    /// never takes its place — whatever order an index gave them in.
    private static func oldestFirst(_ found: [KeychainItem]) -> [KeychainItem] {
        found.sorted {
            let (first, second) = ($0.attributes?.creationDate ?? .distantFuture, $1.attributes?.creationDate ?? .distantFuture)
            return first != second ? first < second : $0.id < $1.id
        }
    }

    private static func item(_ found: KeychainItem, _ client: SecretServiceClient) -> SecretItem {
        let attributes = found.attributes ?? ItemAttributes()
        return SecretItem(
            id: found.id, label: attributes.label ?? "", attributes: attributes.custom ?? [:],
            created: attributes.creationDate ?? Date(timeIntervalSince1970: 0),
            modified: attributes.modificationDate ?? attributes.creationDate ?? Date(timeIntervalSince1970: 0),
            needsPresence: (attributes.accessControl == .userPresence && !client.approvedItems.contains(found.id)) || client.mustAsk(for: found.id))
    }
}
