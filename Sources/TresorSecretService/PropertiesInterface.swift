import FoundationEssentials
import TresorDBus
import TresorKeychain

/// `org.freedesktop.DBus.Properties` on every object.
extension SecretServiceProvider {
    func properties(_ member: String, of object: SecretObjectPath, _ request: SecretRequest, signals: inout [DBusMessage]) throws -> [DBusValue] {
        switch member {
        case "Get":
            let arguments = try request.arguments("ss", member)
            let all = try properties(of: object, interface: arguments[0].stringValue ?? "", request, only: arguments[1].stringValue)
            guard let value = all[arguments[1].stringValue ?? ""] else {
                throw DBusError.unknownProperty("no property \(arguments[1].stringValue?.prefix(64) ?? "") here")
            }
            return [.variant(value)]
        case "GetAll":
            return [.properties(try properties(of: object, interface: try request.arguments("s", member)[0].stringValue ?? "", request))]
        case "Set":
            let arguments = try request.arguments("ssv", member)
            try set(arguments[1].stringValue ?? "", to: arguments[2].unwrapped, on: object, request, signals: &signals)
            return []
        default:
            throw DBusError.unknownMethod("Properties has no method \(member.prefix(64))")
        }
    }

    /// Every property of `object` on `interface` ("" means its own interface) — or, given `only`,
    /// at least that one: a collection's `Items` and `Modified` read every item the client sees,
    /// which a client asking whether it is `Locked` (python-secretstorage, before each
    /// `CreateItem`) must not pay for.
    private func properties(
        of object: SecretObjectPath, interface: String, _ request: SecretRequest, only: String? = nil
    ) throws -> [String: DBusValue] {
        switch object {
        case .service where interface.isEmpty || interface == SecretInterface.service:
            return ["Collections": .objectPaths(collectionPaths)]
        case .collection(let name) where interface.isEmpty || interface == SecretInterface.collection:
            let collection = try collection(name)
            var all: [String: DBusValue] = [
                "Label": .string(collectionLabels.label(of: name)), "Locked": .boolean(collection.isLocked),
                "Created": .uint64(Self.seconds(collection.created)),
            ]
            guard only == nil || only == "Items" || only == "Modified" else { return all }
            let found = try collection.search([:], client: request.client)
            all["Items"] = .objectPaths(found.unlocked.map { itemPath(collection, $0.id) } + found.locked.map { itemPath(collection, $0) })
            all["Modified"] = .uint64(Self.seconds(found.unlocked.map(\.modified).max() ?? collection.created))
            return all
        case .item(let name, let id) where interface.isEmpty || interface == SecretInterface.item:
            let collection = try collection(name)
            let item: SecretItem
            do {
                item = try collection.item(id, client: request.client)
            } catch KeychainError.interactionNotAllowed {
                // Locked: its label, attributes and dates are sealed under a key the keybag holds
                // back. Every property is still answered (empty), as clients read them all:
                // libsecret asserts on a missing one.
                return [
                    "Locked": .boolean(true), "Attributes": .stringDictionary([:]), "Label": .string(""),
                    "Created": .uint64(0), "Modified": .uint64(0),
                ]
            }
            return [
                "Locked": .boolean(item.needsPresence), "Attributes": .stringDictionary(item.attributes), "Label": .string(item.label),
                "Created": .uint64(Self.seconds(item.created)), "Modified": .uint64(Self.seconds(item.modified)),
            ]
        case .session, .prompt:
            return [:]
        default:
            throw DBusError.unknownProperty("no properties of \(interface.prefix(128)) here")
        }
    }

    private func set(_ name: String, to value: DBusValue, on object: SecretObjectPath, _ request: SecretRequest, signals: inout [DBusMessage]) throws
    {
        if case .collection(let collectionName) = object {
            let collection = try collection(collectionName)
            guard name == "Label" else { throw DBusError.accessDenied("only a collection's Label can be changed") }
            guard let label = value.stringValue else { throw DBusError.invalidArguments("Label is a string") }
            try collectionLabels.rename(collection.name, to: label)
            signals.append(
                .signal(
                    path: SecretObjectPath.service.path, interface: SecretInterface.service, member: "CollectionChanged",
                    arguments: [.objectPath(SecretObjectPath.collection(collection.name).path)]))
            return
        }
        guard case .item(let collectionName, let id) = object else {
            throw DBusError.accessDenied("only a collection's Label and an item's Label and Attributes can be changed")
        }
        let collection = try collection(collectionName)
        try requireUnlocked(id, of: collection, request)
        switch name {
        case "Label":
            guard let label = value.stringValue else { throw DBusError.invalidArguments("Label is a string") }
            try collection.update(id, label: label, attributes: nil, client: request.client)
        case "Attributes":
            try collection.update(id, label: nil, attributes: try Self.attributeMap(value), client: request.client)
        default:
            throw DBusError.accessDenied("only an item's Label and Attributes can be changed")
        }
        signals += itemSignal("ItemChanged", collection: collection, id: id, group: request.caller.defaultAccessGroup)
    }

    private static func seconds(_ date: Date) -> UInt64 { UInt64(max(0, date.timeIntervalSince1970)) }
}
