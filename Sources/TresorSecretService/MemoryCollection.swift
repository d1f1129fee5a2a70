import FoundationEssentials
import Synchronization
import TresorDBus
import TresorKeychain

/// The `session` collection: items kept in the daemon's memory only, gone when it stops.
/// Access groups apply as in the keychain: each item belongs to its creator's group.
final class MemoryCollection: SecretCollection {
    let name = CollectionName.session
    let created = Date()
    let isLocked = false

    private struct Stored {
        var item: SecretItem
        var group: String
        var secret: SecretValue
    }

    private let items = Mutex<[String: Stored]>([:])
    /// The most items the collection holds, so a client cannot fill the daemon's memory.
    static let capacity = 10_000
    /// The most bytes of labels, attributes and secrets it holds, for the same reason: at the
    /// largest secret each, the item count alone would let clients take gigabytes.
    static let byteBudget = 16 << 20

    /// What an item costs of ``byteBudget``.
    private static func cost(label: String, attributes: [String: String], secret: SecretValue) -> Int {
        label.utf8.count + attributes.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count } + secret.bytes.count
    }

    private static func cost(_ stored: Stored) -> Int {
        cost(label: stored.item.label, attributes: stored.item.attributes, secret: stored.secret)
    }

    /// Refuses a change that would take the collection past ``byteBudget``.
    private static func checkBudget(_ items: [String: Stored], adding: Int, removing: Int = 0) throws {
        let used = items.values.reduce(0) { $0 + cost($1) }
        guard used - removing + adding <= byteBudget else {
            throw DBusError.limitsExceeded("the session collection holds at most \(byteBudget >> 20) MiB; delete some of its items first")
        }
    }

    func search(_ attributes: [String: String], client: SecretServiceClient) throws -> (unlocked: [SecretItem], locked: [String]) {
        let found = items.withLock { items in
            items.values.filter { stored in
                client.caller.mayUse(group: stored.group) && attributes.allSatisfy { stored.item.attributes[$0.key] == $0.value }
            }.map(\.item)
        }
        // A generic client's items wait for the user's approval, as in the login keychain.
        let (waiting, open) = found.sorted { $0.created < $1.created }.partitioned { client.mustAsk(for: $0.id) }
        return (open, waiting.map(\.id))
    }

    func item(_ id: String, client: SecretServiceClient) throws -> SecretItem {
        var item = try stored(id, client: client).item
        item.needsPresence = client.mustAsk(for: id)
        return item
    }

    func secret(_ id: String, client: SecretServiceClient) throws -> SecretValue {
        guard !client.mustAsk(for: id) else { throw KeychainError.presenceRequired("a generic client reads a secret with the user's approval") }
        return try stored(id, client: client).secret
    }

    func create(label: String, attributes: [String: String], secret: SecretValue, replace: Bool, client: SecretServiceClient) throws -> (
        id: String, isNew: Bool
    ) {
        try SecretLimits.check(label: label, attributes: attributes)
        guard secret.bytes.count <= Keychain.maximumSecretBytes else {
            throw KeychainError.param("the secret is over \(Keychain.maximumSecretBytes) bytes")
        }
        let group = client.caller.defaultAccessGroup
        let cost = Self.cost(label: label, attributes: attributes, secret: secret)
        return try items.withLock { items in
            let now = Date()
            if replace, let existing = items.first(where: { $0.value.group == group && $0.value.item.attributes == attributes }) {
                try Self.checkBudget(items, adding: cost, removing: Self.cost(existing.value))
                items[existing.key]!.item.label = label
                items[existing.key]!.item.modified = now
                items[existing.key]!.secret = secret
                return (existing.key, false)
            }
            guard items.count < Self.capacity else { throw KeychainError.param("the session collection is full (\(Self.capacity) items)") }
            try Self.checkBudget(items, adding: cost)
            let id = String(Int64.random(in: 1...Int64.max))
            items[id] = Stored(
                item: SecretItem(id: id, label: label, attributes: attributes, created: now, modified: now), group: group, secret: secret)
            return (id, true)
        }
    }

    func update(_ id: String, label: String?, attributes: [String: String]?, client: SecretServiceClient) throws {
        try SecretLimits.check(label: label, attributes: attributes)
        try change(id, client: client) { stored in
            if let label { stored.item.label = label }
            if let attributes { stored.item.attributes = attributes }
        }
    }

    func setSecret(_ id: String, _ secret: SecretValue, client: SecretServiceClient) throws {
        guard secret.bytes.count <= Keychain.maximumSecretBytes else {
            throw KeychainError.param("the secret is over \(Keychain.maximumSecretBytes) bytes")
        }
        try change(id, client: client) { $0.secret = secret }
    }

    func delete(_ id: String, client: SecretServiceClient) throws {
        _ = try stored(id, client: client)
        items.withLock { _ = $0.removeValue(forKey: id) }
    }

    private func stored(_ id: String, client: SecretServiceClient) throws -> Stored {
        guard let stored = items.withLock({ $0[id] }), client.caller.mayUse(group: stored.group) else { throw KeychainError.itemNotFound }
        return stored
    }

    private func change(_ id: String, client: SecretServiceClient, _ body: (inout Stored) -> Void) throws {
        try items.withLock { items in
            guard var stored = items[id], client.caller.mayUse(group: stored.group) else { throw KeychainError.itemNotFound }
            let before = Self.cost(stored)
            body(&stored)
            try Self.checkBudget(items, adding: Self.cost(stored), removing: before)
            stored.item.modified = Date()
            items[id] = stored
        }
    }
}
