import FoundationEssentials
import Synchronization
import TresorDBus
import TresorKeychain
import TresorModel

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

    /// The items, and what they cost of ``byteBudget`` together (kept as they change: a change
    /// costs no walk over every item).
    private struct Contents {
        var items: [String: Stored] = [:]
        var used = 0

        /// Puts `stored` under `id`, in place of what was there.
        /// - Throws: `LimitsExceeded` when that would take the collection past ``byteBudget``.
        mutating func put(_ stored: Stored, as id: String) throws {
            let after = used - (items[id].map(MemoryCollection.cost) ?? 0) + MemoryCollection.cost(stored)
            guard after <= byteBudget else {
                throw DBusError.limitsExceeded("the session collection holds at most \(ByteSize(byteBudget)); delete some of its items first")
            }
            items[id] = stored
            used = after
        }

        mutating func remove(_ id: String) {
            guard let removed = items.removeValue(forKey: id) else { return }
            used -= MemoryCollection.cost(removed)
        }
    }

    private let contents = Mutex(Contents())
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

    func search(_ attributes: [String: String], client: SecretServiceClient) throws -> (unlocked: [SecretItem], locked: [String]) {
        let found = contents.withLock { contents in
            contents.items.values.filter { stored in
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
        guard !client.mustAsk(for: id) else { throw client.lockedForAGenericClient }
        return try stored(id, client: client).secret
    }

    func create(label: String, attributes: [String: String], secret: SecretValue, client: SecretServiceClient) throws -> String {
        guard secret.bytes.count <= KeychainStore.maximumSecretBytes else {
            throw KeychainError.param("the secret is over \(KeychainStore.maximumSecretBytes) bytes")
        }
        let group = client.caller.defaultAccessGroup
        return try contents.withLock { contents in
            guard contents.items.count < Self.capacity else {
                throw KeychainError.param("the session collection is full (\(Self.capacity) items)")
            }
            let id = String(Int64.random(in: 1...Int64.max)), now = Date()
            try contents.put(
                Stored(item: SecretItem(id: id, label: label, attributes: attributes, created: now, modified: now), group: group, secret: secret),
                as: id)
            return id
        }
    }

    func existing(matching attributes: [String: String], client: SecretServiceClient) throws -> String? {
        let group = client.caller.defaultAccessGroup
        return contents.withLock { contents in
            // The oldest, as a search lists it first.
            contents.items.values.filter { $0.group == group && $0.item.attributes == attributes }.min { $0.item.created < $1.item.created }?.item.id
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
        guard secret.bytes.count <= KeychainStore.maximumSecretBytes else {
            throw KeychainError.param("the secret is over \(KeychainStore.maximumSecretBytes) bytes")
        }
        try change(id, client: client) { $0.secret = secret }
    }

    func delete(_ id: String, client: SecretServiceClient) throws {
        _ = try stored(id, client: client)
        contents.withLock { $0.remove(id) }
    }

    private func stored(_ id: String, client: SecretServiceClient) throws -> Stored {
        guard let stored = contents.withLock({ $0.items[id] }), client.caller.mayUse(group: stored.group) else {
            throw KeychainError.itemNotFound
        }
        return stored
    }

    private func change(_ id: String, client: SecretServiceClient, _ body: (inout Stored) -> Void) throws {
        try contents.withLock { contents in
            guard var stored = contents.items[id], client.caller.mayUse(group: stored.group) else { throw KeychainError.itemNotFound }
            body(&stored)
            stored.item.modified = Date()
            try contents.put(stored, as: id)
        }
    }
}
