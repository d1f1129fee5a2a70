import Foundation
import Hummingbird
import NIOCore
import TresorKeychain
import TresorProtocol

/// The keychain routes: add, search, update, delete (SPEC §3.1). Each request is answered for
/// the caller the daemon identified, never for the one a request claims to be. Attribute names
/// the keychain does not know are refused as the body is decoded (`DaemonJSON.decoder`).
struct ItemRoutes {
    let keychains: KeychainProvider
    let callers: CallerResolver

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.addItem)) { request, context -> KeychainItem in
            let body = try await request.decode(as: AddItemRequest.self, context: context)
            let caller = try callers.caller(for: try context.requireClient(), passcode: nil)
            if isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let item = try keychains.keychain(named: body.keychain).add(body.itemClass, attributes: body.attributes, secret: body.secret, caller: caller)
            context.logger.info("item added", metadata: ["class": "\(body.itemClass.rawValue)", "id": "\(item.id)"])
            return item
        }
        router.post(RouterPath(Route.searchItems)) { request, context -> ItemsResponse in
            let body = try await request.decode(as: SearchItemsRequest.self, context: context)
            return ItemsResponse(items: try await search(body.query, keychain: body.keychain, passcode: body.passcode, context))
        }
        // The secret of one item, without JSON either way (`ItemSecretQuery`): the search above,
        // answered with the raw bytes.
        router.get(RouterPath(Route.itemSecret)) { request, context -> Response in
            let (query, keychain) = try ItemSecretQuery.parse(request.uri.query ?? "")
            guard let secret = try await search(query, keychain: keychain, passcode: nil, context).first?.secret else {
                throw APIError(.itemNotFound, "no item matches")
            }
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: .init(byteBuffer: ByteBuffer(bytes: secret)))
        }
        router.post(RouterPath(Route.updateItems)) { request, context -> CountResponse in
            let body = try await request.decode(as: UpdateItemsRequest.self, context: context)
            if isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let caller = try callers.caller(for: try context.requireClient(), passcode: body.passcode)
            let keychain = try keychains.keychain(named: body.keychain)
            let count = try await offloaded { try keychain.update(body.query, changes: body.changes, secret: body.secret, caller: caller) }
            context.logger.info("items updated", metadata: ["class": "\(body.query.itemClass.rawValue)", "count": "\(count)"])
            return CountResponse(count: count)
        }
        router.post(RouterPath(Route.deleteItems)) { request, context -> CountResponse in
            let body = try await request.decode(as: DeleteItemsRequest.self, context: context)
            if isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let caller = try callers.caller(for: try context.requireClient(), passcode: nil)
            let keychain = try keychains.keychain(named: body.keychain)
            let count = try await offloaded { try keychain.delete(body.query, caller: caller) }
            context.logger.info("items deleted", metadata: ["class": "\(body.query.itemClass.rawValue)", "count": "\(count)"])
            return CountResponse(count: count)
        }
    }

    /// `SecItemCopyMatching` for the identified caller, in `keychain` (nil: the login keychain).
    private func search(_ query: ItemQuery, keychain name: String?, passcode: String?, _ context: DaemonRequestContext) async throws -> [KeychainItem] {
        if isSystemRoots(name) { return try keychains.systemRoots.copyMatching(query) }
        let caller = try callers.caller(for: try context.requireClient(), passcode: passcode)
        let keychain = try keychains.keychain(named: name)
        // A lookup by primary key takes microseconds: answered here, without the two thread
        // hand-offs of `offloaded`. A scan, or a passcode to check (one slow KDF run), must
        // not hold up this executor's thread.
        if passcode == nil, let items = try keychain.copyMatchingFromIndex(query, caller: caller) {
            return items
        }
        return try await offloaded { try keychain.copyMatching(query, caller: caller) }
    }

    /// The secret of the first item `query` matches in `keychain` (nil: the login keychain), for
    /// `client`, when a blind index answers it: the whole of `GET /v1/items/secret` when it is
    /// answered on the connection's event loop (``InlineRoutes``). Nil, with nothing read, when
    /// answering needs more — a scan, or the System Roots keychain: the routed handler answers then.
    func secretFromIndex(_ query: ItemQuery, keychain name: String?, client: Client) throws -> Data? {
        if isSystemRoots(name) { return nil }
        let caller = try callers.caller(for: client, passcode: nil)
        guard let items = try keychains.keychain(named: name).copyMatchingFromIndex(query, caller: caller) else { return nil }
        guard let secret = items.first?.secret else { throw APIError(.itemNotFound, "no item matches") }
        return secret
    }

    private func isSystemRoots(_ name: String?) -> Bool {
        name == KeychainName.systemRoots
    }
}

extension KeychainItem: ResponseEncodable {}
extension ItemsResponse: ResponseEncodable {}
extension CountResponse: ResponseEncodable {}
