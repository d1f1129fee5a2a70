import FoundationEssentials
import TresorDBus
import TresorKeychain

/// `org.freedesktop.Secret.Service` at `/org/freedesktop/secrets`.
extension SecretServiceProvider {
    var collectionPaths: [String] {
        [CollectionName.login, CollectionName.session].map { SecretObjectPath.collection($0).path }
    }

    func service(_ member: String, _ request: SecretRequest) throws -> [DBusValue] {
        switch member {
        case "OpenSession":
            let arguments = try request.arguments("sv", member)
            let opened = try sessions.open(algorithm: arguments[0].stringValue ?? "", input: arguments[1], owner: request.sender)
            return [opened.output, .objectPath(opened.path)]

        case "SearchItems":
            let attributes = try Self.attributeMap(request.arguments("a{ss}", member)[0])
            var unlocked: [String] = []
            var locked: [String] = []
            for collection in [login, memory] as [any SecretCollection] {
                let found = try collection.search(attributes, client: request.client)
                unlocked += found.unlocked.map { itemPath(collection, $0.id) }
                locked += found.locked.map { itemPath(collection, $0) }
            }
            // Kept only while it found locked items: an unlock prompt names no other (and an
            // unlocked keybag's searches, the ones clients make all day, pay for nothing).
            lastSearches[request.sender] = locked.isEmpty ? nil : ClientSearch(attributes: attributes, locked: Set(locked))
            return [.objectPaths(unlocked), .objectPaths(locked)]

        case "GetSecrets":
            let arguments = try request.arguments("aoo", member)
            let session = arguments[1].stringValue ?? ""
            _ = try sessions.session(session, for: request.sender)
            var entries: [DBusValue] = []
            for path in arguments[0].objectPathList ?? [] {
                // Items the caller cannot see, or that are locked, are left out, as the
                // specification allows; a client asks about them one by one to learn why.
                guard let (collection, id) = itemReference(path), let secret = try? collection.secret(id, client: request.client) else { continue }
                entries.append(.dictEntry(.objectPath(path), try sessions.encode(secret, sessionPath: session, for: request.sender)))
                consumeApproval(of: id, in: collection, request)
            }
            if !entries.isEmpty { secretRead?(request.client.executable) }
            return [.array(elementSignature: "{o(oayays)}", entries)]

        case "Unlock":
            let objects = try request.arguments("ao", member)[0].objectPathList ?? []
            let known = existing(objects, request)
            guard login.isLocked else {
                // Unlocked: only items that need the user present wait, for their answer in `tresor approve`.
                let presence = needingPresence(known, request)
                guard !presence.paths.isEmpty else { return [.objectPaths(known), .objectPath(SecretObjectPath.none)] }
                let prompt = try prompts.presence(presence.paths, ids: presence.ids, description: presence.description, for: request.sender)
                return [.objectPaths(known.filter { !presence.paths.contains($0) }), .objectPath(prompt)]
            }
            // The session collection never locks; the rest waits for `tresor unlock`.
            let (open, waiting) = known.partitioned { Self.belongs($0, to: CollectionName.session) }
            guard !waiting.isEmpty else { return [.objectPaths(open), .objectPath(SecretObjectPath.none)] }
            let prompt = try prompts.unlock(waiting, for: request.sender)
            unlockRequests[prompt] = request
            logger.notice(
                "a Secret Service client waits for the keybag to be unlocked (`tresor unlock`)",
                metadata: ["executable": "\(request.client.executable)"])
            return [.objectPaths(open), .objectPath(prompt)]

        case "Lock":
            let objects = try request.arguments("ao", member)[0].objectPathList ?? []
            // What a Lock can lock is the login collection and its items: the keybag locks them
            // all. Asked for nothing of it (no object, or the session collection alone, which
            // never locks), it locks nothing and says so.
            let lockable = existing(objects, request).filter { !Self.belongs($0, to: CollectionName.session) }
            guard !lockable.isEmpty else { return [.objectPaths([]), .objectPath(SecretObjectPath.none)] }
            lockKeybag()
            connection.wake()
            return [.objectPaths(lockable), .objectPath(SecretObjectPath.none)]

        case "ReadAlias":
            let name = try request.arguments("s", member)[0].stringValue ?? ""
            guard let collection = SecretObjectPath.aliases[name] else { return [.objectPath(SecretObjectPath.none)] }
            return [.objectPath(SecretObjectPath.collection(collection).path)]

        case "SetAlias":
            let arguments = try request.arguments("so", member)
            // The aliases are fixed: `default` is the login keychain. Saying so again is fine.
            guard let name = arguments[0].stringValue, let current = SecretObjectPath.aliases[name],
                arguments[1].stringValue == SecretObjectPath.collection(current).path
            else {
                throw DBusError(
                    "org.freedesktop.DBus.Error.NotSupported",
                    "Tresor's aliases are fixed: default and login name the login keychain, session the in-memory collection")
            }
            return []

        case "CreateCollection":
            let arguments = try request.arguments("a{sv}s", member)
            // Every client gets the login keychain: Tresor keychains are created by the user
            // with `tresor keychain create`, each with a passcode of its own.
            let alias = arguments[1].stringValue ?? ""
            let name = SecretObjectPath.aliases[alias] ?? CollectionName.login
            return [.objectPath(SecretObjectPath.collection(name).path), .objectPath(SecretObjectPath.none)]

        default:
            throw DBusError.unknownMethod("Service has no method \(member.prefix(64))")
        }
    }

    /// An `a{ss}` attribute map, within the limits every collection has.
    static func attributeMap(_ value: DBusValue) throws -> [String: String] {
        guard let map = value.stringDictionary else { throw DBusError.invalidArguments("attributes are an a{ss} map") }
        try SecretLimits.check(label: nil, attributes: map)
        return map
    }

    /// The collections and items among `paths` that exist for the caller, in their order: as
    /// gnome-keyring does, `Lock` and `Unlock` leave any other object out of their answer. While
    /// the keybag is locked an item of the login keychain cannot be looked up: it is taken as named.
    func existing(_ paths: [String], _ request: SecretRequest) -> [String] {
        paths.filter { path in
            switch SecretObjectPath(path) {
            case .collection(let name)?:
                return (try? collection(name)) != nil
            case .item(let name, let id)?:
                guard let collection = try? collection(name) else { return false }
                return collection.isLocked || (try? collection.item(id, client: request.client)) != nil
            default:
                return false
            }
        }
    }

    static func belongs(_ path: String, to collection: String) -> Bool {
        switch SecretObjectPath(path) {
        case .collection(let name)?, .item(let name, _)?: return name == collection
        default: return false
        }
    }
}

extension Array {
    /// The elements that satisfy `belongs`, and the others, each in their order.
    func partitioned(by belongs: (Element) -> Bool) -> ([Element], [Element]) {
        var yes: [Element] = [], no: [Element] = []
        for element in self { if belongs(element) { yes.append(element) } else { no.append(element) } }
        return (yes, no)
    }
}
