import FoundationEssentials
import TresorDBus
import TresorKeychain

/// `org.freedesktop.Secret.Collection` and `org.freedesktop.Secret.Item`.
extension SecretServiceProvider {
    func collectionMethod(_ member: String, of collection: any SecretCollection, _ request: SecretRequest, signals: inout [DBusMessage]) throws
        -> [DBusValue]
    {
        switch member {
        case "SearchItems":
            let attributes = try Self.attributeMap(request.arguments("a{ss}", member)[0])
            let found = try collection.search(attributes, client: request.client)
            return [.objectPaths(found.unlocked.map { itemPath(collection, $0.id) } + found.locked.map { itemPath(collection, $0) })]

        case "CreateItem":
            let arguments = try request.arguments("a{sv}(oayays)b", member)
            guard let properties = arguments[0].propertyDictionary else { throw DBusError.invalidArguments("properties are an a{sv} map") }
            let labelValue = properties["\(SecretInterface.item).Label"]
            // As `Properties.Set` answers it: a label of another type is refused, not taken as none.
            guard labelValue == nil || labelValue?.stringValue != nil else { throw DBusError.invalidArguments("Label is a string") }
            let label = labelValue?.stringValue ?? ""
            let attributes = try properties["\(SecretInterface.item).Attributes"].map(Self.attributeMap) ?? [:]
            let secret = try sessions.decode(arguments[1], for: request.sender)
            let group = request.caller.defaultAccessGroup
            switch try collection.store(
                label: label, attributes: attributes, secret: secret, replace: arguments[2].boolValue ?? false, client: request.client)
            {
            case .created(let id):
                signals += itemSignal("ItemCreated", collection: collection, id: id, group: group)
                return [.objectPath(itemPath(collection, id)), .objectPath(SecretObjectPath.none)]
            case .replaced(let id):
                signals += itemSignal("ItemChanged", collection: collection, id: id, group: group)
                return [.objectPath(itemPath(collection, id)), .objectPath(SecretObjectPath.none)]
            case .waitsForApproval(let id):
                let change = PendingChange(kind: .replace(label: label, secret: secret), collection: collection.name, id: id, client: request.client)
                if writesBackAnApprovedRead(change), let item = carryOut(change) {
                    logger.notice(
                        "a generic Secret Service client stored back, unchanged, what the user allowed it to read: not asked again",
                        metadata: ["executable": "\(request.client.executable)"])
                    return [item, .objectPath(SecretObjectPath.none)]
                }
                // The prompt's result is the item, once the user allowed the replacement.
                return [.objectPath(SecretObjectPath.none), .objectPath(try changePrompt(change, request))]
            }

        case "Delete":
            throw DBusError.accessDenied(
                "Tresor's collections are not deleted through the Secret Service (created keychains: `tresor keychain delete`)")

        default:
            throw DBusError.unknownMethod("Collection has no method \(member.prefix(64))")
        }
    }

    func itemMethod(_ member: String, id: String, of collection: any SecretCollection, _ request: SecretRequest, signals: inout [DBusMessage]) throws
        -> [DBusValue]
    {
        switch member {
        case "GetSecret":
            let session = try request.arguments("o", member)[0].stringValue ?? ""
            _ = try sessions.session(session, for: request.sender)
            let secret = try sessions.encode(try collection.secret(id, client: request.client), sessionPath: session, for: request.sender)
            consumeApproval(of: id, in: collection, request)
            secretRead?(request.client.executable)
            return [secret]

        case "SetSecret":
            let secret = try sessions.decode(try request.arguments("(oayays)", member)[0], for: request.sender)
            try requireUnlocked(id, of: collection, request)
            try collection.setSecret(id, secret, client: request.client)
            signals += itemSignal("ItemChanged", collection: collection, id: id, group: request.caller.defaultAccessGroup)
            return []

        case "Delete":
            _ = try request.arguments("", member)
            if request.client.mustAsk(for: id) {
                // The prompt is made for an item the client sees only: another program's is not there for it.
                let change = PendingChange(kind: .delete, collection: collection.name, id: id, client: request.client)
                return [.objectPath(try changePrompt(change, request))]
            }
            try collection.delete(id, client: request.client)
            signals += itemSignal("ItemDeleted", collection: collection, id: id, group: request.caller.defaultAccessGroup)
            return [.objectPath(SecretObjectPath.none)]

        default:
            throw DBusError.unknownMethod("Item has no method \(member.prefix(64))")
        }
    }

    /// Refuses a change to item `id` that the client may make only with the user's approval
    /// (a generic client the user does not trust now), as a locked item's: the client unlocks it
    /// first, and the user is asked then.
    /// - Throws: `KeychainError.itemNotFound` for an item that is not there for the client;
    ///   ``SecretServiceClient/lockedForAGenericClient`` for one it must ask for.
    func requireUnlocked(_ id: String, of collection: any SecretCollection, _ request: SecretRequest) throws {
        guard request.client.mustAsk(for: id) else { return }
        _ = try collection.item(id, client: request.client)
        throw request.client.lockedForAGenericClient
    }
}
