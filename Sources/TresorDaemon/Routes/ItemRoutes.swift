import Foundation
import Hummingbird
import NIOCore
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSystem

/// The keychain routes: add, search, update, delete (docs/API.md, "Keychain items"). Each request
/// is answered for the caller the daemon identified, never for the one a request claims to be.
/// Attribute names the keychain does not know are refused as the body is decoded
/// (`DaemonJSON.decoder`).
struct ItemRoutes {
    let keychains: KeychainProvider
    let callers: CallerResolver
    /// Asks the user — on the desktop, else through `tresor approve` — for a secret that needs
    /// their presence.
    let questions: PresenceQuestions

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.addItem)) { request, context -> KeychainItem in
            var decoded = try await request.decode(as: AddItemRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            if isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let caller = try callers.caller(for: try context.requireClient(), passcode: passcode, keychain: body.keychain)
            let keychain = try keychains.keychain(named: body.keychain)
            // A passcode to check is one slow KDF run: not on this executor's thread.
            let add: @Sendable () throws -> KeychainItem = {
                try keychain.add(body.itemClass, attributes: body.attributes, secret: body.secret, caller: caller)
            }
            let item = passcode == nil ? try add() : try await offloaded(add)
            context.logger.info("item added", metadata: ["class": "\(body.itemClass.rawValue)", "id": "\(item.id)"])
            return item
        }
        router.post(RouterPath(Route.searchItems)) { request, context -> ItemsResponse in
            var body = try await request.decode(as: SearchItemsRequest.self, context: context)
            let passcode = try Passcode.taking(&body.passcode)
            return ItemsResponse(items: try await search(body.query, keychain: body.keychain, passcode: passcode, context))
        }
        // The secret of one item, without JSON either way (`ItemSecretQuery`): the search above,
        // answered with the raw bytes.
        router.get(RouterPath(Route.itemSecret)) { request, context -> Response in
            let (query, keychain, unique) = try ItemSecretQuery.parse(request.uri.query ?? "")
            let found = try await search(query, keychain: keychain, passcode: nil, context)
            let secret = try unique ? ItemSecretQuery.onlySecret(of: found) : ItemSecretQuery.onlySecret(of: Array(found.prefix(1)))
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: .init(byteBuffer: ByteBuffer(bytes: secret)))
        }
        // Every matching item's attributes, without JSON (`ItemAttributesList`): the search
        // above, by the secret route's query string.
        router.get(RouterPath(Route.itemAttributes)) { request, context -> Response in
            let (query, keychain) = try ItemSecretQuery.parseAttributesQuery(request.uri.query ?? "")
            let found = try await search(query, keychain: keychain, passcode: nil, context)
            return Response(
                status: .ok, headers: [.contentType: ItemAttributesList.contentType],
                body: .init(byteBuffer: ByteBuffer(bytes: ItemAttributesList.encode(found.compactMap(\.attributes)))))
        }
        router.post(RouterPath(Route.updateItems)) { request, context -> CountResponse in
            var decoded = try await request.decode(as: UpdateItemsRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            if isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let caller = try callers.caller(for: try context.requireClient(), passcode: passcode, keychain: body.keychain)
            let keychain = try keychains.keychain(named: body.keychain)
            let count = try await offloaded { try keychain.update(body.query, changes: body.changes, secret: body.secret, caller: caller) }
            context.logger.info("items updated", metadata: ["class": "\(body.query.itemClass.rawValue)", "count": "\(count)"])
            return CountResponse(count: count)
        }
        router.post(RouterPath(Route.deleteItems)) { request, context -> CountResponse in
            var decoded = try await request.decode(as: DeleteItemsRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            if isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let caller = try callers.caller(for: try context.requireClient(), passcode: passcode, keychain: body.keychain)
            let keychain = try keychains.keychain(named: body.keychain)
            let count = try await offloaded { try keychain.delete(body.query, caller: caller) }
            context.logger.info("items deleted", metadata: ["class": "\(body.query.itemClass.rawValue)", "count": "\(count)"])
            return CountResponse(count: count)
        }
    }

    /// `SecItemCopyMatching` for the identified caller, in `keychain` (nil: the login keychain).
    /// A secret that needs the user's presence, asked for without the passcode, is put to the
    /// user in the desktop's prompter, else through `tresor approve` when one is waiting
    /// (``PresenceQuestions``); the application learns only the answer.
    private func search(_ query: ItemQuery, keychain name: String?, passcode: Passcode?, _ context: DaemonRequestContext) async throws
        -> [KeychainItem]
    {
        if isSystemRoots(name) { return try keychains.systemRoots.copyMatching(query) }
        let client = try context.requireClient()
        var caller = try callers.caller(for: client, passcode: passcode, keychain: name)
        let keychain = try keychains.keychain(named: name)
        do {
            // A lookup by primary key takes microseconds: answered here, without the two thread
            // hand-offs of `offloaded`. A scan, or a passcode to check (one slow KDF run), must
            // not hold up this executor's thread.
            if passcode == nil, let items = try keychain.copyMatchingFromIndex(query, caller: caller) {
                return items
            }
            return try await offloaded { [caller] in try keychain.copyMatching(query, caller: caller) }
        } catch KeychainError.presenceRequired(let why) where passcode == nil && questions.anyoneToAsk {
            context.logger.notice("approvals: asking the user", metadata: ["application": "\(caller.defaultAccessGroup)"])
            switch await questions.ask(
                executable: client.executable, application: caller.defaultAccessGroup, item: Self.describe(query), pid: client.credentials.pid)
            {
            case .once, .forSession: break
            case .refused: throw KeychainError.presenceRequired(why + "; the user did not allow it")
            case .unanswered: throw KeychainError.presenceRequired(why + "; nobody answered the desktop's prompt in time")
            case .nobodyToAsk:
                throw KeychainError.presenceRequired(why + "; " + PresenceQuestions.nobodyToAsk)
            }
            caller.presenceConfirmed = true
            return try await offloaded { [caller] in try keychain.copyMatching(query, caller: caller) }
        }
    }

    /// An item as the user reads it in `tresor approve`: its class and what it was asked by.
    static func describe(_ query: ItemQuery) -> String {
        let named = query.attributes.identifying.map { String($0.prefix(200)) }
        return ([query.itemClass.rawValue] + named + (query.id.map { ["id=\($0)"] } ?? [])).joined(separator: ", ")
    }

    /// The secret of the first item `query` matches in `keychain` (nil: the login keychain), for
    /// `client`, when a blind index answers it: the whole of `GET /v1/items/secret` when it is
    /// answered on the connection's event loop (``InlineRoutes``). Nil, with nothing read, when
    /// answering needs more — a scan, or the System Roots keychain: the routed handler answers then.
    func secretFromIndex(_ query: ItemQuery, keychain name: String?, unique: Bool = false, client: Client) throws -> Data? {
        if isSystemRoots(name) { return nil }
        let caller = try callers.caller(for: client, passcode: nil, keychain: name)
        let found: [KeychainItem]?
        do {
            found = try keychains.keychain(named: name).copyMatchingFromIndex(query, caller: caller)
        } catch KeychainError.presenceRequired where questions.anyoneToAsk {
            return nil  // the routed handler asks the user
        }
        guard let items = found else { return nil }
        return try ItemSecretQuery.onlySecret(of: unique ? items : Array(items.prefix(1)))
    }

    /// The items `query` matches in `keychain` (nil: the login keychain), for `client`, when a
    /// blind index answers it: the whole of `POST /v1/items/search` without a passcode when it is
    /// answered on the connection's event loop (``InlineRoutes``). Nil, with nothing decrypted,
    /// when answering needs more — a scan, many candidates, the System Roots keychain, the
    /// user's presence to ask for: the routed handler answers then.
    func searchFromIndex(_ query: ItemQuery, keychain name: String?, client: Client) throws -> [KeychainItem]? {
        if isSystemRoots(name) { return nil }
        let caller = try callers.caller(for: client, passcode: nil, keychain: name)
        do {
            return try keychains.keychain(named: name).copyMatchingFromIndex(query, caller: caller)
        } catch KeychainError.presenceRequired where questions.anyoneToAsk {
            return nil  // the routed handler asks the user
        }
    }

    private func isSystemRoots(_ name: String?) -> Bool {
        name == KeychainName.systemRoots
    }
}

extension KeychainItem: ResponseEncodable {}
extension ItemsResponse: ResponseEncodable {}
extension CountResponse: ResponseEncodable {}
